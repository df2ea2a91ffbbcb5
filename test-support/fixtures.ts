/**
 * Deterministic, schema-valid BenchResults for tests (unit tests here, CLI tests in bench/, UI
 * tests later). The numbers come from a small roofline cost model of SmolLM2-135M on a made-up
 * laptop GPU, so ratios between points look like a real run, but nothing here is measured.
 */
import { PageAllocator } from '../src/kv/allocator.ts';
import { decodeCost, prefillCost, verifyCost } from '../src/measure/cost.ts';
import { place } from '../src/measure/roofline.ts';
import { dims, type ModelConfig, PRESETS } from '../src/model/config.ts';
import { parameterCount } from '../src/model/weights.ts';
import { type BenchResult, BenchResultSchema, type Point, SCHEMA_VERSION } from '../src/results/schema.ts';
import { formatSummary, fusionSummary } from '../src/run/assemble.ts';
import { batchScaling, serveResult } from '../src/run/serve-assemble.ts';
import { toRecord } from '../src/serve/driver.ts';
import { byClass as serveByClass, slowdown, summarize } from '../src/serve/metrics.ts';
import { type KvPort, Scheduler, type ServeRequest } from '../src/serve/scheduler.ts';
import {
  type Arrival,
  defaultMix,
  generateTrace,
  promptTokenIds,
  type TraceRequest,
} from '../src/serve/traffic.ts';
import { drafterLabel, parseDrafterSpec } from '../src/spec/drafter.ts';
import { specFromOptions } from '../src/spec/options.ts';
import { SUITES } from '../src/spec/suites.ts';
import { BATCH_SIZES } from '../src/spec/workloads/decode.ts';
import type { Quality } from '../src/spec/workloads/formats.ts';
import type { ServeRun } from '../src/spec/workloads/serve-result.ts';
import { SERVE_DEFAULTS } from '../src/spec/workloads/serve-settings.ts';
import type { SpecRun, VerifyPoint } from '../src/spec/workloads/speculative-result.ts';
import { curveAt, kneeOf, predictedSpeedup, SPEEDUP_FORMULA } from '../src/speculative/predict.ts';
import { WEIGHT_FORMATS, type WeightFormat } from '../src/weight-format.ts';

/** The made-up machine and sweep behind every fixture. */
const FIXTURE = {
  /** A real preset, so params and the config agree with what the engine would report. */
  preset: 'smollm2-135m',
  /** Peaks of a mid-range laptop GPU. */
  peaks: { fmaGflops: 2000, copyGBps: 200, dispatchUs: 8, emptyDispatchUs: 3, submitUs: 40 },
  /** Prompt lengths of the prefill sweep. */
  prefillTokens: [16, 32, 64, 128, 256],
  /** Decode points: one batched, so tables show `depth ×B`. */
  decode: [
    { depth: 128, batch: 1 },
    { depth: 512, batch: 1 },
    { depth: 1024, batch: 4 },
  ],
  /** Spread of the samples around their median; the first prefill point gets the noisy one. */
  sampleSpread: [0.97, 0.99, 1, 1.02, 1.05],
  noisySampleSpread: [0.8, 0.95, 1, 1.1, 1.4],
  /** Above this coefficient of variation a point is flagged, as the measurement code does. */
  highVarianceCv: 0.05,
  /** Dispatches per layer in one pass, plus embedding, final norm and LM head. */
  dispatchesPerLayer: 12,
  extraDispatches: 3,
  /** f32 weights. */
  bytesPerWeight: 4,
  /** Share of GPU time, FLOPs and bytes of each kernel, for the points that carry a breakdown. */
  kernelShares: [
    { name: 'matmul', time: 0.7, flops: 0.88, bytes: 0.85, callsPerLayer: 7 },
    { name: 'attention', time: 0.15, flops: 0.1, bytes: 0.1, callsPerLayer: 1 },
    { name: 'rmsnorm', time: 0.08, flops: 0.01, bytes: 0.03, callsPerLayer: 2 },
    { name: 'silu_mul', time: 0.07, flops: 0.01, bytes: 0.02, callsPerLayer: 1 },
  ],
  /** GPU time as a share of wall-clock time: the rest is submit and readback. */
  gpuShare: 0.9,
  createdAt: '2025-01-15T12:00:00.000Z',
} as const;

const config = { ...PRESETS[FIXTURE.preset].config };
const { d, layers, heads, headDim, kvWidth } = dims(config);
const params = parameterCount(config);
const weightBytes = params * FIXTURE.bytesPerWeight;
const dispatches = layers * FIXTURE.dispatchesPerLayer + FIXTURE.extraDispatches;

/** FLOP/ms from GFLOP/s, bytes/ms from GB/s. */
const PER_MS = 1e6;

interface PointShape {
  pass: Point['pass'];
  tokens: number;
  depth: number;
  batch: number;
  flops: number;
  bytes: number;
  /** How much slower than predicted this point runs, so prediction errors differ between points. */
  slowdown: number;
  spread: readonly number[];
  withKernels: boolean;
}

function prefillShape(tokens: number, index: number): PointShape {
  // Weights once per token, plus causal QK^T and PV over the prompt.
  const flops = 2 * params * tokens + 2 * layers * heads * headDim * tokens * tokens;
  const bytes = weightBytes + tokens * d * FIXTURE.bytesPerWeight * layers * 8;
  return {
    pass: 'prefill',
    tokens,
    depth: 0,
    batch: 1,
    flops,
    bytes,
    slowdown: 1.5 + 0.05 * index,
    spread: index === 0 ? FIXTURE.noisySampleSpread : FIXTURE.sampleSpread,
    withKernels: tokens === 256,
  };
}

