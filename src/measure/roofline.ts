import type { Bound, Timebase } from '../spec/fields.ts';

/**
 * Weights smaller than this may sit in a GPU's last-level cache (AMD's Infinity Cache reaches
 * 256 MiB on MI300, Apple's SLC 96 MiB), so decode over them may measure cache, not DRAM,
 * bandwidth: the run warns, and the decode bandwidth target is not judged.
 */
export const DRAM_BOUND_MIN_BYTES = 256 * 2 ** 20;

/** The measured roofs a point is judged against. */
export interface Roofs {
  fmaGflops: number;
  copyGBps: number;
  /** One more dependent dispatch with bound buffers, µs. */
  dispatchUs: number;
  /** A submit with a 4-byte readback, µs. */
  submitUs: number;
}

export interface Placement {
  intensity: number;
  gflops: number;
  gbps: number;
  bound: Bound;
  roofPct: number;
  predictedMs: number;
  predictionErrorPct: number;
}

/** What a measured span contains, so the overhead floor counts exactly that. */
export interface Work {
  flops: number;
  bytes: number;
  /** Dispatches inside the span. */
  dispatches: number;
  /**
   * The clock that measured it. A wall-clock span also holds one submit and its readback; a GPU
   * span (begin to end of the passes) does not, so its overhead floor is the dispatches alone.
   */
  timebase: Timebase;
}

/**
 * Places a measured span on the roofline. The time floor of each roof is
 *   compute   = FLOPs / peak FLOP/s
 *   bandwidth = bytes / peak bytes/s
 *   overhead  = dispatches · dispatch cost (+ one submit with readback, on the wall clock)
 * The span is bound by whichever floor is largest: the resource that would still limit it if
 * everything else were free. roofPct is that floor over the measured time, the share of the binding
 * roof it reaches (for compute: achieved GFLOP/s over peak GFLOP/s). A tiny kernel whose launch
 * costs more than its work is therefore overhead-bound, not "bandwidth-bound at 1%".
 * The cost model's prediction is max(compute, bandwidth) + overhead: work overlaps, launches do not.
 */
export function place(work: Work, measuredMs: number, roofs: Roofs): Placement {
  const { flops, bytes } = work;
  const computeMs = flops / (roofs.fmaGflops * 1e6);
  const memoryMs = bytes / (roofs.copyGBps * 1e6);
  const submitUs = work.timebase === 'wall' ? roofs.submitUs : 0;
  const overheadMs = (work.dispatches * roofs.dispatchUs + submitUs) / 1000;
  const floors: [Bound, number][] = [
    ['compute', computeMs],
    ['bandwidth', memoryMs],
    ['overhead', overheadMs],
  ];
  const [bound, floorMs] = floors.reduce((a, b) => (b[1] > a[1] ? b : a));
  const predictedMs = Math.max(computeMs, memoryMs) + overheadMs;
  return {
    intensity: bytes > 0 ? flops / bytes : 0,
    gflops: measuredMs > 0 ? flops / (measuredMs * 1e6) : 0,
    gbps: measuredMs > 0 ? bytes / (measuredMs * 1e6) : 0,
    bound,
    roofPct: measuredMs > 0 ? (100 * floorMs) / measuredMs : 0,
    predictedMs,
    predictionErrorPct: predictedMs > 0 ? ((measuredMs - predictedMs) / predictedMs) * 100 : 0,
  };
}
