import { CancelledError } from '../../src/errors.ts';
import { acquireGpu, type Gpu } from '../../src/gpu/device.ts';
import { type RunEnvironment, runBench } from '../../src/run/run.ts';
import { specFromOptions } from '../../src/spec/options.ts';

const ENV: RunEnvironment = {
  userAgent: navigator.userAgent,
  browser: 'harness',
  crossOriginIsolated: self.crossOriginIsolated,
  toolVersion: 'test',
  runtime: { name: 'browser', dawn: null, backend: null },
};

/** A short prefill sweep on ci-tiny with the default kernels: three points, a few seconds. */
const SPEC = specFromOptions(
  { kind: 'preset', preset: 'ci-tiny', seed: 0 },
  { prefill: [16, 32, 64], depths: [], autotune: false },
);

/** What a failure test needs to see of a result. */
function outcome(r: Awaited<ReturnType<typeof runBench>>) {
  return { status: r.status, error: r.error ?? null, points: r.points.map((p) => p.tokens) };
}

/**
 * Failure paths of a whole run, each on a device of its own (a destroyed device cannot be reused).
 * They run the engine in the page, as the worker does, so a test can reach into the device.
 */
export class EngineChecks {
  /** The device is destroyed as the first point lands: the run must fail with DeviceLostError, keeping that point. */
  async lostDeviceMidRun() {
    const gpu = await acquireGpu();
    let destroyed = false;
    const result = await runBench(gpu, SPEC, ENV, {
      onProgress: (p) => {
        if (p.point && !destroyed) {
          destroyed = true;
          gpu.device.destroy();
        }
      },
    });
    return outcome(result);
  }

  /**
   * Out of GPU memory at the second point. A software adapter on a machine with tens of GB cannot be
   * driven out of memory safely, so the device's out-of-memory error scope is made to report one, as
   * a GPU would for an allocation it cannot back; everything after that is the engine's own path.
   */
  async outOfMemoryMidRun() {
    const gpu = await acquireGpu();
    let points = 0;
    injectOutOfMemory(gpu, () => points >= 1);
    const result = await runBench(gpu, SPEC, ENV, {
      onProgress: (p) => {
        if (p.point) points++;
      },
    });
    gpu.device.destroy();
    return outcome(result);
  }

  /** A cancel before the run starts: a cancelled result with nothing measured. */
  async cancelBeforeStart() {
    const gpu = await acquireGpu();
    const controller = new AbortController();
    controller.abort(new CancelledError('cancelled before the start'));
    const result = await runBench(gpu, SPEC, ENV, { signal: controller.signal });
    gpu.device.destroy();
    return outcome(result);
  }
}

/** Makes the device's out-of-memory error scopes report an error once `when()` holds. */
function injectOutOfMemory(gpu: Gpu, when: () => boolean): void {
  const device = gpu.device;
  const scopes: GPUErrorFilter[] = [];
  const push = device.pushErrorScope.bind(device);
  const pop = device.popErrorScope.bind(device);
  device.pushErrorScope = (filter: GPUErrorFilter) => {
    scopes.push(filter);
    push(filter);
  };
  device.popErrorScope = async () => {
    const filter = scopes.pop();
    const real = await pop();
    if (filter === 'out-of-memory' && when()) return new GPUOutOfMemoryError('injected: allocation failed');
    return real;
  };
}