function decodeShape(depth: number, batch: number, index: number): PointShape {
  // Each sequence reads every weight (shared across the batch) and its own K and V.
  const flops = batch * (2 * params + 4 * layers * heads * headDim * depth);
  const bytes = weightBytes + batch * 2 * layers * kvWidth * depth * FIXTURE.bytesPerWeight;
  return {
    pass: 'decode',
    tokens: 1,
    depth,
    batch,
    flops,
    bytes,
    slowdown: 1.4 + 0.1 * index,
    spread: FIXTURE.sampleSpread,
    withKernels: depth === 512,
  };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** The cost model's time of a pass on the fixture's machine: its binding roof, plus one submit. */
function predictedMsOf(flops: number, bytes: number) {
  const { fmaGflops, copyGBps, dispatchUs, submitUs } = FIXTURE.peaks;
  const computeMs = flops / (fmaGflops * PER_MS);
  const memoryMs = bytes / (copyGBps * PER_MS);
  const overheadMs = (dispatches * dispatchUs) / 1000;
  return {
    computeMs,
    memoryMs,
    overheadMs,
    predictedMs: Math.max(computeMs, memoryMs, overheadMs) + submitUs / 1000,
  };
}

function makePoint(s: PointShape): Point {
  const { fmaGflops, copyGBps } = FIXTURE.peaks;
  const { computeMs, memoryMs, overheadMs, predictedMs } = predictedMsOf(s.flops, s.bytes);
  const medianMs = predictedMs * s.slowdown;
  const samplesMs = s.spread.map((f) => medianMs * f);
  const avg = mean(samplesMs);
  const stddevMs = Math.sqrt(samplesMs.reduce((a, x) => a + (x - avg) ** 2, 0) / (samplesMs.length - 1));
  const halfCi = (1.96 * stddevMs) / Math.sqrt(samplesMs.length);
  const cv = stddevMs / avg;
  const bound =
    computeMs >= memoryMs && computeMs >= overheadMs
      ? 'compute'
      : memoryMs >= overheadMs
        ? 'bandwidth'
        : 'overhead';
  const gflops = s.flops / (medianMs * PER_MS);
  const gbps = s.bytes / (medianMs * PER_MS);
  const roofPct =
    bound === 'compute'
      ? (gflops / fmaGflops) * 100
      : bound === 'bandwidth'
        ? (gbps / copyGBps) * 100
        : (overheadMs / medianMs) * 100;
  const gpuMedianMs = medianMs * FIXTURE.gpuShare;
  // Wall-placed, as on an adapter whose timestamps are quantized; GPU times recorded beside.
  return {
    pass: s.pass,
    tokens: s.tokens,
    depth: s.depth,
    batch: s.batch,
    pageSize: 16,
    kvMode: 'paged',
    reps: samplesMs.length,
    timebase: 'wall',
    timebaseNote: 'GPU timestamps are quantized to 100 µs',
    samplesMs,
    wallSamplesMs: samplesMs,
    gpuSamplesMs: samplesMs.map((x) => x * FIXTURE.gpuShare),
    medianMs,
    wallMedianMs: medianMs,
    // Nearest-rank p95 of five samples is the largest.
    p95Ms: Math.max(...samplesMs),
    stddevMs,
    ci95Ms: [avg - halfCi, avg + halfCi],
    cv,
    highVariance: cv > FIXTURE.highVarianceCv,
    driftPct: (samplesMs[samplesMs.length - 1] / samplesMs[0] - 1) * 100,
    gpuMedianMs,
    tokensPerSec: (s.tokens * s.batch) / (medianMs / 1000),
    ...(s.pass === 'prefill'
      ? { ttftMs: percentiles(medianMs) }
      : {
          tpotMs: percentiles(medianMs),
          itlMs: percentiles(medianMs * 1.02),
          itlSamplesMs: samplesMs.map((x) => x * 1.02),
        }),
    flops: s.flops,
    bytes: s.bytes,
    bytesAsImplemented: s.bytes,
    intensity: s.flops / s.bytes,
    gflops,
    gbps,
    bound,
    roofPct,
    predictedMs,
    predictionErrorPct: (medianMs / predictedMs - 1) * 100,
    dispatches,
    kernels: s.withKernels
      ? FIXTURE.kernelShares.map((k) => ({
          name: k.name,
          medianMs: gpuMedianMs * k.time,
          flops: s.flops * k.flops,
          bytes: s.bytes * k.bytes,
          bytesAsImplemented: s.bytes * k.bytes,
          calls: k.callsPerLayer * layers,
        }))
      : [],
  };
}

function percentiles(p50: number) {
  return { p50, p95: p50 * 1.1, p99: p50 * 1.25 };
}

/**
 * A complete, valid run: five prefill points (L = 16…256, the first one noisy) and three decode
 * points (one with batch 4), with a per-kernel breakdown on prefill L=256 and decode depth 512.
 * Top-level fields in `overrides` replace the fixture's; the result is validated, so a fixture
 * that drifts from the schema fails loudly, and every call returns a fresh, unshared object.
 */
export function makeResult(overrides: Partial<BenchResult> = {}): BenchResult {
  const points = [
    ...FIXTURE.prefillTokens.map((tokens, i) => makePoint(prefillShape(tokens, i))),
    ...FIXTURE.decode.map(({ depth, batch }, i) => makePoint(decodeShape(depth, batch, i))),
  ];
  const base: BenchResult = {
    schemaVersion: SCHEMA_VERSION,
    createdAt: FIXTURE.createdAt,
    tool: { name: 'webgpu-inference-bench', version: '0.1.0' },
    status: 'complete',
    spec: {
      suite: 'quick',
      kv: { mode: 'paged', pageSize: 16 },
      autotune: true,
      workloads: [
        { kind: 'prefill', lengths: [...FIXTURE.prefillTokens], reps: 5, warmup: 1, profile: false },
        { kind: 'decode', depths: [128, 512], gen: 16, batch: 1, reps: 5, warmup: 1, profile: false },
        { kind: 'decode', depths: [1024], gen: 16, batch: 4, reps: 5, warmup: 1, profile: false },
      ],
    },
    env: {
      userAgent:
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      browser: 'Chrome 131',
      adapter: {
        vendor: 'apple',
        architecture: 'metal-3',
        device: '',
        description: 'Apple M2 Pro',
        isFallbackAdapter: false,
      },
      features: ['shader-f16', 'timestamp-query'],
      limits: {
        maxBufferSize: 4294967296,
        maxStorageBufferBindingSize: 4294967292,
        maxComputeWorkgroupSizeX: 256,
      },
      timestamps: { supported: true, quantumNs: 100000 },
      clocks: {
        gpu: 'GPU timestamps (timestamp-query): begin to end of the compute passes, on the GPU',
        wall: 'performance.now() in the engine worker: submit, GPU work and readback',
      },
      crossOriginIsolated: true,
    },
    model: { preset: FIXTURE.preset, config, params, weightBytes },
    peaks: {
      ...FIXTURE.peaks,
      trials: [
        { kind: 'fma', label: 'vec4 x16, wg 256', value: FIXTURE.peaks.fmaGflops },
        { kind: 'fma', label: 'scalar x16, wg 64', value: FIXTURE.peaks.fmaGflops * 0.6 },
        { kind: 'copy', label: 'vec4 256 MiB', value: FIXTURE.peaks.copyGBps },
        { kind: 'dispatch', label: 'dependent dispatch, buffers bound', value: FIXTURE.peaks.dispatchUs },
        { kind: 'empty-dispatch', label: 'empty kernel', value: FIXTURE.peaks.emptyDispatchUs },
        { kind: 'submit', label: 'empty submit', value: FIXTURE.peaks.submitUs },
      ],
    },
    peaksAfter: null,
    coldStart: { compileMs: 412.5, loadMs: 1830.25 },
    points,
    validation: {
      maxAbsErr: 2.4e-5,
      maxRelErr: 3.1e-6,
      passed: true,
      checks: [
        { name: 'prefill logits', maxAbsErr: 2.4e-5, maxRelErr: 3.1e-6, passed: true },
        { name: 'decode logits', maxAbsErr: 1.9e-5, maxRelErr: 2.7e-6, passed: true },
      ],
    },
    warnings: [],
  };
  return BenchResultSchema.parse({ ...base, ...overrides });
}

/**
 * A copy of `r` as if every measured pass had taken `factor` times as long: samples and medians
 * in both clocks, spreads, kernel times, per-point latencies and cold start scale; throughput (tok/s, GFLOP/s,
 * GB/s, % of roof) divides. The peaks and the cost model's predictions are properties of the
 * machine and model, not of this run, so they stay, and the prediction error follows the time.
 */
export function scaleTimes(r: BenchResult, factor: number): BenchResult {
  const scale = (p: { p50: number; p95: number; p99: number }) => ({
    p50: p.p50 * factor,
    p95: p.p95 * factor,
    p99: p.p99 * factor,
  });
  return BenchResultSchema.parse({
    ...r,
    coldStart: { compileMs: r.coldStart.compileMs * factor, loadMs: r.coldStart.loadMs * factor },
    points: r.points.map(
      (p): Point => ({
        ...p,
        samplesMs: p.samplesMs.map((s) => s * factor),
        wallSamplesMs: p.wallSamplesMs.map((s) => s * factor),
        gpuSamplesMs: p.gpuSamplesMs === null ? null : p.gpuSamplesMs.map((s) => s * factor),
        medianMs: p.medianMs * factor,
        wallMedianMs: p.wallMedianMs * factor,
        ...(p.ttftMs ? { ttftMs: scale(p.ttftMs) } : {}),
        ...(p.tpotMs ? { tpotMs: scale(p.tpotMs) } : {}),
        ...(p.itlMs ? { itlMs: scale(p.itlMs) } : {}),
        ...(p.itlSamplesMs ? { itlSamplesMs: p.itlSamplesMs.map((x) => x * factor) } : {}),
        p95Ms: p.p95Ms * factor,
        stddevMs: p.stddevMs * factor,
        ci95Ms: [p.ci95Ms[0] * factor, p.ci95Ms[1] * factor],
        gpuMedianMs: p.gpuMedianMs === null ? null : p.gpuMedianMs * factor,
        tokensPerSec: p.tokensPerSec / factor,
        gflops: p.gflops / factor,
        gbps: p.gbps / factor,
        roofPct: p.roofPct / factor,
        predictionErrorPct: ((p.medianMs * factor) / p.predictedMs - 1) * 100,
        kernels: p.kernels.map((k) => ({ ...k, medianMs: k.medianMs * factor })),
      }),
    ),
  });
}

/**
 * The speculative-decoding fixture: ci-tiny on SwiftShader (2 CPU cores), `--suite spec` with the
 * curve at two depths. Curve times are GPU timestamps shaped like the ratios measured there (about
 * 1.0, 1.1, 1.3, 1.6 and 3.1 decode steps for k = 1…16 at depth 64; k = 16 runs in two chunks of
 * the GEMV's batch limit, so it reads the weights twice); FLOPs and bytes come from the cost model
 * and each point is placed by the same `place` the engine uses. The runs are wall clock: a step
 * costs its draft, its verify and the loop's host time, and emits τ tokens.
 */
const SPEC_FIXTURE = {
  preset: 'ci-tiny',
  /** Roofs of the README's SwiftShader run. */
  peaks: { fmaGflops: 15.9, copyGBps: 2.2, dispatchUs: 35.1, emptyDispatchUs: 21.5, submitUs: 505 },
  verifyKs: [1, 2, 4, 8, 16],
  /** Ratio verify ÷ decode at each k, per depth, and the decode step's GPU median there. */
  curve: [
    { depth: 64, decodeMs: 5.85, ratios: [1.02, 1.1, 1.3, 1.6, 3.1] },
    { depth: 256, decodeMs: 6.6, ratios: [1.01, 1.08, 1.22, 1.45, 2.9] },
  ],
  /** Rows the GEMV takes per call (GEMV_LIMITS.maxBatch): a verify of more runs in chunks. */
  chunk: 8,
  /** Submit and readback of the sampled tokens, on the wall clock only. */
  wallExtraMs: 2.45,
  kneeRatio: 1.5,
  draftK: 4,
  gen: 64,
  promptTokens: 64,
  /** Per run: steps, accepted and drafted tokens over the 63 tokens after the prefill's. */
  runs: [
    {
      drafter: 'ngram',
      promptClass: 'repetitive',
      steps: 18,
      accepted: 45,
      drafted: 68,
      perPosition: [0.89, 0.71, 0.58, 0.47],
      draftMs: 0.06,
      verifyMs: 11.8,
      baselineTpotMs: 8.31,
    },
    {
      drafter: 'ngram',
      promptClass: 'random',
      steps: 58,
      accepted: 5,
      drafted: 24,
      perPosition: [0.25, 0.2, 0.2, 0.17],
      draftMs: 0.03,
      verifyMs: 9.05,
      baselineTpotMs: 8.36,
    },
    {
      drafter: 'oracle:0.8',
      promptClass: 'repetitive',
      steps: 19,
      accepted: 44,
      drafted: 76,
      perPosition: [0.79, 0.63, 0.53, 0.37],
      draftMs: 0.02,
      verifyMs: 11.8,
      baselineTpotMs: 8.31,
    },
    {
      drafter: 'oracle:0.8',
      promptClass: 'random',
      steps: 20,
      accepted: 43,
      drafted: 80,
      perPosition: [0.8, 0.6, 0.45, 0.3],
      draftMs: 0.02,
      verifyMs: 11.85,
      baselineTpotMs: 8.36,
    },
    {
      drafter: 'truncated:1',
      promptClass: 'repetitive',
      steps: 31,
      accepted: 32,
      drafted: 124,
      perPosition: [0.52, 0.26, 0.16, 0.1],
      draftMs: 23.6,
      verifyMs: 11.8,
      baselineTpotMs: 8.31,
    },
    {
      drafter: 'truncated:1',
      promptClass: 'random',
      steps: 40,
      accepted: 23,
      drafted: 160,
      perPosition: [0.35, 0.13, 0.07, 0.03],
      draftMs: 23.5,
      verifyMs: 11.8,
      baselineTpotMs: 8.36,
    },
  ],
  /** The loop's own host time per step (acceptance, rollback bookkeeping), ms. */
  hostMs: 0.25,
  createdAt: '2026-12-02T21:30:00.000Z',
} as const;

function specCurve(config: ModelConfig): VerifyPoint[] {
  const spread = FIXTURE.sampleSpread;
  return SPEC_FIXTURE.curve.flatMap(({ depth, decodeMs, ratios }) =>
    SPEC_FIXTURE.verifyKs.map((k, i) => {
      const verifyMs = decodeMs * ratios[i];
      const cost = verifyCost(config, depth, k, SPEC_FIXTURE.chunk);
      const placed = place(
        { flops: cost.flops, bytes: cost.bytes, dispatches: cost.dispatches, timebase: 'gpu' },
        verifyMs,
        SPEC_FIXTURE.peaks,
      );
      return {
        k,
        depth,
        reps: spread.length,
        timebase: 'gpu',
        verifyMs,
        decodeMs,
        ratio: verifyMs / decodeMs,
        verifySamplesMs: spread.map((f) => verifyMs * f),
        decodeSamplesMs: spread.map((f) => decodeMs * f),
        wallVerifyMs: verifyMs + SPEC_FIXTURE.wallExtraMs,
        wallDecodeMs: decodeMs + SPEC_FIXTURE.wallExtraMs,
        chunks: Math.ceil(k / SPEC_FIXTURE.chunk),
        flops: cost.flops,
        bytes: cost.bytes,
        intensity: placed.intensity,
        gflops: placed.gflops,
        gbps: placed.gbps,
        bound: placed.bound,
        roofPct: placed.roofPct,
        predictedMs: placed.predictedMs,
      };
    }),
  );
}

function specRuns(curve: readonly VerifyPoint[]): SpecRun[] {
  const K = SPEC_FIXTURE.draftK;
  const emitted = SPEC_FIXTURE.gen - 1;
  return SPEC_FIXTURE.runs.map((r) => {
    const parsed = parseDrafterSpec(r.drafter);
    if (typeof parsed === 'string') throw new Error(parsed);
    const meanAcceptanceLength = 1 + r.accepted / r.steps;
    const tpotMs = (r.steps * (r.draftMs + r.verifyMs + SPEC_FIXTURE.hostMs)) / emitted;
    const at = curveAt(curve, K + 1, SPEC_FIXTURE.promptTokens + SPEC_FIXTURE.gen / 2);
    if (!at) throw new Error('the fixture curve is empty');
    return {
      drafter: r.drafter,
      label: drafterLabel(parsed),
      synthetic: parsed.kind === 'oracle',
      k: K,
      adaptiveK: false,
      promptClass: r.promptClass,
      prompts: 1,
      promptTokens: SPEC_FIXTURE.promptTokens,
      tokens: SPEC_FIXTURE.gen,
      steps: r.steps,
      drafted: r.drafted,
      accepted: r.accepted,
      acceptanceRate: r.accepted / r.drafted,
      meanAcceptanceLength,
      perPosition: [...r.perPosition],
      draftMs: r.draftMs,
      verifyMs: r.verifyMs,
      tpotMs,
      baselineTpotMs: r.baselineTpotMs,
      speedup: r.baselineTpotMs / tpotMs,
      predictedSpeedup: predictedSpeedup({ meanAcceptanceLength, draftMs: r.draftMs, ...at }),
      identical: true,
      firstMismatch: null,
    };
  });
}

/**
 * A `--suite spec` run of ci-tiny on SwiftShader: no prefill or decode points, the roofs, and a
 * `speculative` section (the verify-K curve at depths 64 and 256, and three drafters on two prompt
 * classes, every output identical to greedy decode). Validated like `makeResult`.
 */
export function makeSpecResult(overrides: Partial<BenchResult> = {}): BenchResult {
  const base = makeResult();
  const tinyConfig = { ...PRESETS[SPEC_FIXTURE.preset].config };
  const tinyParams = parameterCount(tinyConfig);
  const curve = specCurve(tinyConfig);
  const { knee, byDepth } = kneeOf(curve, SPEC_FIXTURE.kneeRatio);
  const p = SPEC_FIXTURE.peaks;
  const spec: BenchResult = {
    ...base,
    createdAt: SPEC_FIXTURE.createdAt,
    spec: {
      suite: 'spec',
      kv: { mode: 'paged', pageSize: 16 },
      autotune: true,
      workloads: [
        {
          kind: 'spec',
          verifyKs: [...SPEC_FIXTURE.verifyKs],
          depths: SPEC_FIXTURE.curve.map((c) => c.depth),
          drafters: [...new Set(SPEC_FIXTURE.runs.map((r) => r.drafter))],
          k: SPEC_FIXTURE.draftK,
          adaptiveK: false,
          gen: SPEC_FIXTURE.gen,
          promptTokens: SPEC_FIXTURE.promptTokens,
          prompts: 1,
          classes: ['repetitive', 'random'],
          reps: 5,
          warmup: 1,
          seed: 0,
        },
      ],
    },
    env: {
      ...base.env,
      userAgent:
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/150.0.0.0 Safari/537.36',
      browser: 'Chromium 150.0.7871.100 (headless)',
      adapter: {
        vendor: 'google',
        architecture: 'swiftshader',
        device: '',
        description: '',
        isFallbackAdapter: true,
      },
      features: ['core-features-and-limits', 'subgroups', 'timestamp-query'],
      timestamps: { supported: true, quantumNs: null },
    },
    model: {
      preset: SPEC_FIXTURE.preset,
      config: tinyConfig,
      params: tinyParams,
      weightBytes: tinyParams * FIXTURE.bytesPerWeight,
    },
    peaks: {
      ...p,
      trials: [
        { kind: 'fma', label: 'before: wg 64 × 128 workgroups', value: p.fmaGflops },
        { kind: 'copy', label: 'before: 256 MiB, wg 64 × 4096', value: p.copyGBps },
        { kind: 'dispatch', label: 'before: dependent dispatch, buffers bound', value: p.dispatchUs },
        { kind: 'empty-dispatch', label: 'before: empty kernel', value: p.emptyDispatchUs },
        { kind: 'submit', label: 'before: submit + 4-byte readback', value: p.submitUs },
      ],
    },
    peaksAfter: null,
    coldStart: { compileMs: 2310.4, loadMs: 95.2 },
    points: [],
    speculative: {
      verifyCurve: curve,
      knee,
      kneeRatio: SPEC_FIXTURE.kneeRatio,
      kneeByDepth: byDepth,
      runs: specRuns(curve),
      formula: SPEEDUP_FORMULA,
      clock:
        'wall clock of the engine worker (performance.now()): draft, verify and TPOT include submit and readback',
    },
    validation: {
      maxAbsErr: 1.42e-6,
      maxRelErr: 3.64e-7,
      passed: true,
      checks: [
        { name: 'prefill logits', maxAbsErr: 1.42e-6, maxRelErr: 3.64e-7, passed: true },
        { name: 'decode logits', maxAbsErr: 9.5e-7, maxRelErr: 2.1e-7, passed: true },
      ],
    },
    warnings: ['Fallback (software) adapter: these numbers measure a CPU emulation, not a GPU.'],
  };
  return BenchResultSchema.parse({ ...spec, ...overrides });
}

/**
 * The load-test fixture: ci-tiny on SwiftShader, `--suite serve` on the default mix (short, rag,
 * long-gen). Nothing is measured, but nothing is drawn by hand either: the trace comes from the
 * real traffic generator, every arm runs the real Scheduler over the real PageAllocator (prefix
 * cache included) on a simulated clock, and each engine step costs what a step of that size cost
 * in a SwiftShader run (a fixed part, a part per decode row, a part per prompt token, ±8% noise).
 * So slots, timelines, preemptions and queues are what the scheduler would really produce, and the
 * summaries come from the same vLLM-defined metrics the workload uses.
 */
const SERVE_FIXTURE = {
  preset: 'ci-tiny',
  /** A seed whose 20 requests split 12 short, 5 rag, 3 long-gen: the default mix's shares. */
  seed: 10,
  requests: 20,
  /** Cost of one engine step on SwiftShader, ms: fixed, per decode row, per prompt token. */
  step: { baseMs: 2.6, perRowMs: 1.45, perPromptTokenMs: 0.62, noise: 0.08 },
  tokenBudget: 128,
  maxBatch: 8,
  pageSize: 16,
  /** A small KV pool (48 pages of 16), so the continuous arm runs out of pages once and preempts. */
  kvTokens: 768,
  /** The A/B arms' SLOs, and the rate sweep's. */
  slo: { ttftMs: 500, tpotMs: 50 },
  /** A shared system prompt, for the prefix-cache variant. */
  prefix: { tokens: 128, share: 0.75 },
  /** Rates between the synchronous and the saturating run, for the sweep variant. */
  sweepRates: 3,
  createdAt: '2026-12-03T05:30:00.000Z',
} as const;

/** What an arm of the fixture runs: the scheduler's settings, the prefix cache, and closed-loop concurrency. */
interface FixtureArm {
  batching: 'continuous' | 'static';
  prefixCache: boolean;
  /** Closed loop with this many in flight; null: arrivals from the trace. */
  concurrency: number | null;
}

/** A deterministic number in [0, 1) for step `i` of an arm: the step's share of noise. */
function stepNoise(i: number, salt: number): number {
  const x = Math.sin((i + 1) * 12.9898 + salt * 78.233) * 43758.5453;
  return x - Math.floor(x);
}

/** What one simulated arm leaves: the records, the engine timeline and the slot stays. */
interface SimulatedArm {
  records: ServeRequestRecord[];
  timeline: ServeRun['timeline'];
  slots: ServeRun['slots'];
  durationMs: number;
  steps: number;
}

type ServeRequestRecord = ServeRun['requests'][number];

/**
 * One arm of the load test on a simulated clock, as src/serve/driver.ts drives it on the engine:
 * arrivals (or, closed loop, a release per finish), the scheduler's plan, the pages the step
 * takes, the step's cost added to the clock, the tokens stamped when it "returns".
 */
function simulateArm(trace: readonly TraceRequest[], arm: FixtureArm, salt: number): SimulatedArm {
  const f = SERVE_FIXTURE;
  const alloc = new PageAllocator({
    numPages: f.kvTokens / f.pageSize,
    pageSize: f.pageSize,
    bytesPerTokenSlot: 1,
    prefixCache: arm.prefixCache,
  });
  const vocab = PRESETS[f.preset].config.vocabSize;
  const prompts = new Map(trace.map((t) => [t.id, promptTokenIds(t, vocab, f.seed)]));
  const pages = (tokens: number) => Math.ceil(tokens / f.pageSize);
  const port: KvPort = {
    pageSize: f.pageSize,
    totalPages: alloc.stats().totalPages,
    availablePages: () => (arm.prefixCache ? alloc.availablePages() : alloc.stats().freePages),
    pagesToGrow: (seq, n) => {
      const len = seq === null ? 0 : alloc.length(seq);
      return pages(len + n) - pages(len);
    },
    open: (prompt) => {
      const seq = alloc.createSequence();
      return { seq, hitTokens: arm.prefixCache ? alloc.acquirePrefix(seq, prompt) : 0 };
    },
    close: (seq) => alloc.freeSequence(seq),
  };
  const scheduler = new Scheduler(port, {
    batching: arm.batching,
    policy: 'fcfs',
    tokenBudget: f.tokenBudget,
    maxBatch: f.maxBatch,
  });
  // The model's "next token" depends only on the request and the position, as a greedy model's would.
  const tokenOf = (id: number, index: number) => 1 + ((id * 131 + index * 17) % (vocab - 1));
  const pending = [...trace].sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id);
  let released = arm.concurrency ?? pending.length;
  const slots: ServeRun['slots'] = [];
  const slotOf = new Map<ServeRequest, { slot: number; startMs: number }>();
  const freeSlots = Array.from({ length: f.maxBatch }, (_, i) => i);
  const timeline: ServeRun['timeline'] = [];
  let now = 0;
  let steps = 0;
  const closeSlot = (r: ServeRequest, end: 'finished' | 'preempted', at: number) => {
    const s = slotOf.get(r);
    if (!s) return;
    slots.push({ slot: s.slot, id: r.id, class: r.class, startMs: s.startMs, endMs: at, end });
    slotOf.delete(r);
    freeSlots.push(s.slot);
    freeSlots.sort((a, b) => a - b);
  };
  for (let guard = 0; guard < 100_000; guard++) {
    while (pending.length > 0 && (arm.concurrency === null ? pending[0].arrivalMs <= now : released > 0)) {
      const t = pending.shift() as TraceRequest;
      if (arm.concurrency !== null) released--;
      scheduler.arrive({
        id: t.id,
        class: t.class,
        priority: t.priority,
        prompt: prompts.get(t.id) ?? [],
        outputTokens: t.outputTokens,
        arrivalMs: arm.concurrency === null ? t.arrivalMs : now,
      });
    }
    if (!scheduler.busy) {
      if (pending.length === 0) break;
      now = pending[0].arrivalMs;
      continue;
    }
    const plan = scheduler.plan(now);
    for (const r of plan.preempted) closeSlot(r, 'preempted', now);
    for (const r of plan.admitted) slotOf.set(r, { slot: freeSlots.shift() ?? -1, startMs: now });
    for (const d of plan.decodes) alloc.appendTokens(d.req.seq as number, 1);
    for (const p of plan.prefills) alloc.appendTokens(p.req.seq as number, p.tokens.length);
    const promptTokens = plan.prefills.reduce((n, p) => n + p.tokens.length, 0);
    const { baseMs, perRowMs, perPromptTokenMs, noise } = f.step;
    const stepMs =
      (baseMs + perRowMs * plan.decodes.length + perPromptTokenMs * promptTokens) *
      (1 + noise * (2 * stepNoise(steps, salt) - 1));
    now += stepMs;
    steps++;
    if (arm.prefixCache) {
      for (const r of new Set([...plan.decodes.map((d) => d.req), ...plan.prefills.map((p) => p.req)])) {
        if (r.seq === null) continue;
        alloc.commitTokens(
          r.seq,
          [...r.prompt.slice(0, r.promptDone), ...r.generated.slice(0, r.fed)].slice(0, alloc.length(r.seq)),
        );
      }
    }
    const before = scheduler.all.filter((r) => r.state === 'running');
    const emittedBefore = scheduler.all.reduce((n, r) => n + r.generated.length, 0);
    scheduler.complete(
      plan,
      plan.decodes.map((d) => tokenOf(d.req.id, d.req.fed + 1)),
      plan.prefills.map((p) => tokenOf(p.req.id, 0)),
      now,
    );
    for (const r of before) {
      if (r.state !== 'finished') continue;
      closeSlot(r, 'finished', now);
      if (arm.concurrency !== null) released++;
    }
    const stats = alloc.stats();
    timeline.push({
      tMs: now,
      running: scheduler.runningCount,
      waiting: scheduler.waitingCount,
      decodeRows: plan.decodes.length,
      prefillTokens: promptTokens,
      tokensOut: scheduler.all.reduce((n, r) => n + r.generated.length, 0) - emittedBefore,
      kvUsedPages: stats.usedPages,
      kvTotalPages: stats.totalPages,
      stepMs,
    });
  }
  const byId = new Map(trace.map((t) => [t.id, t]));
  const records = scheduler.all.map((r) => toRecord(r, byId.get(r.id) as TraceRequest, false));
  return { records, timeline, slots, durationMs: now, steps };
}

