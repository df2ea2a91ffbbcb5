import { z } from 'zod';
import { MAX_DECODE_BATCH } from '../../kernels/limits.ts';

/**
 * The load test's settings (`--suite serve`): traffic, scheduler and experiment. Imports no
 * engine code (the CLI validates specs in Node). The trace itself is generated in the workload,
 * because the default mix is scaled to the model's maxSeqLen; an imported trace travels here.
 */

const positive = z.number().positive().finite();

/** How requests arrive. `rateRps: null` means "near saturation": measured first, then 90% of it. */
export const ServeArrivalSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('poisson'),
      rateRps: positive.max(1e6).nullable(),
      /** Gamma shape of the inter-arrival times: 1 is Poisson, below 1 burstier (vLLM's --burstiness). */
      burstiness: positive.max(1000),
    })
    .strict(),
  z.object({ kind: z.literal('concurrency'), concurrency: z.number().int().min(1).max(1024) }).strict(),
  z.object({ kind: z.literal('all-at-once') }).strict(),
]);
export type ServeArrival = z.infer<typeof ServeArrivalSchema>;

export const SloSchema = z
  .object({ ttftMs: positive.optional(), tpotMs: positive.optional(), e2elMs: positive.optional() })
  .strict();

/** One request of an imported trace (the JSONL fields, in ms). */
export const TraceRequestSchema = z
  .object({
    id: z.number().int().nonnegative(),
    arrivalMs: z.number().nonnegative().finite(),
    promptTokens: z.number().int().positive(),
    outputTokens: z.number().int().positive(),
    prefixId: z.number().int().nonnegative().nullable(),
    prefixTokens: z.number().int().nonnegative(),
    class: z.string().min(1).max(50),
    priority: z.number().int(),
    session: z
      .object({
        id: z.number().int().nonnegative(),
        turn: z.number().int().min(1),
        toolWaitMs: z.number().nonnegative().finite(),
        newTokens: z.number().int().positive(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type TraceRequest = z.infer<typeof TraceRequestSchema>;

export const ToolWaitSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fixed'), ms: z.number().nonnegative().finite() }).strict(),
  z
    .object({
      kind: z.literal('uniform'),
      minMs: z.number().nonnegative().finite(),
      maxMs: z.number().nonnegative().finite(),
    })
    .strict(),
  z
    .object({ kind: z.literal('lognormal'), medianMs: positive, sigma: z.number().nonnegative().max(5) })
    .strict(),
]);

/** exp(N(ln median, σ²)) for lognormal: median medianMs, mean medianMs · e^(σ²/2), a long right tail as tool calls have. */
export type ToolWait = z.infer<typeof ToolWaitSchema>;

/** 'case': the case study's traffic (serve-case.ts), run by --suite case, not a --mix of its own. */
export const SERVE_MIXES = ['default', 'matrix', 'case'] as const;

export const ServeWorkloadSchema = z
  .object({
    kind: z.literal('serve'),
    arrival: ServeArrivalSchema,
    /** Requests in the trace (an imported trace sets its own). */
    requests: z.number().int().min(1).max(5000),
    /** Stop generating arrivals after this many seconds; null: all `requests`. */
    durationS: positive.max(86_400).nullable(),
    /** default: 60% short Q&A, 25% long RAG prompts, 15% long generations; matrix: short/long in × out, each alone then mixed. */
    mix: z.enum(SERVE_MIXES),
    /** A shared system prompt: its tokens, and the share of requests that start with it. */
    prefixTokens: z
      .number()
      .int()
      .min(0)
      .max(1 << 17),
    prefixShare: z.number().min(0).max(1),
    /** Share of requests with priority 1 (the rest 0); with the priority policy they may preempt. */
    priorityShare: z.number().min(0).max(1),
    policy: z.enum(['fcfs', 'priority']),
    slo: SloSchema,
    /** Arms run on the same trace, in one result. */
    batching: z
      .array(z.enum(['continuous', 'static']))
      .min(1)
      .max(2),
    prefixCache: z.array(z.boolean()).min(1).max(2),
    /** Tokens one engine step may compute (decode rows count one each). */
    tokenBudget: z.number().int().min(1).max(8192),
    /** Most requests running at once. */
    maxBatch: z.number().int().min(1).max(MAX_DECODE_BATCH),
    /** KV page size of the arms' paged cache (the spec's). */
    pageSize: z
      .number()
      .int()
      .refine((v) => [8, 16, 32].includes(v), { message: 'must be 8, 16 or 32' }),
    /** KV pool in tokens; null: room for maxBatch sequences at the model's maxSeqLen. */
    kvTokens: z
      .number()
      .int()
      .min(1)
      .max(1 << 24)
      .nullable(),
    /** Rate sweep: a synchronous run, a saturating run, then this many rates between (0: no sweep). */
    sweep: z.number().int().min(0).max(10),
    /** Run each request alone on the idle engine afterwards (slowdown and the identical-output check). */
    solo: z.boolean(),
    seed: z.number().int().nonnegative(),
    /**
     * Agent sessions instead of single requests (src/serve/sessions.ts): how many, turns per session
     * (uniform min…max), and the tool wait between turns. Lengths are scaled to the model's context.
     */
    sessions: z
      .object({
        count: z.number().int().min(1).max(1000),
        turns: z
          .object({ min: z.number().int().min(1).max(64), max: z.number().int().min(1).max(64) })
          .strict(),
        toolWait: ToolWaitSchema,
      })
      .strict()
      .nullable(),
    /** The most KV one request may hold (tokens, or a percent of the pool), and what happens over it. */
    kvBudget: z
      .object({
        tokens: z
          .number()
          .int()
          .min(1)
          .max(1 << 24)
          .nullable(),
        sharePct: z.number().positive().max(100).nullable(),
        policy: z.enum(['reject', 'truncate']),
      })
      .strict()
      .nullable(),
    /** Pools on the one engine (serve-pools.ts): two named shares, and the rule that routes to the second. */
    pools: z
      .object({
        pools: z
          .array(z.object({ name: z.string().min(1).max(31), share: z.number().positive().lt(1) }).strict())
          .length(2),
        route: z.discriminatedUnion('field', [
          z
            .object({ field: z.literal('class'), op: z.literal('='), value: z.string().min(1).max(50) })
            .strict(),
          z
            .object({
              field: z.enum(['prompt', 'output']),
              op: z.enum(['>', '<']),
              value: z.number().int().nonnegative(),
            })
            .strict(),
        ]),
      })
      .strict()
      .nullable(),
    /** An imported trace (replayed instead of generating one). */
    trace: z.array(TraceRequestSchema).min(1).max(5000).nullable(),
  })
  .strict();
export type ServeWorkload = z.infer<typeof ServeWorkloadSchema>;

export const SERVE_DEFAULTS = {
  requests: 40,
  burstiness: 1,
  prefixShare: 0.5,
  priorityShare: 0,
  policy: 'fcfs',
  tokenBudget: 128,
  maxBatch: 8,
  /** Saturation is measured, then the trace is sent at this share of it. */
  autoRateShare: 0.9,
  /** Share of requests that must meet every SLO for a swept rate to count as meeting them. */
  sloAttainment: 0.9,
} as const;

/** Context a serve workload's requests need at most, when it is known before the model is (an imported trace). */
export function traceContext(w: ServeWorkload): number {
  return w.trace ? Math.max(...w.trace.map((r) => r.promptTokens + r.outputTokens)) : 0;
}
