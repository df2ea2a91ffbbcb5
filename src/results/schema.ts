import { z } from 'zod';
import { ModelConfigSchema } from '../model/config.ts';
import { BenchSpecSchema, QUALITY_SLICES, WorkloadSchema } from '../spec/spec.ts';
import { WEIGHT_FORMATS } from '../weight-format.ts';
import { BatchScalingPointSchema, ServeResultSchema } from './serve-schema.ts';

/**
 * The versioned result of one benchmark run. The engine validates what it returns against this
 * schema, and the page and the compare tool validate every imported file with it: one schema at
 * the edges, for output and for untrusted input alike.
 */
export const SCHEMA_VERSION = 2;

const finite = z.number().finite();
const nonNegative = finite.nonnegative();
/** Percentiles of a latency distribution, in milliseconds. */
export const PercentilesSchema = z.object({ p50: nonNegative, p95: nonNegative, p99: nonNegative }).strict();

export const BoundSchema = z.enum(['compute', 'bandwidth', 'overhead']);
export type Bound = z.infer<typeof BoundSchema>;

/**
 * The clock that placed a point on the roofline: 'gpu' (timestamp-query spans, what the kernels
 * cost) where the adapter has timestamps, they are not quantized and every span was positive;
 * 'wall' (performance.now() in the engine worker: submit, GPU work and readback) otherwise.
 */
export const TimebaseSchema = z.enum(['gpu', 'wall']);
export type Timebase = z.infer<typeof TimebaseSchema>;

/**
 * GPU time and cost of one kernel role within a pass (profiled runs, one pass per kernel), summed
 * over its calls in the pass; for decode, per step of the same generation the point measures.
 * `calls` is what the engine recorded, which the cost model's dispatch count must equal.
 */
export const KernelTimeSchema = z
  .object({
    name: z.string().max(200),
    medianMs: nonNegative,
    flops: nonNegative,
    bytes: nonNegative,
    /** Bytes as the kernel really moves them (attention's K/V re-reads included); see Point. */
    bytesAsImplemented: nonNegative,
    calls: z.number().int().nonnegative(),
  })
  .strict();

/** Fields every timed point has, passes and kernels alike: both clocks, and which one placed it. */
const timedFields = {
  timebase: TimebaseSchema,
  /** Why the point is wall-placed although the adapter has GPU timestamps (e.g. a non-positive span). */
  timebaseNote: z.string().max(500).optional(),
  /** One sample per repetition, in the timebase clock; the statistics below are of these. */
  samplesMs: z.array(nonNegative).min(1),
  /** The same repetitions in each clock; GPU null when the adapter has no timestamps (or they failed). */
  wallSamplesMs: z.array(nonNegative).min(1),
  gpuSamplesMs: z.array(nonNegative).nullable(),
  /** Median of samplesMs. */
  medianMs: nonNegative,
  wallMedianMs: nonNegative,
  gpuMedianMs: nonNegative.nullable(),
  flops: nonNegative,
  bytes: nonNegative,
  gflops: nonNegative,
  gbps: nonNegative,
  bound: BoundSchema,
  /** Percentage of the roof that binds this point (compute, bandwidth or the overhead floor). */
  roofPct: nonNegative,
};

/** A model's weight format; "mixed" when its linear layers differ (a GGUF file may mix types). */
export const WeightFormatSchema = z.enum([...WEIGHT_FORMATS, 'mixed']);

/**
 * One format's error on one slice of inputs, against the f32 model on the same inputs: over the
 * slice's next-token distributions (each prompt's prefill, then its decode steps fed f32's greedy
 * tokens, so both models always see the same context).
 */
export const QualitySchema = z
  .object({
    format: z.enum(WEIGHT_FORMATS),
    slice: z.enum(QUALITY_SLICES),
    /** Normwise relative error of the logits, ‖format − f32‖₂ / ‖f32‖₂ over every distribution of the slice. */
    relErr: nonNegative,
    /** Share of the distributions whose argmax is f32's. */
    top1Agreement: z.number().min(0).max(1),
    /** Mean KL(f32 ‖ format) of the next-token distributions, nats. */
    klDiv: nonNegative,
    /** First generated token (0-based, over the slice's prompts in order) where greedy output leaves f32's; null: none within `steps`. */
    divergenceStep: z.number().int().nonnegative().nullable(),
    prompts: z.number().int().positive(),
    /** Distributions compared per prompt. */
    steps: z.number().int().positive(),
    /** Prompt lengths of the slice, tokens. */
    promptTokens: z.array(z.number().int().positive()).max(64),
  })
  .strict();