/** Each request alone on the idle engine: one prefill of its whole prompt, then one decode row per token. */
function soloTimes(t: TraceRequest): { soloTtftMs: number; soloE2eMs: number } {
  const { baseMs, perRowMs, perPromptTokenMs } = SERVE_FIXTURE.step;
  const soloTtftMs = baseMs + perPromptTokenMs * t.promptTokens;
  return { soloTtftMs, soloE2eMs: soloTtftMs + (t.outputTokens - 1) * (baseMs + perRowMs) };
}

const SHORT_CLASS = 'short';

/** An arm as the serve workload records it (src/workloads/serve.ts `toRun` and `finishArm`). */
function fixtureRun(
  label: string,
  experiment: ServeRun['experiment'],
  trace: readonly TraceRequest[],
  arrival: ServeRun['arrival'],
  arm: FixtureArm,
  solo: boolean,
  salt: number,
): ServeRun {
  const f = SERVE_FIXTURE;
  const sim = simulateArm(trace, arm, salt);
  const slo = { ...f.slo };
  const records = solo
    ? sim.records.map((r) => ({ ...r, ...soloTimes(trace.find((t) => t.id === r.id) as TraceRequest) }))
    : sim.records;
  const opts = { durationMs: sim.durationMs, slo };
  const finished = records.filter((r) => r.status === 'finished').length;
  return {
    label,
    experiment,
    batching: arm.batching,
    prefixCache: arm.prefixCache,
    policy: 'fcfs',
    arrival,
    seed: f.seed,
    slo,
    durationMs: sim.durationMs,
    tokenBudget: f.tokenBudget,
    maxBatch: f.maxBatch,
    kvTokens: f.kvTokens,
    steps: sim.steps,
    summary: summarize(records, opts),
    byClass: serveByClass(records, opts),
    slowdown: solo ? slowdown(records.filter((r) => r.class === SHORT_CLASS)) : null,
    identical: solo ? { checked: finished, mismatches: 0, firstMismatches: [] } : null,
    replayMismatches: 0,
    timeline: sim.timeline,
    slots: sim.slots,
    requests: records,
  };
}

