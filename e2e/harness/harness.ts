import { acquireGpu } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import { measurePeaks } from '../../src/measure/peaks.ts';
import { EngineChecks } from './engine-checks.ts';
import { KernelChecks } from './kernel-checks.ts';
import { ModelChecks } from './model-checks.ts';

/** What Playwright reaches through `window.harness`. */
async function createHarness() {
  const gpu = await acquireGpu();
  return {
    adapter: gpu.adapter,
    features: gpu.features,
    kernels: new KernelChecks(gpu),
    model: new ModelChecks(gpu),
    engine: new EngineChecks(),
    peaks: () => measurePeaks(gpu, new PipelineCache(gpu)),
  };
}

declare global {
  interface Window {
    harness: Promise<Awaited<ReturnType<typeof createHarness>>>;
  }
}

window.harness = createHarness();
