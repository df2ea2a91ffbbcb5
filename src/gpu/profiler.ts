import type { Gpu } from './device.ts';

/** One timed compute pass. */
export interface Span {
  label: string;
  ms: number;
  /** The raw difference in nanoseconds, to detect quantized timers. */
  ns: number;
}

/**
 * GPU time from timestamp queries: each compute pass it describes writes a begin and an end
 * timestamp. Reused across repetitions, so measuring allocates nothing after construction.
 * Without `timestamp-query` it hands out plain pass descriptors and `read()` returns no spans;
 * callers fall back to wall-clock time.
 */
export class GpuProfiler {
  readonly supported: boolean;
  private readonly querySet?: GPUQuerySet;
  private readonly resolveBuffer?: GPUBuffer;
  private readonly readBuffer?: GPUBuffer;
  private labels: string[] = [];

  constructor(
    gpu: Gpu,
    /** Most passes one measurement can time. */
    readonly capacity = 1024,
  ) {
    this.supported = gpu.hasTimestamps;
    if (!this.supported) return;
    const count = 2 * capacity;
    this.querySet = gpu.device.createQuerySet({ label: 'profiler timestamps', type: 'timestamp', count });
    this.resolveBuffer = gpu.device.createBuffer({
      label: 'profiler resolve',
      size: count * 8,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    this.readBuffer = gpu.device.createBuffer({
      label: 'profiler readback',
      size: count * 8,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
  }

  /** Starts a new measurement. */
  reset(): void {
    this.labels = [];
  }

  /** A compute-pass descriptor that records this pass's begin and end time under `label`. */
  pass(label: string): GPUComputePassDescriptor {
    if (!this.querySet) return { label };
    if (this.labels.length >= this.capacity) {
      throw new RangeError(`GpuProfiler: more than ${this.capacity} timed passes in one measurement`);
    }
    const i = this.labels.length;
    this.labels.push(label);
    return {
      label,
      timestampWrites: {
        querySet: this.querySet,
        beginningOfPassWriteIndex: 2 * i,
        endOfPassWriteIndex: 2 * i + 1,
      },
    };
  }

  /** Records the copy of this measurement's timestamps into the readback buffer; call before finish(). */
  resolve(encoder: GPUCommandEncoder): void {
    if (!this.querySet || !this.resolveBuffer || !this.readBuffer || this.labels.length === 0) return;
    const count = 2 * this.labels.length;
    encoder.resolveQuerySet(this.querySet, 0, count, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, count * 8);
  }

  /** Reads the spans of the last submitted measurement (waits for the GPU). */
  async read(): Promise<Span[]> {
    if (!this.readBuffer || this.labels.length === 0) return [];
    const count = 2 * this.labels.length;
    await this.readBuffer.mapAsync(GPUMapMode.READ, 0, count * 8);
    const times = new BigInt64Array(this.readBuffer.getMappedRange(0, count * 8).slice(0));
    this.readBuffer.unmap();
    return this.labels.map((label, i) => {
      // A pass whose end precedes its begin (seen on some drivers) carries no information.
      const ns = Math.max(0, Number(times[2 * i + 1] - times[2 * i]));
      return { label, ms: ns / 1e6, ns };
    });
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolveBuffer?.destroy();
    this.readBuffer?.destroy();
  }
}

/** How a forward pass should be timed: one span per pass, or one per kernel (profile mode). */
export interface Timing {
  profiler: GpuProfiler;
  perKernel: boolean;
}

/**
 * The tick of a quantized timer, if every span is a multiple of it. Browsers may round timestamps
 * (Chrome to 100 µs without developer features) to blunt timing attacks; such numbers are coarse.
 */
export function timerQuantumNs(spans: readonly Span[]): number | null {
  const ns = spans.map((s) => s.ns).filter((v) => v > 0);
  if (ns.length < 8) return null;
  for (const q of [1e6, 1e5, 1e4, 1e3]) if (ns.every((v) => v % q === 0)) return q;
  return null;
}