/** Variants of the load-test fixture. */
export interface ServeFixtureOptions {
  /** The four arms continuous/static × prefix cache off/on, with a shared 128-token prefix on 3 requests in 4. */
  prefixCache?: boolean;
  /** A rate sweep instead of the A/B arms: synchronous, saturating, and three rates between. */
  sweep?: boolean;
}

/** The arms of a variant, as the workload runs them: calibration first, then the A/B arms on one trace. */
function serveRuns(o: ServeFixtureOptions): ServeRun[] {
  const f = SERVE_FIXTURE;
  const classes = defaultMix(PRESETS[f.preset].config.maxSeqLen);
  const trace = (arrival: Arrival) =>
    generateTrace({
      seed: f.seed,
      requests: f.requests,
      arrival,
      classes,
      ...(o.prefixCache ? { prefix: { ...f.prefix } } : {}),
    });
  const continuous: FixtureArm = { batching: 'continuous', prefixCache: false, concurrency: null };
  const allAtOnce = trace({ kind: 'all-at-once' });
  if (o.sweep) {
    const sync = fixtureRun(
      'synchronous',
      'sweep',
      allAtOnce,
      { kind: 'concurrency', concurrency: 1 },
      { ...continuous, concurrency: 1 },
      false,
      1,
    );
    const sat = fixtureRun('saturating', 'sweep', allAtOnce, { kind: 'all-at-once' }, continuous, false, 2);
    const lo = sync.summary.requestsPerSec;
    const hi = sat.summary.requestsPerSec;
    const between = Array.from({ length: f.sweepRates }, (_, i) => {
      const rateRps = lo + ((hi - lo) * (i + 1)) / (f.sweepRates + 1);
      return fixtureRun(
        `${rateRps.toFixed(2)} req/s`,
        'sweep',
        trace({ kind: 'poisson', rateRps, burstiness: 1 }),
        { kind: 'poisson', rateRps, burstiness: 1 },
        continuous,
        false,
        3 + i,
      );
    });
    return [sync, sat, ...between];
  }
  const calibration = fixtureRun(
    'saturation (calibration)',
    'calibration',
    allAtOnce,
    { kind: 'all-at-once' },
    continuous,
    false,
    0,
  );
  const rateRps = SERVE_DEFAULTS.autoRateShare * calibration.summary.requestsPerSec;
  const arrival = { kind: 'poisson', rateRps, burstiness: 1 } as const;
  const t = trace(arrival);
  const caches = o.prefixCache ? [false, true] : [false];
  const arms = (['continuous', 'static'] as const).flatMap((batching) =>
    caches.map((prefixCache) => ({ batching, prefixCache, concurrency: null })),
  );
  return [
    calibration,
    ...arms.map((a, i) =>
      fixtureRun(
        `${a.batching}${o.prefixCache ? `, prefix cache ${a.prefixCache ? 'on' : 'off'}` : ''}`,
        'ab',
        t,
        arrival,
        a,
        true,
        10 + i,
      ),
    ),
  ];
}

