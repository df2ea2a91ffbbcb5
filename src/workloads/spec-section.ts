import type { PassCost } from '../measure/cost.ts';
import { place, type Roofs } from '../measure/roofline.ts';
import { type ClockInfo, type ClockSamples, chooseTimebase } from '../measure/samples.ts';
import type { BenchResult, Target } from '../results/schema.ts';
import type { Timebase } from '../spec/fields.ts';
import type { SpecResult, SpecRun, VerifyPoint } from '../spec/workloads/speculative-result.ts';
import { kneeOf, SPEEDUP_FORMULA } from '../speculative/predict.ts';
import { percentile } from '../stats.ts';

/** The verify-K curve's threshold: speculation pays while verifying k tokens costs at most this many decode steps. */
export const KNEE_RATIO = 1.5;

/**
 * A verify-curve record placed on the roofline. Verify and decode are compared in one clock: GPU
 * time where both have usable GPU samples, the wall clock otherwise.
 */
export function placeVerify(r: VerifyRecord, roofs: Roofs, clock: ClockInfo): VerifyPoint {
  const v = chooseTimebase(r.verify, clock);
  const d = chooseTimebase(r.decode, clock);
  const timebase: Timebase = v.timebase === 'gpu' && d.timebase === 'gpu' ? 'gpu' : 'wall';
  const verifySamplesMs = timebase === 'gpu' ? v.samplesMs : r.verify.wallMs;
  const decodeSamplesMs = timebase === 'gpu' ? d.samplesMs : r.decode.wallMs;
  const verifyMs = percentile(verifySamplesMs, 50);
  const decodeMs = percentile(decodeSamplesMs, 50);
  const placement = place(
    { flops: r.cost.flops, bytes: r.cost.bytes, dispatches: r.cost.dispatches, timebase },
    verifyMs,
    roofs,
  );
  return {
    k: r.k,
    depth: r.depth,
    reps: r.reps,
    timebase,
    verifyMs,
    decodeMs,
    ratio: decodeMs > 0 ? verifyMs / decodeMs : 0,
    verifySamplesMs,
    decodeSamplesMs,
    wallVerifyMs: percentile(r.verify.wallMs, 50),
    wallDecodeMs: percentile(r.decode.wallMs, 50),
    chunks: r.chunks,
    flops: r.cost.flops,
    bytes: r.cost.bytes,
    intensity: placement.intensity,
    gflops: placement.gflops,
    gbps: placement.gbps,
    bound: placement.bound,
    roofPct: placement.roofPct,
    predictedMs: placement.predictedMs,
  };
}

/** The speculative section: the curve, its knee at KNEE_RATIO, and the runs. */
export function speculativeResult(verifyCurve: VerifyPoint[], runs: SpecRun[]): SpecResult {
  const { knee, byDepth } = kneeOf(verifyCurve, KNEE_RATIO);
  return {
    verifyCurve,
    knee,
    kneeRatio: KNEE_RATIO,
    kneeByDepth: byDepth,
    runs,
    formula: SPEEDUP_FORMULA,
    clock:
      'wall: performance.now() in the engine worker around each awaited pass or step (submit, GPU work and the token readback the loop needs); the curve also by GPU timestamps where the adapter has them',
  };
}

/** One point of the verify-K curve: verify passes of k tokens and decode steps at one depth, interleaved. */
export interface VerifyRecord {
  type: 'verify';
  k: number;
  depth: number;
  reps: number;
  chunks: number;
  verify: ClockSamples;
  decode: ClockSamples;
  /** The verify pass's FLOPs and bytes (it is what goes on the roofline). */
  cost: PassCost;
}

/** One drafter on one prompt class, against plain decode of the same prompts; nothing to place. */
export interface SpecRunRecord {
  type: 'specRun';
  run: SpecRun;
}

/** Targets on the speculative section, judged against this run's own figures. */
export function specTargets(r: Omit<BenchResult, 'targets'>): Target[] {
  const out: Target[] = [];
  const spec = r.speculative;
  const four = spec?.verifyCurve.filter((p) => p.k === 4) ?? [];
  if (four.length > 0) {
    const worst = four.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    out.push({
      name: `verify of K = 4 tokens at depth ${worst.depth}`,
      target: '≤ 1.6 × one decode step (the issue sets it on smollm2-135m)',
      reached: `${worst.ratio.toFixed(2)} × (${worst.verifyMs.toFixed(2)} against ${worst.decodeMs.toFixed(2)} ms, ${worst.timebase} clock)`,
      met: worst.ratio <= 1.6,
    });
  }
  for (const run of spec?.runs.filter((x) => x.drafter === 'oracle:0.8' && x.k === 4 && !x.adaptiveK) ?? []) {
    const off =
      run.predictedSpeedup > 0 ? Math.abs(run.speedup - run.predictedSpeedup) / run.predictedSpeedup : 1;
    out.push({
      name: `oracle p = 0.8 (synthetic), K = 4, ${run.promptClass} prompts`,
      target: 'speedup ≥ 1.8× and within 20% of the predicted speedup',
      reached: `${run.speedup.toFixed(2)}× measured, ${run.predictedSpeedup.toFixed(2)}× predicted (${(off * 100).toFixed(0)}% apart)`,
      met: run.speedup >= 1.8 && off <= 0.2,
    });
  }
  return out;
}
