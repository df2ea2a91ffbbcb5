import { KERNEL_ROLES } from '../kernels/roles.ts';
import { place, type Roofs } from '../measure/roofline.ts';
import type { ClockSamples } from '../measure/samples.ts';
import type { ModelConfig } from '../model/config.ts';
import { linearNames, linearShape } from '../model/weights.ts';
import type { KernelPoint, Point } from '../results/schema.ts';
import type { Timebase } from '../spec/fields.ts';
import type { BenchSpec } from '../spec/schema.ts';
import type { FormatSummary } from '../spec/workloads/formats.ts';
import type { FusionSummary } from '../spec/workloads/fusion.ts';
import type { SpecResult, SpecRun, VerifyPoint } from '../spec/workloads/speculative-result.ts';
import { kneeOf, SPEEDUP_FORMULA } from '../speculative/predict.ts';
import { percentile, percentiles, summarize } from '../stats.ts';
import { WEIGHT_FORMATS, type WeightFormat, weightBytes } from '../weight-format.ts';
import type { FusionRecord, KernelRecord, PassRecord, VerifyRecord } from '../workloads/workload.ts';

/** What the run knows about its GPU clock, decided once before any workload runs. */
export interface ClockInfo {
  /** The adapter has `timestamp-query`. */
  timestamps: boolean;
  /** The tick spans are quantized to, or null when they are not. */
  quantumNs: number | null;
}

/**
 * Which clock places a point: GPU time where the adapter has timestamps, they are not quantized and
 * every span of the point was positive; wall time otherwise, with the reason. Returns the samples
 * of that clock.
 */
export function chooseTimebase(
  s: ClockSamples,
  clock: ClockInfo,
): { timebase: Timebase; samplesMs: number[]; note?: string } {
  if (s.gpuMs && clock.quantumNs === null) return { timebase: 'gpu', samplesMs: s.gpuMs };
  const note =
    s.gpuIssue ??
    (s.gpuMs && clock.quantumNs !== null
      ? `GPU timestamps are quantized to ${clock.quantumNs / 1000} µs`
      : undefined);
  return { timebase: 'wall', samplesMs: s.wallMs, ...(note ? { note } : {}) };
}

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

/**
 * The format sweep's table: for each format with a prefill and a decode point, the bytes its
 * linear weights take, one decode step's compulsory bytes (the cost model, scales included), its
 * TPOT and prefill time (wall clock, median) and both as ratios to f32's in the same run.
 */
export function formatSummary(points: readonly Point[], config: ModelConfig): FormatSummary[] {
  const rows: FormatSummary[] = [];
  const last = (format: WeightFormat, pass: Point['pass']) =>
    points.filter((p) => p.weightFormat === format && p.pass === pass).at(-1);
  const f32 = { decode: last('f32', 'decode'), prefill: last('f32', 'prefill') };
  for (const format of WEIGHT_FORMATS) {
    const decode = last(format, 'decode');
    const prefill = last(format, 'prefill');
    if (!decode?.tpotMs || !prefill?.ttftMs) continue;
    const tpotMs = decode.tpotMs.p50;
    const prefillMs = prefill.ttftMs.p50;
    rows.push({
      format,
      linearBytes: linearNames(config).reduce((n, name) => {
        const [N, K] = linearShape(config, name);
        return n + weightBytes(format, N, K);
      }, 0),
      decodeBytesPerToken: decode.bytes / decode.batch,
      tpotMs,
      tokensPerSec: tpotMs > 0 ? 1000 / tpotMs : 0,
      tpotRatio: f32.decode?.tpotMs ? tpotMs / f32.decode.tpotMs.p50 : null,
      prefillMs,
      prefillRatio: f32.prefill?.ttftMs ? prefillMs / f32.prefill.ttftMs.p50 : null,
    });
  }
  return rows;
}

/** Roles of the dispatches outside the layers: the embedding before them, the LM head and argmax after. */
const OUTSIDE_LAYERS = [KERNEL_ROLES.embedding, KERNEL_ROLES.lmHead, KERNEL_ROLES.argmax] as const;

/**
 * Dispatches per layer of one pass, from the counts by role the engine recorded: all of them less
 * the embedding, LM head and argmax, and the unfused graph's final RMSNorm (the fused graph runs it
 * inside the LM head), over the layers.
 */
export function dispatchesPerLayer(
  dispatches: Readonly<Record<string, number>>,
  layers: number,
  fused: boolean,
): { total: number; perLayer: number } {
  const total = Object.values(dispatches).reduce((a, b) => a + b, 0);
  const outside =
    OUTSIDE_LAYERS.reduce((n, role) => n + (dispatches[role] ?? 0), 0) +
    (!fused && (dispatches[KERNEL_ROLES.norm] ?? 0) > 0 ? 1 : 0);
  return { total, perLayer: layers > 0 ? (total - outside) / layers : 0 };
}

/**
 * The fusion workload's table: for each graph measured (fused first), the dispatches the engine
 * recorded in its prefill and its decode step, in all and per layer, its prefill time (TTFT p50)
 * and TPOT (p50), both wall clock as the points record them, and both as ratios to the unfused
 * graph's in the same run. A graph without both points is left out.
 */
export function fusionSummary(points: readonly Point[], records: readonly FusionRecord[]): FusionSummary[] {
  const point = (graph: FusionRecord['graph'], pass: Point['pass']) =>
    points.filter((p) => p.graph === graph && p.pass === pass).at(-1);
  const rows: FusionSummary[] = [];
  for (const r of records) {
    const prefill = point(r.graph, 'prefill');
    const decode = point(r.graph, 'decode');
    if (!prefill?.ttftMs || !decode?.tpotMs) continue;
    const p = dispatchesPerLayer(r.prefill.dispatches, r.layers, r.fused);
    const d = dispatchesPerLayer(r.decode.dispatches, r.layers, r.fused);
    rows.push({
      graph: r.graph,
      fused: r.fused,
      prefillDispatches: p.total,
      decodeDispatches: d.total,
      prefillPerLayer: p.perLayer,
      decodePerLayer: d.perLayer,
      prefillTokens: r.prefill.tokens,
      decodeDepth: r.decode.depth,
      prefillMs: prefill.ttftMs.p50,
      tpotMs: decode.tpotMs.p50,
      prefillRatio: null,
      tpotRatio: null,
    });
  }
  const base = rows.find((r) => r.graph === 'unfused');
  for (const r of rows) {
    if (!base) break;
    r.prefillRatio = base.prefillMs > 0 ? r.prefillMs / base.prefillMs : null;
    r.tpotRatio = base.tpotMs > 0 ? r.tpotMs / base.tpotMs : null;
  }
  return rows;
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
