import { DRAM_BOUND_MIN_BYTES, type Roofs } from '../measure/roofline.ts';
import type { BenchResult, Target } from '../results/schema.ts';
import { WORKLOAD_KINDS } from '../spec/workloads/index.ts';
import { ENGINES } from '../workloads/index.ts';

const pct = (v: number) => `${v.toFixed(1)}%`;

/**
 * The performance targets, as ratios to this run's own roofs so they hold on noisy machines:
 * `roofs` is the best of the roofs measured before and after the workloads, so a roof measured
 * low cannot flatter a target. A quick or full run judges the whole-model ones, a kernel-suite run
 * the kernel ones (both on the run's generic points); each workload's engine judges its own section.
 */
export function evaluateTargets(r: Omit<BenchResult, 'targets'>, roofs: Roofs): Target[] {
  const { fmaGflops, copyGBps, submitUs } = roofs;
  const kp = r.kernelPoints ?? [];
  const out: Target[] = [];

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

  // Each workload's own section's targets, from its engine, in the registry's order.
  const kinds = new Set(r.spec.workloads.map((w) => w.kind));
  for (const kind of WORKLOAD_KINDS) if (kinds.has(kind)) out.push(...ENGINES[kind].targets(r));
  return out;
}
