import { formatPerLayer } from '../markdown.ts';
import { DRAM_BOUND_MIN_BYTES, type Roofs } from '../measure/roofline.ts';
import type { BenchResult } from '../results/schema.ts';
import { QUALITY_SLICES } from '../spec/workloads/formats.ts';

/** One performance target, judged against roofs measured in the same run. */
export interface TargetResult {
  name: string;
  target: string;
  reached: string;
  /** null when this run has nothing to judge it on (e.g. no kernel suite). */
  met: boolean | null;
  note?: string;
}

const pct = (v: number) => `${v.toFixed(1)}%`;

/**
 * The performance targets, as ratios to this run's own roofs so they hold on noisy machines:
 * `roofs` is the best of the roofs measured before and after the workloads, so a roof measured
 * low cannot flatter a target. A quick or full run judges the whole-model ones, a kernel-suite run
 * the kernel ones.
 */
export function evaluateTargets(r: Omit<BenchResult, 'targets'>, roofs: Roofs): TargetResult[] {
  const { fmaGflops, copyGBps, submitUs } = roofs;
  const kp = r.kernelPoints ?? [];
  const out: TargetResult[] = [];

  const matmuls = kp.filter((p) => p.name.startsWith('matmul') && (p.shape.M ?? 0) >= 256);
  if (matmuls.length > 0) {
    const best = matmuls.reduce((a, b) => (b.gflops > a.gflops ? b : a));
    const share = (100 * best.gflops) / fmaGflops;
    out.push({
      name: 'matmul, best prefill shape at L ≥ 256',
      target: '≥ 50% of FMA peak',
      reached: `${pct(share)} (${best.gflops.toFixed(2)} GFLOP/s, ${best.name} ${best.shape.M}×${best.shape.K}×${best.shape.N}, ${best.variant})`,
      met: share >= 50,
    });
  }

  const larges = kp.filter((p) => p.name === 'gemv large');
  if (larges.length > 0) {
    const large = larges.reduce((a, b) => (b.gbps > a.gbps ? b : a));
    const share = (100 * large.gbps) / copyGBps;
    out.push({
      name: 'GEMV, M = 1, weights far larger than cache',
      target: '≥ 70% of copy bandwidth',
      reached: `${pct(share)} (${large.gbps.toFixed(2)} GB/s, ${large.shape.N}×${large.shape.K} f32, ${large.variant})`,
      met: share >= 70,
    });
  }

  const int4s = kp.filter((p) => p.name === 'gemv large int4');
  if (int4s.length > 0) {
    const best = int4s.reduce((a, b) => (b.gbps > a.gbps ? b : a));
    const share = (100 * best.gbps) / copyGBps;
    out.push({
      name: 'int4 GEMV, M = 1, weights far larger than cache (packed words and scales counted)',
      target: '≥ 70% of copy bandwidth',
      reached: `${pct(share)} (${best.gbps.toFixed(2)} GB/s, ${best.shape.N}×${best.shape.K} int4, ${best.variant})`,
      met: share >= 70,
    });
  }

  const paged = kp.filter((p) => p.name === 'attention decode' && p.variant.endsWith('paged(16)'));
  const ratios = paged.flatMap((p) => {
    const twin = kp.find(
      (q) =>
        q.name === p.name &&
        q.variant === p.variant.replace('paged(16)', 'contiguous') &&
        q.shape.depth === p.shape.depth &&
        q.shape.batch === p.shape.batch,
    );
    return twin && twin.medianMs > 0 ? [{ ratio: p.medianMs / twin.medianMs, p }] : [];
  });
  if (ratios.length > 0) {
    const worst = ratios.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    out.push({
      name: 'paged against contiguous decode attention',
      target: 'paged ≤ 1.10 × contiguous time',
      reached: `${worst.ratio.toFixed(3)} × (worst of ${ratios.length}: depth ${worst.p.shape.depth}, batch ${worst.p.shape.batch})`,
      met: worst.ratio <= 1.1,
    });
  }

  const long = kp.filter((p) => p.name === 'attention decode long' && p.shape.batch === 1);
  const direct = long.find((p) => p.variant.startsWith('direct '));
  const splits = long.filter((p) => p.variant.startsWith('split('));
  if (direct && splits.length > 0) {
    const best = splits.reduce((a, b) => (b.medianMs < a.medianMs ? b : a));
    const speedup = direct.medianMs / best.medianMs;
    out.push({
      name: `split-K decode attention at batch 1, depth ${best.shape.depth}`,
      target: 'faster than direct',
      reached: `${speedup.toFixed(2)}× direct's speed (${best.variant}: ${best.medianMs.toFixed(2)} ms against ${direct.medianMs.toFixed(2)} ms)`,
      met: speedup > 1,
    });
  }

  // The whole-model targets judge the run's own model: the fusion workload's points (which carry
  // their graph) have their own target below.
  const prefill = r.points.filter((p) => p.pass === 'prefill' && !p.graph);
  if (prefill.length > 0) {
    const longest = prefill.reduce((a, b) => (b.tokens > a.tokens ? b : a));
    const share = (100 * longest.gflops) / fmaGflops;
    out.push({
      name: `whole-model prefill at L = ${longest.tokens}`,
      target: '≥ 40% of the compute roof',
      reached: `${pct(share)} (${longest.gflops.toFixed(2)} GFLOP/s)`,
      met: share >= 40,
    });
  }

  const decode = r.points.filter((p) => p.pass === 'decode' && p.batch === 1 && !p.graph);
  if (decode.length > 0) {
    const shallow = decode.reduce((a, b) => (b.depth < a.depth ? b : a));
    const boundMs = 1.5 * (shallow.bytes / (copyGBps * 1e6)) + submitUs / 1000;
    const bigEnough = r.model.weightBytes >= DRAM_BOUND_MIN_BYTES;
    const tpot = shallow.tpotMs?.p50 ?? shallow.wallMedianMs;
    out.push({
      name: `whole-model decode TPOT at depth ${shallow.depth}`,
      target: '≤ 1.5 × bytes/copy BW + submit overhead (wall clock)',
      reached: `${tpot.toFixed(2)} ms against ${boundMs.toFixed(2)} ms`,
      met: bigEnough ? tpot <= boundMs : null,
      note: bigEnough
        ? undefined
        : `${(r.model.weightBytes / 2 ** 20).toFixed(1)} MiB of weights may sit in cache; use a laptop preset`,
    });
  }

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
  for (const p of r.batchScaling?.filter((x) => x.batch === 8) ?? []) {
    out.push({
      name: 'decode step of B = 8 sequences',
      target: '≤ 1.5 × its roofline bound (the issue sets it on smollm2-135m)',
      reached: `${p.ratio.toFixed(2)} × (${p.stepMs.toFixed(1)} against ${p.boundMs.toFixed(1)} ms)`,
      met: p.ratio <= 1.5,
    });
  }
  const ab = r.serve?.runs.filter((x) => x.experiment === 'ab') ?? [];
  const cont = ab.find((x) => x.batching === 'continuous' && !x.prefixCache);
  const stat = ab.find((x) => x.batching === 'static' && !x.prefixCache);
  if (cont && stat) {
    const ratio =
      stat.summary.outputTokensPerSec > 0
        ? cont.summary.outputTokensPerSec / stat.summary.outputTokensPerSec
        : 0;
    out.push({
      name: 'continuous against static batching, output tokens/s',
      target: '≥ 2× (the issue sets it on ci-tiny, default mix near saturation)',
      reached: `${ratio.toFixed(2)}× (${cont.summary.outputTokensPerSec.toFixed(1)} against ${stat.summary.outputTokensPerSec.toFixed(1)})`,
      met: ratio >= 2,
    });
    const c = cont.byClass.short?.ttftMs?.p95;
    const st = stat.byClass.short?.ttftMs?.p95;
    if (c !== undefined && st !== undefined) {
      out.push({
        name: 'continuous against static batching, short requests’ p95 TTFT',
        target: 'lower under continuous batching',
        reached: `${c.toFixed(0)} against ${st.toFixed(0)} ms`,
        met: c < st,
      });
    }
  }
  for (const batching of ['continuous', 'static'] as const) {
    const on = ab.find((x) => x.batching === batching && x.prefixCache);
    const off = ab.find((x) => x.batching === batching && !x.prefixCache);
    if (!on || !off || off.summary.prefillTokensComputed === 0) continue;
    // The share of prompt tokens that are a shared prefix, from the trace's own records.
    const prompt = off.requests.reduce((n, q) => n + q.promptTokens, 0);
    const shared = off.requests.reduce((n, q) => n + (q.prefixTokens ?? 0), 0) / Math.max(1, prompt);
    if (shared === 0) continue;
    const drop = 1 - on.summary.prefillTokensComputed / off.summary.prefillTokensComputed;
    const tOn = on.summary.ttftMs?.mean ?? 0;
    const tOff = off.summary.ttftMs?.mean ?? 0;
    out.push({
      name: `prefix cache on against off (${batching}), prefill tokens computed and mean TTFT`,
      target:
        '≥ 80% fewer prefill tokens, and a lower mean TTFT (the issue sets it on prompts 90% a shared prefix)',
      reached: `prompts ${(shared * 100).toFixed(1)}% shared prefix: ${(drop * 100).toFixed(1)}% fewer (${on.summary.prefillTokensComputed} against ${off.summary.prefillTokensComputed}); mean TTFT ${tOn.toFixed(0)} against ${tOff.toFixed(0)} ms`,
      met: drop >= 0.8 && tOn < tOff,
    });
  }
  out.push(...formatTargets(r));
  const fusion = fusionTarget(r);
  if (fusion) out.push(fusion);
  return out;
}

