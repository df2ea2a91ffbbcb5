import type { Gpu } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import { measurePeaks } from '../../src/measure/peaks.ts';
import { KernelChecks } from './kernel-checks.ts';
import { ModelChecks } from './model-checks.ts';
import { ServeChecks } from './serve-checks.ts';

/**
 * The checks every runtime runs on its own device: each kernel against the CPU reference through
 * the catalogue, and the model end to end. The browser's harness page and the Node harness process
 * build this same object; the tests reach it through e2e/harness/client.ts.
 */
export function createChecks(gpu: Gpu) {
  // One pipeline cache for every check: on SwiftShader a compile costs up to seconds, and the model
  // and serve checks build the same ci-tiny kernels (no check is about a cold compile).
  const pipelines = new PipelineCache(gpu);
  return {
    adapter: gpu.adapter,
    features: gpu.features,
    kernels: new KernelChecks(gpu, pipelines),
    model: new ModelChecks(gpu, pipelines),
    serve: new ServeChecks(gpu, pipelines),
    peaks: () => measurePeaks(gpu, new PipelineCache(gpu)),
  };
}

export type Checks = ReturnType<typeof createChecks>;
