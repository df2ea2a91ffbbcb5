import { place, type Roofs } from '../measure/roofline.ts';
import type { ClockSamples } from '../measure/samples.ts';
import { type ClockInfo, chooseTimebase } from '../measure/samples.ts';
import type { KernelPoint, Point } from '../results/schema.ts';
import type { BenchSpec } from '../spec/schema.ts';
import { percentile, percentiles, summarize } from '../stats.ts';
import type { KernelRecord, PassRecord } from '../workloads/workload.ts';

/** The fields both kinds of point share: both clocks, the placing one, and the placement. */
function timed(s: ClockSamples, clock: ClockInfo) {
  const { timebase, samplesMs, note } = chooseTimebase(s, clock);
  return {
    timebase,
    ...(note ? { timebaseNote: note } : {}),
    samplesMs,
    wallSamplesMs: s.wallMs,
    gpuSamplesMs: s.gpuMs,
    medianMs: percentile(samplesMs, 50),
    wallMedianMs: percentile(s.wallMs, 50),
    gpuMedianMs: s.gpuMs ? percentile(s.gpuMs, 50) : null,
  };
}

/** A pass record placed on the roofline: the one Point the stream and the result both hold. */
export function placePass(r: PassRecord, roofs: Roofs, clock: ClockInfo, kv: BenchSpec['kv']): Point {
  const t = timed(r.samples, clock);
  const stats = summarize(t.samplesMs);
  const placement = place(
    { flops: r.cost.flops, bytes: r.cost.bytes, dispatches: r.cost.dispatches, timebase: t.timebase },
    t.medianMs,
    roofs,
  );
  const tokens = r.tokens * r.batch;
  return {
    pass: r.pass,
    tokens: r.tokens,
    depth: r.depth,
    batch: r.batch,
    pageSize: kv.pageSize,
    kvMode: kv.mode,
    reps: r.reps,
    ...t,
    p95Ms: stats.p95,
    stddevMs: stats.stddev,
    ci95Ms: stats.ci95,
    cv: stats.cv,
    highVariance: stats.highVariance,
    driftPct: stats.driftPct,
    tokensPerSec: t.wallMedianMs > 0 ? tokens / (t.wallMedianMs / 1000) : 0,
    ...(r.latency.ttftMs ? { ttftMs: percentiles(r.latency.ttftMs) } : {}),
    ...(r.latency.tpotMs ? { tpotMs: percentiles(r.latency.tpotMs) } : {}),
    ...(r.latency.itlMs ? { itlMs: percentiles(r.latency.itlMs), itlSamplesMs: r.latency.itlMs } : {}),
    flops: r.cost.flops,
    bytes: r.cost.bytes,
    bytesAsImplemented: r.cost.bytesAsImplemented,
    ...placement,
    dispatches: r.cost.dispatches,
    kernels: r.kernels.map((k) => {
      const cost = r.cost.kernels.find((c) => c.role === k.role);
      return {
        name: k.role,
        medianMs: k.medianMs,
        flops: cost?.flops ?? 0,
        bytes: cost?.bytes ?? 0,
        bytesAsImplemented: cost?.bytesAsImplemented ?? 0,
        calls: k.calls,
      };
    }),
    weightFormat: r.weightFormat,
    ...(r.graph ? { graph: r.graph } : {}),
  };
}

/** A kernel record placed on the roofline: one dispatch, judged against compute, bandwidth and its launch. */
export function placeKernelRecord(r: KernelRecord, roofs: Roofs, clock: ClockInfo): KernelPoint {
  const t = timed(r.samples, clock);
  const placement = place(
    { flops: r.cost.flops, bytes: r.cost.bytes, dispatches: 1, timebase: t.timebase },
    t.medianMs,
    roofs,
  );
  return {
    name: r.name,
    variant: r.variant,
    shape: r.shape,
    ...t,
    flops: r.cost.flops,
    bytes: r.cost.bytes,
    gflops: placement.gflops,
    gbps: placement.gbps,
    bound: placement.bound,
    roofPct: placement.roofPct,
  };
}
