import { InternalError } from '../errors.ts';
import type { Gpu } from './device.ts';

/** One timed compute pass. */
export interface Span {
  label: string;
  /** end − begin in nanoseconds, as the timestamps say; zero or negative when they cannot be trusted. */
  ns: number;
  /** ns / 1e6. */
  ms: number;
}

/** A span the timestamps could measure: a pass whose end is not at or before its begin. */
export function spanValid(s: Span): boolean {
  return s.ns > 0;
}

/**
 * GPU time from timestamp queries: each compute pass it describes writes a begin and an end
 * timestamp into its query set. Timestamps stay in the query set until `read()`, which resolves and
 * maps them in a submit of its own, so a measurement of many passes (a whole generation) reads back
 * once, after the timed span has closed: the readback never sits inside what it measures.
 * Without `timestamp-query` it hands out plain pass descriptors and `read()` returns no spans;
 * callers fall back to wall-clock time.
 */
export class GpuProfiler {
  readonly supported: boolean;
  private readonly querySet?: GPUQuerySet;
  private readonly resolveBuffer?: GPUBuffer;
  private readonly readBuffer?: GPUBuffer;
  private labels: string[] = [];
  /** Passes already resolved into the readback buffer by `resolve(encoder)`. */
  private resolved = 0;
  private reading = false;

  constructor(
    private readonly gpu: Gpu,
    /** Most passes one measurement can time (a query set holds at most 4096 timestamps). */
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
    this.resolved = 0;
  }

  /** Passes recorded in this measurement so far. */
  get passes(): number {
    return this.labels.length;
  }

  /** A compute-pass descriptor that records this pass's begin and end time under `label`. */
  pass(label: string): GPUComputePassDescriptor {
    if (!this.querySet) return { label };
    if (this.labels.length >= this.capacity) {
      throw new InternalError(`GpuProfiler: more than ${this.capacity} timed passes in one measurement`);
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

  /**
   * Records the resolve of this measurement's timestamps into `encoder`, for a measurement that is
   * one submit anyway (a kernel timed alone). Without it, `read()` resolves in a submit of its own.
   */
  resolve(encoder: GPUCommandEncoder): void {
    if (!this.querySet || !this.resolveBuffer || !this.readBuffer || this.labels.length === 0) return;
    const count = 2 * this.labels.length;
    encoder.resolveQuerySet(this.querySet, 0, count, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, count * 8);
    this.resolved = this.labels.length;
  }

  /**
   * Reads the spans of every pass recorded since `reset()`, in order (waits for the GPU). Two reads
   * at once would map one buffer twice, so a second concurrent read is refused.
   */
  async read(): Promise<Span[]> {
    if (!this.querySet || !this.resolveBuffer || !this.readBuffer || this.labels.length === 0) return [];
    if (this.reading) throw new InternalError('GpuProfiler.read: a read is already in flight');
    this.reading = true;
    try {
      const count = 2 * this.labels.length;
      if (this.resolved !== this.labels.length) {
        const encoder = this.gpu.device.createCommandEncoder({ label: 'profiler resolve' });
        this.resolve(encoder);
        this.gpu.device.queue.submit([encoder.finish()]);
      }
      await this.readBuffer.mapAsync(GPUMapMode.READ, 0, count * 8);
      const times = new BigInt64Array(this.readBuffer.getMappedRange(0, count * 8).slice(0));
      this.readBuffer.unmap();
      return this.labels.map((label, i) => {
        const ns = Number(times[2 * i + 1] - times[2 * i]);
        return { label, ns, ms: ns / 1e6 };
      });
    } finally {
      this.reading = false;
    }
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
 * Ticks a quantizing timer may use, coarsest first: decimal ones (Chrome rounds to 100 µs without
 * developer features) and powers of two from 2^20 down to 2^10 ns (Dawn natively masks the low bits:
 * 65,536 ns on SwiftShader with webgpu 0.6.2).
 */
const TIMER_QUANTA_NS = [
  2 ** 20,
  1e6,
  2 ** 19,
  2 ** 18,
  2 ** 17,
  1e5,
  2 ** 16,
  2 ** 15,
  2 ** 14,
  1e4,
  2 ** 13,
  2 ** 12,
  2 ** 11,
  2 ** 10,
  1e3,
];

/**
 * The tick of a quantized timer, if every span is a multiple of it: the coarsest such tick. Timers
 * are rounded to blunt timing attacks; such numbers are coarse. Eight or more spans that are all
 * multiples of 1,000 or 1,024 ns by chance would be a one-in-10^24 event.
 */
export function timerQuantumNs(spans: readonly Span[]): number | null {
  const ns = spans.filter(spanValid).map((s) => s.ns);
  if (ns.length < 8) return null;
  return TIMER_QUANTA_NS.find((q) => ns.every((v) => v % q === 0)) ?? null;
}