/**
 * A `--suite serve` run of ci-tiny on SwiftShader (the speculative fixture's machine): by default a
 * calibration at saturation, then continuous and static batching on one Poisson trace of 20
 * requests at 90% of the calibrated rate, every output identical to the request run alone, one
 * preemption in the continuous arm (the pool is small on purpose). `prefixCache` adds the cache
 * on/off arms; `sweep` gives a rate sweep instead. Validated like `makeResult`.
 */
export function makeServeResult(
  options: ServeFixtureOptions = {},
  overrides: Partial<BenchResult> = {},
): BenchResult {
  const f = SERVE_FIXTURE;
  const base = makeSpecResult();
  const spec = specFromOptions(
    { kind: 'preset', preset: f.preset, seed: 0 },
    {
      suite: 'serve',
      requests: f.requests,
      slo: { ...f.slo },
      tokenBudget: f.tokenBudget,
      maxBatch: f.maxBatch,
      pageSize: f.pageSize,
      kvTokens: f.kvTokens,
      batching: 'both',
      prefixCache: options.prefixCache ? 'both' : 'off',
      ...(options.prefixCache ? { prefixTokens: f.prefix.tokens, prefixShare: f.prefix.share } : {}),
      sweep: options.sweep ? f.sweepRates : 0,
    },
  );
  const runs = serveRuns(options);
  const checks = runs
    .filter((r) => r.identical)
    .map((r) => ({
      name: `serve ${r.label}: every finished request's tokens identical to the request run alone (${r.identical?.checked} checked, 0 differ; 0 replayed rows differ)`,
      maxAbsErr: 0,
      maxRelErr: 0,
      passed: true,
    }));
  const { speculative: _, ...rest } = base;
  const result: BenchResult = {
    ...rest,
    createdAt: f.createdAt,
    spec: { suite: spec.suite, kv: spec.kv, autotune: spec.autotune, workloads: spec.workloads },
    coldStart: { compileMs: 2280.7, loadMs: 91.4 },
    serve: serveResult(runs),
    validation: { ...base.validation, checks: [...base.validation.checks, ...checks] },
  };
  return BenchResultSchema.parse({ ...result, ...overrides });
}

