import { z } from 'zod';
import { ModelConfigSchema } from '../model/config.ts';
import { PeersSectionSchema } from '../peers/schema.ts';
import {
  BoundSchema,
  finite,
  GraphSchema,
  nonNegative,
  PercentilesSchema,
  TimebaseSchema,
  WeightFormatSchema,
} from '../spec/fields.ts';
import { GenerationSchema, PromptTextSchema } from '../spec/prompt.ts';
import { BenchSpecSchema } from '../spec/schema.ts';
import { SECTIONS, WorkloadSchema } from '../spec/workloads/index.ts';

/**
 * The versioned result of one benchmark run. The engine validates what it returns against this
 * schema, and the page and the compare tool validate every imported file with it: one schema at
 * the edges, for output and for untrusted input alike.
 */
export const SCHEMA_VERSION = 2;

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
        /**
         * The text the sweeps' prompt tokens were cut from (`--prompt`, `--prompt-file`), with the
         * number of tokens the model's tokenizer made of it; absent: the stand-in tokens.
         */
        prompt: PromptTextSchema.extend({ tokens: z.number().int().positive() }).strict().optional(),
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
        /**
         * A browser on another machine (`--connect`: a Playwright browser server; `--cdp`: a DevTools
         * endpoint), with the client's Playwright version; absent when the browser ran here.
         */
        remote: z
          .object({
            endpoint: z.string().max(1000),
            kind: z.enum(['connect', 'cdp']),
            playwright: z.string().max(50),
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
        /**
         * The weights by tensor type (a GGUF file mixes them: Q4_K_M holds Q4_K, Q6_K and f32), each
         * with its bits per weight as the file stores it, and the whole model's (absent in older files).
         */
        weightTypes: z
          .array(
            z
              .object({
                format: z.string().max(20),
                tensors: z.number().int().nonnegative(),
                params: z.number().int().nonnegative(),
                bitsPerWeight: nonNegative,
              })
              .strict(),
          )
          .max(32)
          .optional(),
        bitsPerWeight: nonNegative.optional(),
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
    /** Each workload's own section (capacity, speculative, serve, batchScaling, formats, quality, fusion, …): see its descriptor. */
    ...SECTIONS,
    /**
     * Other engines run on the same GGUF file beside this run (`--peer`): their points, their
     * next-token agreement with this engine, or why they could not run. Absent when none was asked for.
     */
    peers: PeersSectionSchema.optional(),
    /** Text generated greedily on the run's model after its workloads (the page's Prompt box). */
    generation: GenerationSchema.optional(),
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

/** One performance target, judged against roofs measured in the same run. */
export type Target = NonNullable<BenchResult['targets']>[number];
