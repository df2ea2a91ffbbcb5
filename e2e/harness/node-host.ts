// The Node side of the shared check harness: the same checks as the browser's harness page, on
// Dawn, in a process the tests start (e2e/harness/client.ts) with the Vulkan environment set.

import { acquireGpu } from '../../src/gpu/device.ts';
import { dawnInstance } from '../../src/runtime/node/dawn-globals.ts';
import { serveIpc } from '../../src/runtime/node/ipc-server.ts';
import { createChecks } from './checks.ts';
import type { HarnessReply, HarnessRequest } from './protocol.ts';

const gpu = await acquireGpu({ gpu: dawnInstance('vulkan') });
const checks = createChecks(gpu);

serveIpc<HarnessRequest & { type: 'call' }>(
  async ({ target, method, args }) => {
    const owner = checks[target] as unknown as Record<string, (...a: unknown[]) => unknown>;
    if (typeof owner[method] !== 'function') throw new Error(`no check ${target}.${method}`);
    return owner[method](...args);
  },
  () => gpu.device.destroy(),
);
process.send?.({ type: 'ready', adapter: checks.adapter } satisfies HarnessReply);