export type Quality = z.infer<typeof QualitySchema>;

/** The format sweep's summary: one row per format, from its prefill and decode points in the same run. */
export const FormatSummarySchema = z
  .object({
    format: z.enum(WEIGHT_FORMATS),
    /** Bytes of the linear weights and LM head on the GPU (quants, scales, padding). */
    linearBytes: z.number().int().nonnegative(),
    /** Compulsory bytes of one decode step at the sweep's depth (cost model, scales included). */
    decodeBytesPerToken: nonNegative,
    tpotMs: nonNegative,
    tokensPerSec: nonNegative,
    /** TPOT over f32's TPOT in the same run; null without an f32 point. */
    tpotRatio: nonNegative.nullable(),
    prefillMs: nonNegative,
    prefillRatio: nonNegative.nullable(),
  })
  .strict();
export type FormatSummary = z.infer<typeof FormatSummarySchema>;

/** A model's graph: the fused one (6 dispatches per layer) or the unfused reference (16). */
export const GraphSchema = z.enum(['fused', 'unfused']);

/**
 * The fusion workload's summary: one row per graph, from its prefill and decode points in the same
 * run and the dispatches the engine recorded in those passes (not the cost model's count).
 */
export const FusionSummarySchema = z
  .object({
    /** The graph asked for. */
    graph: GraphSchema,
    /** Whether the model really ran the fused graph (the chosen kernel families may not take the fusions). */
    fused: z.boolean(),
    /** Dispatches the engine recorded in one prefill of `prefillTokens` and in one decode step, all roles. */
    prefillDispatches: z.number().int().nonnegative(),
    decodeDispatches: z.number().int().nonnegative(),
    /** The same without the dispatches outside the layers (embedding, LM head, argmax, the unfused final norm), per layer. */
    prefillPerLayer: nonNegative,
    decodePerLayer: nonNegative,
    prefillTokens: z.number().int().positive(),
    decodeDepth: z.number().int().nonnegative(),
    /** Prefill: TTFT p50 of the point; decode: TPOT p50 (both wall clock, as the points record them). */
    prefillMs: nonNegative,
    tpotMs: nonNegative,
    /** Over the unfused row's in the same run (1 on the unfused row); null without an unfused row. */
    prefillRatio: nonNegative.nullable(),
    tpotRatio: nonNegative.nullable(),
  })
  .strict();
export type FusionSummary = z.infer<typeof FusionSummarySchema>;