/** The fused graph's ceilings (the issue sets them on ci-tiny): its decode step against the unfused one's, and its dispatches. */
export const FUSION_TARGET = { tpotRatioMax: 0.7, dispatchesPerLayerMax: 10 } as const;

/**
 * The fused decode step against the unfused one in the same run, and the fused graph's dispatches
 * per layer of a decode step (as the engine recorded them). Judged only where the fusion workload ran.
 */
export function fusionTarget(r: Omit<BenchResult, 'targets'>): TargetResult | null {
  if (!r.spec.workloads.some((w) => w.kind === 'fusion')) return null;
  const { tpotRatioMax, dispatchesPerLayerMax } = FUSION_TARGET;
  const name = `fused against unfused decode step (${r.model.preset})`;
  const target = `TPOT ≤ ${tpotRatioMax} × the unfused graph's in the same run, and ≤ ${dispatchesPerLayerMax} dispatches per layer`;
  const rows = r.fusion ?? [];
  const fused = rows.find((x) => x.graph === 'fused');
  const unfused = rows.find((x) => x.graph === 'unfused');
  if (!fused || !unfused || fused.tpotRatio === null) {
    return {
      name,
      target,
      reached: 'not measured',
      met: null,
      note: !fused
        ? 'the fused graph was not measured (its kernel families do not take the fusions, or the run stopped)'
        : 'the unfused graph was not measured',
    };
  }
  const perLayer = fused.decodePerLayer;
  return {
    name,
    target,
    reached: `${fused.tpotRatio.toFixed(2)} × (${fused.tpotMs.toFixed(2)} against ${unfused.tpotMs.toFixed(2)} ms at depth ${fused.decodeDepth}, wall clock); ${formatPerLayer(perLayer)} dispatches per layer against ${formatPerLayer(unfused.decodePerLayer)}`,
    met: fused.tpotRatio <= tpotRatioMax && perLayer <= dispatchesPerLayerMax,
  };
}

