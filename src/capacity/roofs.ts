import { InputError } from '../errors.ts';
import { bestPeaks } from '../measure/peaks.ts';
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
  const peaks = result.peaksAfter ? bestPeaks(result.peaks, result.peaksAfter) : result.peaks;
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
