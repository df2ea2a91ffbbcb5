import type { Gpu } from '../gpu/device.ts';
import type { GpuProfiler } from '../gpu/profiler.ts';
import { encodeCall, type KernelCall } from '../kernels/kernel.ts';
import { percentile } from './stats.ts';

/** Seeded data in [-1, 1). */
export function seededData(n: number, seed: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s >>> 8) / 8388608 - 1;
  }
  return out;
}

/**
 * Times single kernel calls for the autotuner and the kernel suite: inputs from seeded data, GPU
 * time from timestamps (wall clock when absent), median of `reps` after `warmup` runs.
 */
export class KernelTimer {
  private readonly buffers: GPUBuffer[] = [];
  constructor(
    private readonly gpu: Gpu,
    private readonly profiler: GpuProfiler,
    private readonly repeats: { warmup: number; reps: number },
  ) {}

  input(values: Float32Array<ArrayBuffer>): GPUBuffer {
    const b = this.output(values.length);
    this.gpu.device.queue.writeBuffer(b, 0, values);
    return b;
  }

  /** Restores an input (for kernels that work in place). */
  write(b: GPUBuffer, values: Float32Array<ArrayBuffer>): void {
    this.gpu.device.queue.writeBuffer(b, 0, values);
  }

  /** Integer inputs (token ids, positions, slots, block tables). */
  inputU32(values: readonly number[]): GPUBuffer {
    const b = this.output(values.length);
    this.gpu.device.queue.writeBuffer(b, 0, new Uint32Array(values));
    return b;
  }

  output(floats: number): GPUBuffer {
    const b = this.gpu.device.createBuffer({
      label: 'autotune',
      size: Math.max(16, floats * 4),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
    });
    this.buffers.push(b);
    return b;
  }

  async read(b: GPUBuffer, floats: number): Promise<Float32Array> {
    const staging = this.gpu.device.createBuffer({
      label: 'autotune readback',
      size: b.size,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    const enc = this.gpu.device.createCommandEncoder();
    enc.copyBufferToBuffer(b, 0, staging, 0, b.size);
    this.gpu.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Float32Array(staging.getMappedRange().slice(0, floats * 4));
    staging.destroy();
    return out;
  }

  async run(call: KernelCall): Promise<number> {
    this.profiler.reset();
    const enc = this.gpu.device.createCommandEncoder({ label: 'autotune' });
    const pass = enc.beginComputePass(this.profiler.pass('candidate'));
    encodeCall(pass, call);
    pass.end();
    this.profiler.resolve(enc);
    const t0 = performance.now();
    this.gpu.device.queue.submit([enc.finish()]);
    await this.gpu.device.queue.onSubmittedWorkDone();
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

  async time(call: KernelCall): Promise<number> {
    return percentile(await this.samples(call), 50);
  }

  destroy(): void {
    for (const b of this.buffers) b.destroy();
  }
}
