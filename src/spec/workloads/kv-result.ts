import { z } from 'zod';
import { KV_DTYPES } from '../../kv/format.ts';
import { count, nonNegative, TimebaseSchema } from '../fields.ts';
import { kvWindow } from '../workload.ts';
import { TaskQualitySchema } from './formats.ts';

/** The long context of the error table is cut into fifths; these three are reported. */
export const ERROR_BUCKETS = ['first', 'middle', 'last'] as const;
export type ErrorBucket = (typeof ERROR_BUCKETS)[number];

/** A time at one context depth, ms. */
const msAtDepth = z.object({ depth: count, ms: nonNegative }).strict();

/**
 * One fifth of the long context (the first, the middle or the last), this cell against the
 * reference cell of its kvHeads (f32 KV, no window, the same weights) fed the same tokens.
 */
export const KvErrorSchema = z
  .object({
    bucket: z.enum(ERROR_BUCKETS),
    /** Normwise relative error of the logits over the bucket's positions, ‖cell − ref‖₂ / ‖ref‖₂. */
    relErr: nonNegative,
    /** Share of the bucket's positions whose argmax is the reference's, 0…1. */
    top1: z.number().min(0).max(1),
    /**
     * The first position (0-based token index in the long context) in the bucket where this cell's
     * greedy token differs from the reference's; null: none in the bucket.
     */
    firstDivergence: count.nullable(),
  })
  .strict();

/** One cell of the matrix: a KV head count, a KV type and a window, on the same model shape. */
export const KvCellSchema = z
  .object({
    /** KV heads of this variant: the model's heads (MHA), a divisor of them (GQA), or 1 (MQA). */
    kvHeads: z.number().int().positive(),
    kvDtype: z.enum(KV_DTYPES),
    /** The sliding window, tokens; null: full attention. */
    window: kvWindow.nullable(),
    /** KV bytes per token, calculated: all layers, K and V, int8's scales included. */
    bytesPerToken: nonNegative,
    /** KV bytes per token as the allocator holds them after a real run (a page's bytes ÷ its tokens). */
    allocatedBytesPerToken: nonNegative,
    /** Pages one sequence holds at each depth (a window's stop growing once it is past W). */
    pagesAt: z.array(z.object({ depth: count, pages: count }).strict()).max(256),
    /** The longest context one sequence reaches in the fixed pool (real allocation, markers read back). */
    maxContext: count,
    /** The most concurrent sequences of `sequenceTokens` tokens the fixed pool admits (real allocation). */
    maxSequences: count,
    /** The length of each of those sequences, tokens. */
    sequenceTokens: z.number().int().positive(),
    /** Decode attention alone per step, at each depth (its clock: the section's `clocks`). */
    decodeAttentionMs: z.array(msAtDepth).max(256),
    /** Time per output token at each depth, wall clock. */
    tpotMs: z.array(msAtDepth).max(256),
    /** One prefill of `prefillTokens`, wall clock. */
    prefillMs: nonNegative,
    /** Error by position against the reference cell; empty for the reference cell itself. */
    error: z.array(KvErrorSchema).max(ERROR_BUCKETS.length),
  })
  .strict();

/**
 * The KV-shrinking matrix (`--suite kv`): for each (kvHeads, KV type, window) on one model shape,
 * the memory a token costs, what fits one fixed pool, the speed at depths, and the error by
 * position against f32 KV without a window.
 */
export const KvSectionSchema = z
  .object({
    /** The model the variants were built from (a preset's name, or the file). */
    model: z.string().max(500),
    heads: z.number().int().positive(),
    headDim: z.number().int().positive(),
    layers: z.number().int().positive(),
    pageSize: z.number().int().positive(),
    maxSeqLen: z.number().int().positive(),
    /** The fixed pool of the fits columns (maxContext, maxSequences), bytes over all layers. */
    poolBytes: count,
    /** L of prefillMs. */
    prefillTokens: z.number().int().positive(),
    /** Tokens of the long context the error table is measured over. */
    errorContext: z.number().int().positive(),
    /**
     * The clock of each time: decode attention by GPU timestamps where the adapter has them (else the
     * wall clock, and it says so here); TPOT and prefill by the wall clock, what a user waits for.
     */
    clocks: z
      .object({ decodeAttentionMs: TimebaseSchema, tpotMs: z.literal('wall'), prefillMs: z.literal('wall') })
      .strict(),
    cells: z.array(KvCellSchema).max(1000),
    /**
     * A trained model: task quality by slice for each KV type and window at the model's own KV
     * heads, against f32 KV with full attention (the format sweep's table, by KV cache).
     */
    taskQuality: z.array(TaskQualitySchema).max(2000).optional(),
  })
  .strict();

export type KvSection = z.infer<typeof KvSectionSchema>;
export type KvCell = z.infer<typeof KvCellSchema>;
export type KvError = z.infer<typeof KvErrorSchema>;