export const PointSchema = z
  .object({
    pass: z.enum(['prefill', 'decode']),
    /** Prefill: the prompt length L. Decode: 1 (tokens per sequence per step). */
    tokens: z.number().int().positive(),
    /** Prefill: 0. Decode: the context length before the generated tokens (0: a one-token prompt). */
    depth: z.number().int().nonnegative(),
    batch: z.number().int().positive(),
    pageSize: z.number().int().positive(),
    kvMode: z.enum(['paged', 'contiguous']),
    reps: z.number().int().positive(),
    ...timedFields,
    p95Ms: nonNegative,
    stddevMs: nonNegative,
    ci95Ms: z.tuple([finite, finite]),
    /** Coefficient of variation (stddev / mean). */
    cv: nonNegative,
    highVariance: z.boolean(),
    /** Change from the first to the last sample, percent (throttling shows as positive drift). */
    driftPct: finite,
    /** Tokens per second of wall clock: L per prefill, or batch per TPOT. */
    tokensPerSec: nonNegative,
    /** Prefill: time to first token for this prompt length (wall clock, no queue). Decode: of the depth prompt. */
    ttftMs: PercentilesSchema.optional(),
    /** Decode: time per output token, one sample per repetition (wall clock). */
    tpotMs: PercentilesSchema.optional(),
    /** Decode: every gap between consecutive tokens of this point's repetitions (wall clock). */
    itlMs: PercentilesSchema.optional(),
    /** Decode: those gaps themselves, for the ITL distribution. */
    itlSamplesMs: z
      .array(nonNegative)
      .max(1 << 20)
      .optional(),
    /**
     * Bytes the pass moves as implemented: `bytes` (compulsory, each input once) plus the K/V rows
     * attention loads again (per block of queries, per pass over a group of query heads).
     */
    bytesAsImplemented: nonNegative,
    /** FLOPs per compulsory byte. */
    intensity: nonNegative,
    /** The cost model's predicted time, ms, and the measured time's error against it, percent. */
    predictedMs: nonNegative,
    predictionErrorPct: finite,
    dispatches: z.number().int().nonnegative(),
    kernels: z.array(KernelTimeSchema),
    /** The format of the model's linear weights at this point (absent in files from before formats: f32). */
    weightFormat: WeightFormatSchema.optional(),
    /**
     * The graph of the fusion workload's points, which time both graphs in one run. Absent on every
     * other point: the run's own graph is `model.graph`, so runs of either graph join in a comparison.
     */
    graph: GraphSchema.optional(),
  })
  .strict()
  .refine(
    (p) => (p.pass === 'prefill' ? p.ttftMs !== undefined : p.tpotMs !== undefined && p.itlMs !== undefined),
    {
      message: 'a prefill point carries ttftMs; a decode point carries tpotMs and itlMs',
    },
  );
export type Point = z.infer<typeof PointSchema>;

/** One kernel timed alone at one shape (the kernel suite). */
export const KernelPointSchema = z
  .object({
    name: z.string().max(200),
    /** The kernel family and parameters that ran (the autotuner's choice). */
    variant: z.string().max(200),
    /** {M, K, N} for matmul-like kernels, {L, depth, batch, heads, headDim} for attention. */
    shape: z.record(z.string().max(50), nonNegative),
    ...timedFields,
  })
  .strict();
export type KernelPoint = z.infer<typeof KernelPointSchema>;

export const AdapterSchema = z
  .object({
    vendor: z.string().max(500),
    architecture: z.string().max(500),
    device: z.string().max(500),
    description: z.string().max(500),
    isFallbackAdapter: z.boolean(),
  })
  .strict();

/** Roofs measured on the device in the same run. */
export const PeaksSchema = z
  .object({
    fmaGflops: nonNegative,
    copyGBps: nonNegative,
    /**
     * Cost of one more dispatch in a pass, µs: a dispatch with bound buffers that depends on the one
     * before it (so the GPU must wait), as a model's dispatches do. Used for the overhead floor.
     */
    dispatchUs: nonNegative,
    /** The same for an empty dispatch with nothing bound: the API's own floor, shown beside it. */
    emptyDispatchUs: nonNegative,
    /** Submit of a tiny command buffer plus a 4-byte readback, µs: the floor of any pass a user waits for. */
    submitUs: nonNegative,
    /** Every configuration tried; the peak is the best of each kind. */
    trials: z.array(
      z
        .object({
          kind: z.enum(['fma', 'copy', 'dispatch', 'empty-dispatch', 'submit']),
          label: z.string().max(200),
          value: finite,
        })
        .strict(),
    ),
  })
  .strict();
export type PeaksRecord = z.infer<typeof PeaksSchema>;

const count = z.number().int().nonnegative();
const pagedContiguous = z.object({ paged: count, contiguous: count }).strict();
const poolBytes = z.object({ reservedBytes: count, usedBytes: count, wastedBytes: count }).strict();

/**
 * The capacity probe (workload 'capacity'): how many sequences of a seeded length mix the real
 * KV pool admitted, paged and contiguous, against what the KV calculator predicts for the same
 * pool bytes and the same lengths.
 */
