import type { BenchResult, PeaksRecord as Peaks, Point, Target } from '../results/schema.ts';
import type { BatchScalingPoint } from '../spec/workloads/decode.ts';

/**
 * The B-scaling curve from decode points of several batch sizes at one depth: each step's median
 * against its roofline bound, max(FLOPs ÷ FMA peak, bytes ÷ copy bandwidth) + the measured submit
 * overhead, all from the run's own roofs. One point per batch (the shallowest depth if several).
 */
export function batchScaling(points: readonly Point[], peaks: Peaks): BatchScalingPoint[] {
  const decode = points.filter((p) => p.pass === 'decode');
  const batches = [...new Set(decode.map((p) => p.batch))].sort((a, b) => a - b);
  if (batches.length < 2) return [];
  return batches.map((batch) => {
    const p = decode.filter((q) => q.batch === batch).sort((a, b) => a.depth - b.depth)[0];
    const boundMs =
      Math.max(p.flops / (peaks.fmaGflops * 1e6), p.bytes / (peaks.copyGBps * 1e6)) + peaks.submitUs / 1000;
    return {
      batch,
      stepMs: p.medianMs,
      tokensPerSec: (batch * 1000) / p.medianMs,
      boundMs,
      ratio: p.medianMs / boundMs,
    };
  });
}

/** Targets on the B-scaling section, judged against this run's own figures. */
export function batchTargets(r: Omit<BenchResult, 'targets'>): Target[] {
  const out: Target[] = [];
  for (const p of r.batchScaling?.filter((x) => x.batch === 8) ?? []) {
    out.push({
      name: 'decode step of B = 8 sequences',
      target: '≤ 1.5 × its roofline bound (the issue sets it on smollm2-135m)',
      reached: `${p.ratio.toFixed(2)} × (${p.stepMs.toFixed(1)} against ${p.boundMs.toFixed(1)} ms)`,
      met: p.ratio <= 1.5,
    });
  }
  return out;
}