/** The format sweep's TPOT ceilings, as ratios to f32's TPOT in the same run (the issue sets them on smollm2-135m). */
const TPOT_RATIO_MAX = { f16: 0.6, int8: 0.45, int4: 0.3 } as const;

function formatTargets(r: Omit<BenchResult, 'targets'>): TargetResult[] {
  const out: TargetResult[] = [];
  for (const f of r.formats ?? []) {
    if (f.format === 'f32' || f.tpotRatio === null) continue;
    const max = TPOT_RATIO_MAX[f.format];
    out.push({
      name: `decode TPOT, ${f.format} against f32 (${r.model.preset})`,
      target: `≤ ${max} × f32`,
      reached: `${f.tpotRatio.toFixed(2)} × (${f.tpotMs.toFixed(1)} ms against ${(f.tpotMs / f.tpotRatio).toFixed(1)} ms; ${(f.decodeBytesPerToken / 2 ** 20).toFixed(1)} MiB per token)`,
      met: f.tpotRatio <= max,
    });
  }
  const sweep = r.spec.workloads.find((w) => w.kind === 'formats');
  if (sweep?.kind === 'formats' && sweep.quality && r.status === 'complete') {
    const formats = sweep.formats.filter((f) => f !== 'f32');
    const want = formats.length * QUALITY_SLICES.length;
    const have = new Set((r.quality ?? []).map((q) => `${q.format}:${q.slice}`)).size;
    out.push({
      name: 'error table, every format and slice',
      target: `${want} rows (${formats.join(', ')} × ${QUALITY_SLICES.join(', ')})`,
      reached: `${have} rows`,
      met: have === want,
    });
  }
  return out;
}