export const CapacityResultSchema = z
  .object({
    /** 2 · layers · kvHeads · headDim · 4 (the engine's KV is f32), from the calculator. */
    kvBytesPerToken: count,
    pageSize: count,
    maxSeqLen: count,
    /** The pool asked for, and the per-layer buffer limit of the device that may have capped it. */
    requestedBytes: count,
    deviceLimitBytes: count,
    /** The mix the sequences were drawn from. */
    mix: z
      .object({ meanTokens: count, longShare: nonNegative, longFactor: nonNegative, seed: count })
      .strict(),
    /** The calculator's admission count for the pool's bytes: pages rounded up, or maxSeqLen reserved each. */
    predicted: pagedContiguous,
    /** The same without page rounding (exact tokens): the upper end of "up to page rounding". */
    predictedUnrounded: count,
    /** Sequences the allocator admitted before the first failure. */
    reached: pagedContiguous,
    /** reached.paged ÷ reached.contiguous (null when contiguous admitted none). */
    pagedOverContiguous: nonNegative.nullable(),
    /** The paged pool at its fullest (the top-level figures the issue names). */
    ...poolBytes.shape,
    contiguous: poolBytes,
    /** Every admitted token's slot was written on the GPU and read back holding its own sequence's marker. */
    slotsVerified: z.boolean(),
    /** 'exact': reached = predicted; 'page-rounding': between the rounded and the unrounded prediction; else 'mismatch'. */
    agreement: z.enum(['exact', 'page-rounding', 'mismatch']),
    /** Why the numbers differ, when they do. */
    note: z.string().max(2000).nullable(),
  })
  .strict();
export type CapacityResult = z.infer<typeof CapacityResultSchema>;

/**
 * One point of the verify-K curve: a verify pass of k tokens after `depth` cached ones, against one
 * decode step at the same depth, both timed alone in the same clock (`timebase`), and the verify
 * pass placed on the roofline by its own FLOPs and bytes.
 */
export const VerifyPointSchema = z
  .object({
    /** Tokens verified in the pass (a draft of K needs K + 1: the pending token first). */
    k: z.number().int().positive(),
    depth: count,
    reps: count,
    timebase: TimebaseSchema,
    /** Medians over the samples, ms. */
    verifyMs: nonNegative,
    decodeMs: nonNegative,
    /** verifyMs ÷ decodeMs: what verifying k tokens costs in decode steps. */
    ratio: nonNegative,
    verifySamplesMs: z.array(nonNegative).min(1),
    decodeSamplesMs: z.array(nonNegative).min(1),
    /** The same medians by the wall clock (what the decoding loop waits for). */
    wallVerifyMs: nonNegative,
    wallDecodeMs: nonNegative,
    /** Chunks the pass ran in (the GEMV's batch limit): each reads the weights once. */
    chunks: z.number().int().positive(),
    flops: nonNegative,
    bytes: nonNegative,
    intensity: nonNegative,
    gflops: nonNegative,
    gbps: nonNegative,
    bound: BoundSchema,
    roofPct: nonNegative,
    /** The roofline's time for the pass: max(FLOPs/peak, bytes/bandwidth) + dispatch (and, wall, submit) overhead. */
    predictedMs: nonNegative,
  })
  .strict();
export type VerifyPoint = z.infer<typeof VerifyPointSchema>;

/** One drafter at one draft length on one prompt class, against plain greedy decode of the same prompts. */
export const SpecRunSchema = z
  .object({
    /** The drafter as asked for (`ngram`, `model:PRESET`, `truncated:N`, `oracle:P`). */
    drafter: z.string().max(100),
    /** Its name in reports; the synthetic oracle says so. */
    label: z.string().max(200),
    /** True for the controlled-acceptance oracle, which knows the answer: calibration, not a method. */
    synthetic: z.boolean(),
    k: z.number().int().positive(),
    adaptiveK: z.boolean(),
    promptClass: z.string().max(50),
    prompts: z.number().int().positive(),
    promptTokens: z.number().int().positive(),
    /** Tokens generated per prompt (the first from the prefill). */
    tokens: z.number().int().positive(),
    /** Verify steps over all prompts. */
    steps: count,
    drafted: count,
    accepted: count,
    /** accepted ÷ drafted. */
    acceptanceRate: nonNegative,
    /** 1 + accepted ÷ steps: tokens per verify step. */
    meanAcceptanceLength: nonNegative,
    /** Share of proposals accepted at each draft position (1st, 2nd, …). */
    perPosition: z.array(nonNegative),
    /** Mean wall time per step of the drafter's proposal and of the verify pass, ms. */
    draftMs: nonNegative,
    verifyMs: nonNegative,
    /** Wall clock: (time of the last token − time of the first) ÷ (tokens − 1), mean over prompts. */
    tpotMs: nonNegative,
    baselineTpotMs: nonNegative,
    /** baselineTpotMs ÷ tpotMs, both from this run. */
    speedup: nonNegative,
    /** What the cost model predicts from the measured acceptance and draft time and the curve (see formula). */
    predictedSpeedup: nonNegative,
    /** The output equals plain greedy decode of the same prompts, token for token. */
    identical: z.boolean(),
    /** The first differing token, when not identical. */
    firstMismatch: z.object({ prompt: count, index: count }).strict().nullable(),
  })
  .strict();
