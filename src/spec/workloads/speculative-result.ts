import { z } from 'zod';
import { BoundSchema, count, nonNegative, TimebaseSchema } from '../fields.ts';

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
    /**
     * The output equals plain greedy decode of the same prompts, token for token; null under
     * sampling, where a text is one draw and the acceptance rule is what keeps the distribution.
     */
    identical: z.boolean().nullable(),
    /** Speculative sampling at this temperature (top-k and top-p off); absent: greedy. */
    temperature: z.number().positive().optional(),
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
