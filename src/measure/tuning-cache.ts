import { z } from 'zod';
import type { AdapterRecord } from '../gpu/device.ts';
import { type KernelVariants, VARIANT_CANDIDATES, variantName } from '../kernels/variants.ts';
import type { ModelConfig } from '../model/config.ts';
import type { WeightFormat } from '../weight-format.ts';
import { SEARCH, type TuneResult } from './autotune.ts';

/**
 * Autotuning results kept between runs (a TuningStore: IndexedDB in the browser's worker, a file
 * in the Node runtime), so the search runs once per device, browser and shape.
 * The key holds everything a choice depends on: the adapter, the browser, the tool version, every
 * dimension of the model, the GEMV batches and the decode context, the weight format, and the candidate list itself,
 * so a new kernel family is tried on a device that cached an older search. What is read back is
 * untrusted (another version may have written it): it is validated, and each cached choice must
 * still be one of today's candidates, or the search runs again.
 */

export interface TuningKey {
  adapter: AdapterRecord;
  browser: string;
  toolVersion: string;
  config: ModelConfig;
  /** The GEMV row counts the search timed. */
  gemvBatches: readonly number[];
  /** The context decode attention was timed at (the run's longest; 0: the search's default depth). */
  decodeContext: number;
  /** The model's weight format: part of the key, so formats never share a choice. */
  weightFormat: WeightFormat | 'mixed';
  /** Whether the search kept to the families that take the fused graph's fusions. */
  fused: boolean;
}

/** The key: everything in `k`, today's candidate lists (the tuning spaces) and the search's settings. */
export function tuningKey(k: TuningKey): string {
  return JSON.stringify({ ...k, candidates: VARIANT_CANDIDATES, search: SEARCH });
}

const TrialSchema = z.object({
  variant: z.string(),
  valid: z.boolean(),
  ms: z.number().nonnegative().nullable(),
  error: z.string().optional(),
  rung: z.number().int().nonnegative().optional(),
  skipped: z.literal(true).optional(),
});

const SearchSchema = z.object({
  method: z.literal('successive-halving'),
  eta: z.number().int().min(2),
  reps0: z.number().int().positive(),
  budgetMs: z.number().nonnegative().nullable(),
  space: z.number().int().positive(),
  tried: z.number().int().nonnegative(),
  rungs: z.number().int().nonnegative(),
  budgetSpent: z.boolean(),
});

const CachedTuneSchema = z.object({
  variants: z.object({
    matmul: z.object({ family: z.string() }).passthrough(),
    gemv: z.object({ family: z.string() }).passthrough(),
    rmsnorm: z.object({ family: z.string() }).passthrough(),
    attentionPrefill: z.object({ family: z.string() }).passthrough(),
    attentionDecode: z.object({ family: z.string() }).passthrough(),
    packedGemv: z.object({ family: z.string() }).passthrough(),
    packedMatmul: z.object({ family: z.string() }).passthrough(),
  }),
  choices: z.array(
    z.object({
      op: z.enum([
        'matmul',
        'gemv',
        'rmsnorm',
        'attentionPrefill',
        'attentionDecode',
        'packedGemv',
        'packedMatmul',
      ]),
      shape: z.string(),
      chosen: z.string(),
      trials: z.array(TrialSchema),
      search: SearchSchema.optional(),
    }),
  ),
  searchMs: z.number().nonnegative(),
});

/** A cached entry, if it validates and every variant in it is one of today's candidates. */
export function validCachedTuning(value: unknown): TuneResult | undefined {
  const parsed = CachedTuneSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const variants = {} as Record<keyof KernelVariants, unknown>;
  for (const op of Object.keys(VARIANT_CANDIDATES) as (keyof KernelVariants)[]) {
    const name = variantName(parsed.data.variants[op] as KernelVariants[typeof op]);
    const current = (VARIANT_CANDIDATES[op] as readonly KernelVariants[typeof op][]).find(
      (v) => variantName(v) === name,
    );
    if (!current) return undefined;
    variants[op] = current;
  }
  return { ...parsed.data, variants: variants as KernelVariants };
}

/** Where the autotuner's winners are kept between runs: IndexedDB in the browser, a file in Node. */
export interface TuningStore {
  /** The stored value, unvalidated (it may be from another version), or undefined. */
  get(key: string): Promise<unknown>;
  put(key: string, value: TuneResult): Promise<void>;
}

/** A cached winner for `key`, validated against this build's candidates, or undefined. */
export async function loadTuning(key: string, store: TuningStore): Promise<TuneResult | undefined> {
  return validCachedTuning(await store.get(key));
}
