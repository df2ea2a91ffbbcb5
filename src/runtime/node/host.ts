// The native runtime's engine process: the same engine as the browser's worker, on Dawn (npm
// `webgpu`), driven by the CLI over the process's IPC channel. Started by bench/native.ts, which
// sets the Vulkan loader and ICD in its environment; nothing here searches for them.

import { join } from 'node:path';
import webgpuPackage from 'webgpu/package.json';
import { acquireGpu, type Gpu } from '../../gpu/device.ts';
import { createEngine } from '../engine.ts';
import { dawnLabel, type HostRequest } from '../rpc.ts';
import { installDiskAssetReader } from './asset-files.ts';
import { dawnInstance } from './dawn-globals.ts';
import { serveIpc } from './ipc-server.ts';
import { fileTuningStore } from './tuning-file.ts';

installDiskAssetReader();

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
  // BENCH_CACHE_DIR moves what the tool keeps between runs (the tests point it at a folder of their own).
  tuningStore: fileTuningStore(
    join(process.env.BENCH_CACHE_DIR ?? join(process.cwd(), 'results', '.cache'), 'tuning.json'),
  ),
});

serveIpc<HostRequest & { type: 'call' }>(
  ({ method, args }, progress) => {
    switch (method) {
      case 'gpuInfo':
        return engine.gpuInfo();
      case 'verify':
        return engine.verify(args[0] as Parameters<typeof engine.verify>[0]);
      case 'generate':
        return engine.generate(args[0] as Parameters<typeof engine.generate>[0], progress, args[1] as string);
      case 'run':
        return engine.run(args[0], progress, args[1] as string, args[2] as number[] | undefined);
      case 'takeProbe':
        return engine.takeProbe(args[0] as string);
      case 'cancel':
        return engine.cancel(args[0] as string | undefined);
    }
  },
  () => {
    for (const g of gpus) g.device.destroy();
  },
);
