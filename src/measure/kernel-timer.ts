import type { GpuProfiler, Span } from '../gpu/profiler.ts';
import { encodeCall, type KernelCall } from '../kernels/kernel.ts';
import type { KernelRig } from '../kernels/rig.ts';
import { percentile } from '../stats.ts';
import type { ClockSamples } from './samples.ts';
import { PointSamples } from './samples.ts';

/** A kernel call, or the dispatches of one op that takes several (timed as one span). */
type Timed = KernelCall | readonly KernelCall[];

/**
 * Times single kernel calls for the autotuner and the kernel suite, on inputs a kernel rig holds:
 * each run is one submit of one timed pass, waited on; both clocks are kept, `reps` samples after
 * `warmup` runs.
 */
export class KernelTimer {
  constructor(
    private readonly rig: KernelRig,
    private readonly profiler: GpuProfiler,
    private readonly repeats: { warmup: number; reps: number },
  ) {}

  /** One run of `call` (or of its dispatches, in order) alone in a timed pass: its wall time and its GPU span. */
  private async run(call: Timed): Promise<{ wallMs: number; spans: Span[] }> {
    const { device } = this.rig.gpu;
    const calls = [call].flat();
    this.profiler.reset();
    const enc = device.createCommandEncoder({ label: `timed ${calls[0].kernel}` });
    const pass = enc.beginComputePass(this.profiler.pass(calls[0].kernel));
    for (const c of calls) encodeCall(pass, c);
    pass.end();
    this.profiler.resolve(enc);
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    const wallMs = performance.now() - t0;
    return { wallMs, spans: await this.profiler.read() };
  }

  /** One sample per measured run, in both clocks (a non-positive GPU span voids the GPU samples). */
  async samples(call: Timed): Promise<ClockSamples> {
    for (let r = 0; r < this.repeats.warmup; r++) await this.run(call);
    const samples = new PointSamples(this.profiler.supported);
    for (let r = 0; r < this.repeats.reps; r++) {
      const { wallMs, spans } = await this.run(call);
      samples.add(wallMs, spans);
    }
    return samples.result();
  }

  /** The median sample, ms: GPU time where every span was valid, else wall time. */
  async time(call: Timed): Promise<number> {
    const s = await this.samples(call);
    return percentile(s.gpuMs ?? s.wallMs, 50);
  }
}