/**
 * A `--suite batch` run: one decode step of B = 1…32 sequences at depth 8 on the made-up laptop of
 * `makeResult`, and its B-scaling curve read off those points by the engine's own `batchScaling`.
 * The step gets slower than its bound as B grows (more dispatches' worth of work per row), as
 * measured runs do.
 */
export function makeBatchScalingResult(overrides: Partial<BenchResult> = {}): BenchResult {
  const base = makeResult();
  const spec = specFromOptions({ kind: 'preset', preset: FIXTURE.preset, seed: 0 }, { suite: 'batch' });
  const points = BATCH_SIZES.map((batch, i) => makePoint(decodeShape(8, batch, i)));
  return BenchResultSchema.parse({
    ...base,
    spec: { suite: spec.suite, kv: spec.kv, autotune: spec.autotune, workloads: spec.workloads },
    points,
    batchScaling: batchScaling(points, base.peaks),
    ...overrides,
  });
}

/**
 * The format sweep fixture: `--suite formats` on the made-up laptop of `makeResult` (smollm2-135m,
 * prefill L = 64, decode at depth 64), f32 first. FLOPs and bytes per pass come from the engine's
 * cost model for each format (a linear weight counts its quants and scales), and the table is read
 * off the points by the engine's own `formatSummary`. The times follow a stated formula, not a
 * measurement: a decode step costs its bytes at the share of copy bandwidth the format's GEMV
 * reaches (dequantization costs the narrower formats some of it) plus the step's launches and
 * submit, so int4 saves less than its bytes; a prefill is compute-bound, and dequantizing inside
 * the matmul makes the narrow formats a little slower there.
 */
