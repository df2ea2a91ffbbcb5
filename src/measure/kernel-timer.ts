import type { GpuProfiler } from '../gpu/profiler.ts';
import { encodeCall, type KernelCall } from '../kernels/kernel.ts';
import type { KernelRig } from '../kernels/rig.ts';
import { percentile } from './stats.ts';

/**
 * Times single kernel calls for the autotuner and the kernel suite, on inputs a kernel rig holds:
 * GPU time from timestamps (wall clock when absent), `reps` samples after `warmup` runs.
 */
export class KernelTimer {
  constructor(
    private readonly rig: KernelRig,
    private readonly profiler: GpuProfiler,
    private readonly repeats: { warmup: number; reps: number },
  ) {}

  /** One run of `call` alone in a timed pass, ms. */
  private async run(call: KernelCall): Promise<number> {
    const { device } = this.rig.gpu;
    this.profiler.reset();
    const enc = device.createCommandEncoder({ label: `timed ${call.kernel}` });
    const pass = enc.beginComputePass(this.profiler.pass(call.kernel));
    encodeCall(pass, call);
    pass.end();
    this.profiler.resolve(enc);
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    const wall = performance.now() - t0;
    const spans = await this.profiler.read();
    return spans.length > 0 && spans[0].ms > 0 ? spans[0].ms : wall;
  }

  /** Every measured sample, ms. */
  async samples(call: KernelCall): Promise<number[]> {
    for (let r = 0; r < this.repeats.warmup; r++) await this.run(call);
    const times: number[] = [];
    for (let r = 0; r < this.repeats.reps; r++) times.push(await this.run(call));
    return times;
  }

  /** The median sample, ms. */
  async time(call: KernelCall): Promise<number> {
    return percentile(await this.samples(call), 50);
  }
}
