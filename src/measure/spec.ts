import { z } from 'zod';
import { SpecError } from '../errors.ts';
import { GEMV_LIMITS } from '../kernels/limits.ts';
import { PAGE_SIZES } from '../kv/cache.ts';

/** The built-in sweeps. `quick` finishes in a couple of minutes on a software adapter with ci-tiny. */
export const SUITES = {
  quick: { prefill: [16, 32, 64, 128, 256], depths: [16, 128, 512], gen: 16, reps: 3 },
  full: { prefill: [16, 32, 64, 128, 256, 512, 1024], depths: [0, 256, 1024], gen: 32, reps: 5 },
} as const;
export type SuiteName = keyof typeof SUITES;

const ModelSourceSchema = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('preset'), preset: z.string().min(1), seed: z.number().int().nonnegative() })
    .strict(),
  z
    .object({ kind: z.literal('url'), baseUrl: z.string().min(1), weightsFile: z.string().min(1).optional() })
    .strict(),
  /** Files picked in the page; Blobs cross to the worker as they are. */
  z
    .object({
      kind: z.literal('files'),
      config: z.instanceof(Blob),
      weights: z.instanceof(Blob),
      name: z.string(),
    })
    .strict(),
]);

const lengthList = z
  .array(
    z
      .number()
      .int()
      .positive()
      .max(1 << 17),
  )
  .max(64);

/**
 * What to measure. Built by the CLI from flags and by the page from its form, validated by this
 * one schema on both sides, and recorded in the result.
 */
export const BenchSpecSchema = z
  .object({
    model: ModelSourceSchema,
    /** 'kernels' times each kernel alone at the model's shapes instead of whole passes. */
    suite: z.enum(['quick', 'full', 'custom', 'kernels']),
    /** Prompt lengths L of the prefill sweep. */
    prefill: lengthList,
    /** Context depths of the decode sweep (tokens in the cache before generation starts). */
    depths: z
      .array(
        z
          .number()
          .int()
          .nonnegative()
          .max(1 << 17),
      )
      .max(64),
    /** Tokens generated per decode point and repetition (the first one comes from the prefill). */
    gen: z.number().int().min(2).max(4096),
    /** Measured repetitions per point, after the warm-up. Three at the least, so spread can be judged. */
    reps: z.number().int().min(3).max(1000),
    /** Discarded warm-up repetitions per point. */
    warmup: z.number().int().min(1).max(100),
    pageSize: z.number().refine((v) => (PAGE_SIZES as readonly number[]).includes(v), {
      message: `must be one of ${PAGE_SIZES.join(', ')}`,
    }),
    kvMode: z.enum(['paged', 'contiguous']),
    /** Sequences decoded together in each decode step. */
    batch: z.number().int().min(1).max(GEMV_LIMITS.maxBatch),
    /** Time every kernel of every repetition (one pass per kernel), not just one profiled run per point. */
    profile: z.boolean(),
    /** Search the kernel families for this device before measuring (false: the GPU-oriented defaults). */
    autotune: z.boolean().default(true),
  })
  .strict()
  .refine((s) => s.suite === 'kernels' || s.prefill.length + s.depths.length > 0, {
    message: 'nothing to measure: no prefill lengths and no depths',
  });
export type BenchSpec = z.infer<typeof BenchSpecSchema>;

export function parseBenchSpec(input: unknown): BenchSpec {
  const r = BenchSpecSchema.safeParse(input);
  if (r.success) return r.data;
  throw new SpecError(
    `Invalid benchmark spec: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
  );
}

/** A spec from a suite's defaults, with overrides. */
export function suiteSpec(suite: SuiteName, overrides: Partial<BenchSpec> = {}): BenchSpec {
  const s = SUITES[suite];
  return parseBenchSpec({
    model: { kind: 'preset', preset: 'ci-tiny', seed: 0 },
    suite,
    prefill: [...s.prefill],
    depths: [...s.depths],
    gen: s.gen,
    reps: s.reps,
    warmup: 1,
    pageSize: 16,
    kvMode: 'paged',
    batch: 1,
    profile: false,
    autotune: true,
    ...overrides,
  });
}