const FORMATS_FIXTURE = {
  length: SUITES.formats.prefill[0],
  depth: SUITES.formats.depths[0],
  /** Share of the copy bandwidth each format's decode GEMV reaches. */
  bandwidthShare: { f32: 0.85, f16: 0.8, int8: 0.65, int4: 0.5 },
  /** Prefill time over the cost model's, per format. */
  prefillSlowdown: { f32: 1.5, f16: 1.55, int8: 1.7, int4: 1.8 },
  /** Normwise relative error of the logits on the `short` slice, per quantized format. */
  relErr: { f16: 2.9e-4, int8: 5.8e-3, int4: 6.1e-2 },
  /** Each slice's error relative to `short`'s: rare tokens and long contexts err more. */
  sliceFactor: { short: 1, long: 1.15, repeated: 0.8, rare: 1.3, 'long-decode': 1.2 },
  /** Mean KL, nats, per squared relative error (small perturbations: KL grows with the square). */
  klPerRelErr2: 0.9,
  /** Share of next tokens whose argmax flips, per unit of relative error. */
  flipsPerRelErr: 2.2,
  createdAt: '2026-12-09T10:00:00.000Z',
} as const;

/** The quality slices' shapes, as src/workloads/formats.ts sizes them for a model of `maxSeqLen`. */
function qualitySliceShapes(maxSeqLen: number, steps = 8) {
  const half = Math.floor(maxSeqLen / 2);
  return [
    { slice: 'short', promptTokens: [5, 16], steps },
    { slice: 'long', promptTokens: [maxSeqLen - steps], steps },
    { slice: 'repeated', promptTokens: [32, 32], steps },
    { slice: 'rare', promptTokens: [16, 16], steps },
    { slice: 'long-decode', promptTokens: [half], steps: Math.min(4 * steps, maxSeqLen - half) },
  ] as const;
}

