import { z } from 'zod';
import { ModelConfigSchema } from '../model/config.ts';

/**
 * The versioned result of one benchmark run. The engine validates what it returns against this
 * schema, and the page and the compare tool validate every imported file with it: one schema at
 * the edges, for output and for untrusted input alike.
 */
export const SCHEMA_VERSION = 1;

const finite = z.number().finite();
const nonNegative = finite.nonnegative();
/** Percentiles of a latency distribution, in milliseconds. */
export const PercentilesSchema = z.object({ p50: nonNegative, p95: nonNegative, p99: nonNegative }).strict();

export const BoundSchema = z.enum(['compute', 'bandwidth', 'overhead']);
export type Bound = z.infer<typeof BoundSchema>;

/** Time and cost of one kernel within a pass (profile mode), summed over its calls in the pass. */
export const KernelTimeSchema = z
  .object({
    name: z.string().max(200),
    medianMs: nonNegative,
    flops: nonNegative,
    bytes: nonNegative,
    calls: z.number().int().nonnegative(),
  })
  .strict();

export const PointSchema = z
  .object({
    pass: z.enum(['prefill', 'decode']),
    /** Prefill: the prompt length L. Decode: 1 (tokens per sequence per step). */
    tokens: z.number().int().positive(),
    /** Prefill: 0. Decode: the context length before the generated tokens. */
    depth: z.number().int().nonnegative(),
    batch: z.number().int().positive(),
    pageSize: z.number().int().positive(),
    kvMode: z.enum(['paged', 'contiguous']),
    reps: z.number().int().positive(),
    /** Wall-clock time of each measured pass (warm-up excluded), ms. */
    samplesMs: z.array(nonNegative).min(1),
    medianMs: nonNegative,
    p95Ms: nonNegative,
    stddevMs: nonNegative,
    ci95Ms: z.tuple([finite, finite]),
    /** Coefficient of variation (stddev / mean). */
    cv: nonNegative,
    highVariance: z.boolean(),
    /** Change from the first to the last sample, percent (throttling shows as positive drift). */
    driftPct: finite,
    /** Median GPU time from timestamp queries, ms; null when the adapter has no timestamps. */
    gpuMedianMs: nonNegative.nullable(),
    tokensPerSec: nonNegative,
    flops: nonNegative,
    bytes: nonNegative,
    /** FLOPs per byte moved. */
    intensity: nonNegative,
    gflops: nonNegative,
    gbps: nonNegative,
    bound: BoundSchema,
    /** Percentage of the roof that binds this point (compute, bandwidth or the overhead floor). */
    roofPct: nonNegative,
    /** The cost model's predicted time, ms, and the measured time's error against it, percent. */
    predictedMs: nonNegative,
    predictionErrorPct: finite,
    dispatches: z.number().int().nonnegative(),
    kernels: z.array(KernelTimeSchema),
  })
  .strict();
export type Point = z.infer<typeof PointSchema>;

/** One kernel timed alone at one shape (the kernel suite). */
export const KernelPointSchema = z
  .object({
    name: z.string().max(200),
    /** The kernel family and parameters that ran (the autotuner's choice). */
    variant: z.string().max(200),
    /** {M, K, N} for matmul-like kernels, {L, depth, batch, heads, headDim} for attention. */
    shape: z.record(z.string().max(50), nonNegative),
    medianMs: nonNegative,
    samplesMs: z.array(nonNegative).min(1),
    flops: nonNegative,
    bytes: nonNegative,
    gflops: nonNegative,
    gbps: nonNegative,
    bound: z.enum(['compute', 'bandwidth']),
    roofPct: nonNegative,
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

export const BenchResultSchema = z
  .object({
    schemaVersion: z.literal(SCHEMA_VERSION),
    createdAt: z.iso.datetime(),
    tool: z.object({ name: z.string().max(200), version: z.string().max(100) }).strict(),
    status: z.enum(['complete', 'cancelled', 'failed']),
    /** Why a run stopped early; its finished points are kept. */
    error: z.string().max(5000).optional(),
    env: z
      .object({
        userAgent: z.string().max(1000),
        browser: z.string().max(200),
        adapter: AdapterSchema,
        features: z.array(z.string().max(200)).max(200),
        limits: z.record(z.string().max(200), finite),
        timestamps: z.object({ supported: z.boolean(), quantumNs: nonNegative.nullable() }).strict(),
        crossOriginIsolated: z.boolean(),
      })
      .strict(),
    model: z
      .object({
        preset: z.string().max(500),
        config: ModelConfigSchema,
        params: z.number().int().nonnegative(),
        weightBytes: z.number().int().nonnegative(),
      })
      .strict(),
    peaks: z
      .object({
        fmaGflops: nonNegative,
        copyGBps: nonNegative,
        dispatchUs: nonNegative,
        submitUs: nonNegative,
        /** Every configuration tried; the peak is the best of each kind. */
        trials: z.array(
          z
            .object({
              kind: z.enum(['fma', 'copy', 'dispatch', 'submit']),
              label: z.string().max(200),
              value: finite,
            })
            .strict(),
        ),
      })
      .strict(),
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
                  })
                  .strict(),
              ),
            })
            .strict(),
        ),
      })
      .strict()
      .optional(),
    points: z.array(PointSchema),
    kernelPoints: z.array(KernelPointSchema).optional(),
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
    latency: z
      .object({
        ttftMs: PercentilesSchema,
        tpotMs: PercentilesSchema,
        itlMs: PercentilesSchema,
        e2eMs: PercentilesSchema,
      })
      .strict(),
    validation: z
      .object({
        maxAbsErr: nonNegative,
        maxRelErr: nonNegative,
        passed: z.boolean(),
        checks: z.array(
          z
            .object({
              name: z.string().max(200),
              maxAbsErr: nonNegative,
              maxRelErr: nonNegative,
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
