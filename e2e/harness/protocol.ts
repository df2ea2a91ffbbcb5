import type { AdapterRecord } from '../../src/gpu/device.ts';
import type { SerializedError } from '../../src/runtime/api.ts';

/** Messages between the tests and the Node harness process. */
export type HarnessRequest =
  | { type: 'call'; id: number; target: 'kernels' | 'model' | 'serve'; method: string; args: unknown[] }
  | { type: 'exit' };

export type HarnessReply =
  | { type: 'ready'; adapter: AdapterRecord }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: SerializedError };