export type SpecRun = z.infer<typeof SpecRunSchema>;

/** Speculative decoding (workload 'spec'): the verify-K curve, its knee, and the measured runs. */
export const SpecResultSchema = z
  .object({
    verifyCurve: z.array(VerifyPointSchema),
    /** The largest k whose verify costs ≤ kneeRatio × a decode step at every depth; null if none does. */
    knee: z.number().int().positive().nullable(),
    kneeRatio: nonNegative,
    kneeByDepth: z.array(z.object({ depth: count, k: z.number().int().positive().nullable() }).strict()),
    runs: z.array(SpecRunSchema),
    /** The predicted-speedup formula, in words. */
    formula: z.string().max(1000),
    /** The clock of the runs' times. */
    clock: z.string().max(300),
  })
  .strict();
export type SpecResult = z.infer<typeof SpecResultSchema>;

export const BenchResultSchema = z
  .object({
    schemaVersion: z.literal(SCHEMA_VERSION),
    createdAt: z.iso.datetime(),
    tool: z.object({ name: z.string().max(200), version: z.string().max(100) }).strict(),
    status: z.enum(['complete', 'cancelled', 'failed']),
    /** Why a run stopped early (the error's class name and message); its finished records are kept. */
    error: z
      .object({ name: z.string().max(100), message: z.string().max(5000) })
      .strict()
      .optional(),
    /** What was asked for: the workload list after fitting it to the model, and the engine settings. */
    spec: z
      .object({
        suite: BenchSpecSchema.shape.suite,
        kv: BenchSpecSchema.shape.kv,
        autotune: z.boolean(),
        /** The `--weights` format asked for (absent in older files: f32). */
        weights: BenchSpecSchema.shape.weights.optional(),
        /** Whether the fused graph was asked for (`--no-fuse`: false; absent in older files). */
        fuse: z.boolean().optional(),
        workloads: z.array(WorkloadSchema).max(16),
      })
      .strict(),
    env: z
      .object({
        userAgent: z.string().max(1000),
        browser: z.string().max(200),
        adapter: AdapterSchema,
        features: z.array(z.string().max(200)).max(200),
        limits: z.record(z.string().max(200), finite),
        timestamps: z
          .object({
            supported: z.boolean(),
            /** The tick every span was a multiple of, when the browser quantizes timestamps; null when it does not. */
            quantumNs: nonNegative.nullable(),
          })
          .strict(),
        /** What each clock is, by name, so a reader knows what a "ms" means. */
        clocks: z.object({ gpu: z.string().max(300), wall: z.string().max(300) }).strict(),
        crossOriginIsolated: z.boolean(),
        /**
         * Where the engine ran: the browser's Web Worker, or Node on Dawn (npm `webgpu`) with its
         * version and the backend it asked for. Absent in files written before the native runtime
         * (all of them browser runs).
         */
        runtime: z
          .object({
            name: z.enum(['browser', 'node']),
            dawn: z.string().max(200).nullable(),
            backend: z.string().max(50).nullable(),
          })
          .strict()
          .optional(),
      })
      .strict(),
    model: z
      .object({
        preset: z.string().max(500),
        config: ModelConfigSchema,
        params: z.number().int().nonnegative(),
        weightBytes: z.number().int().nonnegative(),
        /** The linear layers' format (absent in files from before formats: f32). */
        weightFormat: WeightFormatSchema.optional(),
        /** The graph the run's model really ran (absent in older files and in runs without a model). */
        graph: GraphSchema.optional(),
      })
      .strict(),
    /** The roofs measured before the workloads: every point and kernel is placed against these. */
    peaks: PeaksSchema,
    /**
     * The roofs measured again after the workloads (null when the run stopped early). Targets are
     * judged against the best of both, so a roof measured low on a busy machine flatters nothing.
     */
    peaksAfter: PeaksSchema.nullable(),
    coldStart: z.object({ compileMs: nonNegative, loadMs: nonNegative }).strict(),
    /** The per-device kernel search: what was tried, how fast, and what was chosen. */
    tuning: z
      .object({
        enabled: z.boolean(),
        cached: z.boolean(),
        searchMs: nonNegative,
        choices: z.array(
          z
            .object({
              op: z.string().max(50),
              shape: z.string().max(200),
              chosen: z.string().max(200),
              trials: z.array(
                z
                  .object({
                    variant: z.string().max(200),
                    valid: z.boolean(),
                    ms: nonNegative.nullable(),
                    error: z.string().max(1000).optional(),
                    /** The last successive-halving rung it was timed in (absent in older files, or never timed). */
                    rung: z.number().int().nonnegative().optional(),
                    /** Not tried: the op's search budget ran out first. */
                    skipped: z.literal(true).optional(),
                  })
                  .strict(),
              ),
              /** How the op's space was searched (absent in files from before the tuning space). */
              search: z
                .object({
                  method: z.literal('successive-halving'),
                  eta: z.number().int().min(2),
                  reps0: z.number().int().positive(),
                  budgetMs: nonNegative.nullable(),
                  space: z.number().int().positive(),
                  tried: z.number().int().nonnegative(),
                  rungs: z.number().int().nonnegative(),
                  budgetSpent: z.boolean(),
                })
                .strict()
                .optional(),
            })
            .strict(),
        ),
      })
      .strict()
      .optional(),
    points: z.array(PointSchema),
    kernelPoints: z.array(KernelPointSchema).optional(),
    capacity: CapacityResultSchema.optional(),
    /**
     * Speculative decoding. The issue called these fields spec.verifyCurve and spec.runs, but
     * `spec` has been the run's own spec since schema v2, so they live here.
     */
    speculative: SpecResultSchema.optional(),
    /** The load test (`--suite serve`): one run per experiment arm, every request's timeline kept. */
    serve: ServeResultSchema.optional(),
    /** The B-scaling sweep (`--suite batch`): one decode step of B sequences against its roofline bound. */
    batchScaling: z.array(BatchScalingPointSchema).optional(),
    /** The format sweep (`--suite formats`): per format, bytes per decode token, TPOT and ratios to f32. */
    formats: z.array(FormatSummarySchema).optional(),
    /** Error by slice of each format against f32 on the same inputs (the format sweep). */
    quality: z.array(QualitySchema).optional(),
    /** The fused graph against the unfused one (`--suite fusion`, and the quick suite's last workload). */
    fusion: z.array(FusionSummarySchema).optional(),
    /** Performance targets judged against this run's own roofs. */
    targets: z
      .array(
        z
          .object({
            name: z.string().max(300),
            target: z.string().max(300),
            reached: z.string().max(500),
            met: z.boolean().nullable(),
            note: z.string().max(500).optional(),
          })
          .strict(),
      )
      .optional(),
    /** Errors are null where the GPU's output held NaN or ±Inf (no error figure exists). */
    validation: z
      .object({
        maxAbsErr: nonNegative.nullable(),
        maxRelErr: nonNegative.nullable(),
        passed: z.boolean(),
        checks: z.array(
          z
            .object({
              name: z.string().max(200),
              maxAbsErr: nonNegative.nullable(),
              maxRelErr: nonNegative.nullable(),
              passed: z.boolean(),
            })
            .strict(),
        ),
      })
      .strict(),
    warnings: z.array(z.string().max(2000)),
  })
  .strict();
export type BenchResult = z.infer<typeof BenchResultSchema>;
