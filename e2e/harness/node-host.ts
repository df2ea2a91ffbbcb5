// The Node side of the shared check harness: the same checks as the browser's harness page, on
// Dawn, in a process the tests start (e2e/harness/client.ts) with the Vulkan environment set.

import { acquireGpu } from '../../src/gpu/device.ts';
import { dawnInstance } from '../../src/runtime/node/dawn-globals.ts';
import { serializeError } from '../../src/worker/api.ts';
import { createChecks } from './checks.ts';
import type { HarnessReply, HarnessRequest } from './protocol.ts';

const gpu = await acquireGpu({ gpu: dawnInstance('vulkan') });
const checks = createChecks(gpu);

function send(reply: HarnessReply): void {
  process.send?.(reply);
}

process.on('message', (request: HarnessRequest) => {
  if (request.type === 'exit') {
    gpu.device.destroy();
    process.exit(0);
  }
  const { id, target, method, args } = request;
  const run = async () => {
    const owner = checks[target] as unknown as Record<string, (...a: unknown[]) => unknown>;
    if (typeof owner[method] !== 'function') throw new Error(`no check ${target}.${method}`);
    return owner[method](...args);
  };
  run().then(
    (value) => send({ type: 'result', id, value }),
    (e: unknown) => send({ type: 'error', id, error: serializeError(e) }),
  );
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', adapter: checks.adapter });
