// The native runtime's engine process: the same engine as the browser's worker, on Dawn (npm
// `webgpu`), driven by the CLI over the process's IPC channel. Started by bench/native.ts, which
// sets the Vulkan loader and ICD in its environment; nothing here searches for them.

import { join } from 'node:path';
import webgpuPackage from 'webgpu/package.json';
import { acquireGpu, type Gpu } from '../../gpu/device.ts';
import { serializeError } from '../../worker/api.ts';
import { createEngine } from '../engine.ts';
import { dawnLabel, type HostReply, type HostRequest } from '../rpc.ts';
import { dawnInstance } from './dawn-globals.ts';
import { fileTuningStore } from './tuning-file.ts';

/** The backend Dawn is asked for on each platform: the one a real GPU there is driven by. */
const BACKENDS: Partial<Record<NodeJS.Platform, string>> = {
  linux: 'vulkan',
  darwin: 'metal',
  win32: 'd3d12',
};
const backend = process.env.BENCH_DAWN_BACKEND || BACKENDS[process.platform] || 'vulkan';
const dawn = dawnLabel(webgpuPackage.version);

const instance = dawnInstance(backend);
const gpus: Gpu[] = [];
const engine = createEngine({
  acquireGpu: async () => {
    const gpu = await acquireGpu({ gpu: instance });
    gpus.push(gpu);
    return gpu;
  },
  userAgent: `Node ${process.version}; ${dawn}; ${backend}`,
  browser: async () => dawn,
  // Not a browser: there is no cross-origin isolation, and no timer coarsening to need it.
  crossOriginIsolated: false,
  runtime: { name: 'node', dawn, backend },
  tuningStore: fileTuningStore(join(process.cwd(), 'results', '.cache', 'tuning.json')),
});

function send(reply: HostReply): void {
  process.send?.(reply);
}

/** Destroys every device so Dawn holds no handle that keeps the process alive, then exits. */
function exit(code: number): never {
  for (const g of gpus) g.device.destroy();
  process.exit(code);
}

process.on('message', (raw: HostRequest) => {
  if (raw.type === 'exit') exit(0);
  const { id, method, args } = raw;
  const call = (): Promise<unknown> => {
    switch (method) {
      case 'gpuInfo':
        return engine.gpuInfo();
      case 'verify':
        return engine.verify(args[0] as Parameters<typeof engine.verify>[0]);
      case 'run':
        return engine.run(args[0], (progress) => send({ type: 'progress', id, progress }), args[1] as string);
      case 'cancel':
        return engine.cancel(args[0] as string | undefined);
    }
  };
  call().then(
    (value) => send({ type: 'result', id, value }),
    (e: unknown) => send({ type: 'error', id, error: serializeError(e) }),
  );
});
// The CLI went away (crashed or was killed): nothing will ask for results any more.
process.on('disconnect', () => exit(0));
