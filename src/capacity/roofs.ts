import { InputError } from '../errors.ts';
import type { BenchResult } from '../results/schema.ts';

/** Roofs of one GPU for the estimator, in its units. */
export interface CapacityRoofs {
  peakTflops: number;
  bandwidthGBs: number;
  roofsSource: string;
}

/**
 * The roofs a saved run measured: the FMA peak and the copy bandwidth, best of the measurements
 * before and after the workloads (as the targets are judged). A run that never measured them
 * (it failed first) is rejected by name rather than read as zero.
 */
export function roofsFromResult(result: BenchResult, fileName: string): CapacityRoofs {
  // The higher of before and after, as measure/peaks.ts bestPeaks judges targets (not imported:
  // that module carries the WGSL probes, and this one must load in plain Node for the CLI).
  const peaks = {
    fmaGflops: Math.max(result.peaks.fmaGflops, result.peaksAfter?.fmaGflops ?? 0),
    copyGBps: Math.max(result.peaks.copyGBps, result.peaksAfter?.copyGBps ?? 0),
  };
  if (!(peaks.fmaGflops > 0) || !(peaks.copyGBps > 0)) {
    throw new InputError(
      `roofs: ${fileName} has no measured roofs (peaks.fmaGflops ${peaks.fmaGflops}, peaks.copyGBps ${peaks.copyGBps}); use a result of a run that completed its roof measurement`,
    );
  }
  const adapter = result.env.adapter;
  return {
    peakTflops: peaks.fmaGflops / 1000,
    bandwidthGBs: peaks.copyGBps,
    roofsSource: `${fileName} (${adapter.description || adapter.device || adapter.vendor || 'adapter'}: f32 FMA and copy, measured by this tool)`,
  };
}
