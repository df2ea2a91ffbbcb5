import type { Bound } from '../results/schema.ts';

/** The measured roofs a point is judged against. */
export interface Roofs {
  fmaGflops: number;
  copyGBps: number;
  dispatchUs: number;
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

/**
 * Places a measured pass on the roofline. The time floor of each roof is
 *   compute   = FLOPs / peak FLOP/s
 *   bandwidth = bytes / peak bytes/s
 *   overhead  = dispatches · dispatch cost + one submit with readback
 * The pass is bound by whichever floor is largest: that is the resource that would still limit it
 * if everything else were free. roofPct is that floor over the measured time, i.e. the share of
 * the binding roof the pass reaches (for compute: achieved GFLOP/s over peak GFLOP/s).
 * The cost model's prediction is max(compute, bandwidth) + overhead: work overlaps, launches do not.
 */
export function placeOnRoofline(
  flops: number,
  bytes: number,
  dispatches: number,
  measuredMs: number,
  roofs: Roofs,
): Placement {
  const computeMs = flops / (roofs.fmaGflops * 1e6);
  const memoryMs = bytes / (roofs.copyGBps * 1e6);
  const overheadMs = (dispatches * roofs.dispatchUs + roofs.submitUs) / 1000;
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

/**
 * A kernel timed alone has no submit or dispatch overhead to speak of (GPU timestamps bracket it),
 * so it is judged against the compute and bandwidth roofs only.
 */
export function placeKernel(flops: number, bytes: number, measuredMs: number, roofs: Roofs) {
  const computeMs = flops / (roofs.fmaGflops * 1e6);
  const memoryMs = bytes / (roofs.copyGBps * 1e6);
  return {
    bound: computeMs >= memoryMs ? ('compute' as const) : ('bandwidth' as const),
    roofPct: measuredMs > 0 ? (100 * Math.max(computeMs, memoryMs)) / measuredMs : 0,
  };
}