/** One format's error on every slice, from the fixture's formulas (see FORMATS_FIXTURE). */
function qualityRows(format: Exclude<WeightFormat, 'f32'>): Quality[] {
  const f = FORMATS_FIXTURE;
  return qualitySliceShapes(config.maxSeqLen).map(({ slice, promptTokens, steps }) => {
    const relErr = f.relErr[format] * f.sliceFactor[slice];
    const distributions = promptTokens.length * steps;
    // Whole flips out of the slice's distributions, spread evenly: the first is where greedy output leaves f32's.
    const flips = Math.min(distributions, Math.floor(distributions * relErr * f.flipsPerRelErr));
    return {
      format,
      slice,
      relErr,
      top1Agreement: (distributions - flips) / distributions,
      klDiv: f.klPerRelErr2 * relErr ** 2,
      divergenceStep: flips > 0 ? Math.floor(distributions / (flips + 1)) : null,
      prompts: promptTokens.length,
      steps,
      promptTokens: [...promptTokens],
    };
  });
}

/** The points of one format: a prefill at L and a decode step at the depth, carrying the format. */
function formatPoints(format: WeightFormat): Point[] {
  const f = FORMATS_FIXTURE;
  const prefill = prefillCost(config, f.length, 0, undefined, format);
  const decode = decodeCost(config, [f.depth], undefined, format);
  const { dispatchUs, submitUs, copyGBps } = FIXTURE.peaks;
  const decodeMs =
    decode.bytes / (copyGBps * f.bandwidthShare[format] * PER_MS) +
    (dispatches * dispatchUs + submitUs) / 1000;
  const shape = (
    pass: Point['pass'],
    cost: { flops: number; bytes: number },
    slowdown: number,
  ): PointShape => ({
    pass,
    tokens: pass === 'prefill' ? f.length : 1,
    depth: pass === 'prefill' ? 0 : f.depth,
    batch: 1,
    flops: cost.flops,
    bytes: cost.bytes,
    slowdown,
    spread: FIXTURE.sampleSpread,
    withKernels: false,
  });
  return [
    { ...makePoint(shape('prefill', prefill, f.prefillSlowdown[format])), weightFormat: format },
    {
      ...makePoint(shape('decode', decode, decodeMs / predictedMsOf(decode.flops, decode.bytes).predictedMs)),
      weightFormat: format,
    },
  ];
}

/**
 * A `--suite formats` run (see FORMATS_FIXTURE): a prefill and a decode point per format, the
 * format table, and each quantized format's error against f32 on the five slices. `formats`
 * narrows the sweep (f32 is always measured: it is the reference). Validated like `makeResult`.
 */
export function makeFormatsResult(
  formats: readonly WeightFormat[] = WEIGHT_FORMATS,
  overrides: Partial<BenchResult> = {},
): BenchResult {
  const base = makeResult();
  const spec = specFromOptions(
    { kind: 'preset', preset: FIXTURE.preset, seed: 0 },
    { suite: 'formats', weights: [...formats], reps: FIXTURE.sampleSpread.length },
  );
  const swept: WeightFormat[] = ['f32', ...formats.filter((x) => x !== 'f32')];
  const points = swept.flatMap(formatPoints);
  return BenchResultSchema.parse({
    ...base,
    createdAt: FORMATS_FIXTURE.createdAt,
    spec: {
      suite: spec.suite,
      kv: spec.kv,
      autotune: spec.autotune,
      weights: spec.weights,
      workloads: spec.workloads,
    },
    model: { ...base.model, weightFormat: 'f32' },
    points,
    formats: formatSummary(points, config),
    quality: swept.flatMap((format) => (format === 'f32' ? [] : qualityRows(format))),
    ...overrides,
  });
}

/**
 * The fusion workload's made-up figures: each graph's slowdown against the cost model at the quick
 * suite's L = 256 and a decode at depth 128, and the dispatches by role the engine would record in
 * one pass of SmolLM2-135M (30 layers): 6 per layer fused, 16 unfused (and its final norm).
 */
const FUSION_FIXTURE = {
  length: 256,
  depth: 128,
  slowdown: {
    fused: { prefill: 1.6, decode: 1.3 },
    unfused: { prefill: 1.8, decode: 2.1 },
  },
  perLayer: {
    fused: {
      'qkv proj': 1,
      'rope + kv write': 1,
      attention: 1,
      'o proj': 1,
      'gate/up proj': 1,
      'down proj': 1,
    },
    unfused: {
      rmsnorm: 2,
      'qkv proj': 3,
      rope: 2,
      'kv write': 1,
      attention: 1,
      'o proj': 1,
      'residual add': 2,
      'gate/up proj': 2,
      swiglu: 1,
      'down proj': 1,
    },
  },
} as const;

function fusionDispatches(graph: 'fused' | 'unfused'): Record<string, number> {
  const calls: Record<string, number> = { embedding: 1, 'lm head': 1, argmax: 1 };
  for (const [role, n] of Object.entries(FUSION_FIXTURE.perLayer[graph])) calls[role] = n * layers;
  if (graph === 'unfused') calls.rmsnorm += 1;
  return calls;
}

/**
 * A quick-suite run with its fusion workload (see FUSION_FIXTURE): the sweep's points, then a
 * prefill and a decode point per graph carrying the graph, and the fusion table built from them by
 * the same summary as a real run. Validated like `makeResult`.
 */
export function makeFusionResult(overrides: Partial<BenchResult> = {}): BenchResult {
  const base = makeResult();
  const f = FUSION_FIXTURE;
  const points: Point[] = (['fused', 'unfused'] as const).flatMap((graph) => {
    const prefill = prefillShape(f.length, 0);
    const decode = decodeShape(f.depth, 1, 0);
    return [
      {
        ...makePoint({
          ...prefill,
          slowdown: f.slowdown[graph].prefill,
          spread: FIXTURE.sampleSpread,
          withKernels: false,
        }),
        graph,
      },
      { ...makePoint({ ...decode, slowdown: f.slowdown[graph].decode, withKernels: false }), graph },
    ];
  });
  const records = (['fused', 'unfused'] as const).map((graph) => ({
    type: 'fusion' as const,
    graph,
    fused: graph === 'fused',
    layers,
    prefill: { tokens: f.length, dispatches: fusionDispatches(graph) },
    decode: { depth: f.depth, dispatches: fusionDispatches(graph) },
  }));
  const all = [...base.points, ...points];
  return BenchResultSchema.parse({
    ...base,
    spec: {
      ...base.spec,
      fuse: true,
      workloads: [
        ...base.spec.workloads,
        { kind: 'fusion', length: f.length, depth: f.depth, gen: 16, reps: 5, warmup: 1 },
      ],
    },
    model: { ...base.model, graph: 'fused' },
    points: all,
    fusion: fusionSummary(all, records),
    ...overrides,
  });
}
