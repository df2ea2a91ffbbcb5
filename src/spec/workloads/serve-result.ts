import { z } from 'zod';
import { CASE_ROLES } from './serve-case.ts';

/**
 * The load test's section of a result (`serve`) and the B-scaling sweep (`batchScaling`), in the
 * field names the issue fixes so tools outside the project can read them. Every aggregate can be
 * recomputed from `requests[]` (src/serve/metrics.ts holds the definitions: vLLM's).
 */

const ms = z.number().nonnegative().finite();
const count = z.number().int().nonnegative();
const rate = z.number().nonnegative().finite();

export const DistSchema = z.object({ mean: ms, p50: ms, p90: ms, p95: ms, p99: ms }).strict().nullable();

export const ServeSummarySchema = z
  .object({
    completed: count,
    failed: count,
    cancelled: count,
    requestsPerSec: rate,
    outputTokensPerSec: rate,
    totalTokensPerSec: rate,
    goodputRps: rate,
    /** Prompt tokens served from the prefix cache ÷ prompt tokens (finished requests). */
    prefixHitRate: z.number().min(0).max(1),
    prefillTokensComputed: count,
    preemptions: count,
    /** Requests the per-request KV budget refused, and truncated (absent in results before it existed). */
    kvBudgetRejected: count.optional(),
    kvBudgetTruncated: count.optional(),
    ttftMs: DistSchema,
    tpotMs: DistSchema,
    itlMs: DistSchema,
    e2eMs: DistSchema,
    queueMs: DistSchema,
  })
  .strict();
export type ServeSummary = z.infer<typeof ServeSummarySchema>;

/** A request's place in an agent session (src/serve/sessions.ts). */
export const SessionTurnSchema = z
  .object({ id: count, turn: z.number().int().min(1), toolWaitMs: ms, newTokens: count })
  .strict();

export const ServeRequestSchema = z
  .object({
    id: count,
    class: z.string().max(50),
    priority: z.number().int(),
    promptTokens: count,
    outputTokens: count,
    prefixHitTokens: count,
    preemptions: count,
    recomputedTokens: count.optional(),
    /** Prompt tokens the per-request KV budget cut; promptTokens is the prompt that ran. */
    truncatedTokens: count.optional(),
    status: z.enum(['finished', 'failed', 'cancelled']),
    error: z.string().max(500).optional(),
    arrivalMs: ms,
    admittedMs: ms.nullable(),
    tokenTimesMs: z.array(ms),
    finishMs: ms.nullable(),
    soloTtftMs: ms.optional(),
    soloE2eMs: ms.optional(),
    /** What the trace asked for, so `--trace-out` can write the trace back: tokens to generate, and the shared prefix. */
    requestedTokens: count.optional(),
    prefixId: count.nullable().optional(),
    prefixTokens: count.optional(),
    /** Fingerprint of the output tokens (count:FNV-1a), to match a run over HTTP with the in-process one. */
    outputHash: z.string().max(40).optional(),
    /**
     * Over HTTP, where the server returns its timeline: client TTFT split into request and response
     * transit (network, HTTP and SSE framing), the server's queue, and its prefill.
     */
    networkMs: z.number().finite().optional(),
    queueMs: ms.optional(),
    prefillMs: ms.optional(),
    /** Over HTTP: prompt tokens the server says it served from its cache (usage's cached_tokens, llama-server's cache_n). */
    cachedTokens: count.optional(),
    session: SessionTurnSchema.optional(),
    /** The pool it was routed to, in an arm with pools. */
    pool: z.string().max(31).optional(),
  })
  .strict();

const maybe = z.number().nonnegative().finite().nullable();

/** By turn index, over an arm's session turns (src/serve/session-metrics.ts). */
export const TurnSummarySchema = z
  .object({
    turn: z.number().int().min(1),
    total: count,
    finished: count,
    ttftMs: DistSchema,
    promptTokens: maybe,
    newTokens: maybe,
    computedTokens: maybe,
    computedOverNewMax: maybe,
    hitRate: z.number().min(0).max(1).nullable(),
    toolWaitMs: z.number().finite().nullable(),
  })
  .strict();

export const SessionSummarySchema = z
  .object({
    sessions: count,
    completed: count,
    turns: count,
    durationMs: DistSchema,
    split: z
      .object({
        queueMs: z.number().finite(),
        prefillMs: z.number().finite(),
        decodeMs: ms,
        toolWaitMs: z.number().finite(),
      })
      .strict()
      .nullable(),
    byTurn: z.array(TurnSummarySchema).max(64),
  })
  .strict();

export const TimelinePointSchema = z
  .object({
    tMs: ms,
    running: count,
    waiting: count,
    decodeRows: count,
    prefillTokens: count,
    tokensOut: count,
    kvUsedPages: count,
    kvTotalPages: count,
    stepMs: ms,
    /** With pools: each pool's state after the step (tokens: its decode rows and prompt tokens in it). */
    pools: z
      .array(
        z
          .object({ running: count, waiting: count, kvUsedPages: count, kvTotalPages: count, tokens: count })
          .strict(),
      )
      .max(2)
      .optional(),
  })
  .strict();

/** One pool of an arm with pools (src/serve/pools.ts): its capacity, its requests' figures, how busy it was. */
export const PoolSummarySchema = z
  .object({
    name: z.string().max(31),
    share: z.number().positive().lt(1),
    pages: count,
    slots: count,
    tokenBudget: count,
    summary: ServeSummarySchema,
    /** Steps in which the pool had a decode row or a prompt chunk ÷ all steps of the arm. */
    busyStepShare: z.number().min(0).max(1),
    /** The pool's tokens per step (decode rows + prompt tokens), mean over all steps, ÷ its token budget. */
    budgetUse: z.number().min(0).max(1),
    /** Its KV pages in use ÷ its pages, peak and mean over the steps. */
    kvPeak: z.number().min(0).max(1),
    kvMean: z.number().min(0).max(1),
  })
  .strict();

export const SlotSpanSchema = z
  .object({
    slot: z.number().int().min(-1),
    id: count,
    class: z.string().max(50),
    startMs: ms,
    endMs: ms,
    end: z.enum(['finished', 'preempted', 'failed', 'cancelled']),
  })
  .strict();

export const ServeRunSchema = z
  .object({
    label: z.string().max(200),
    /** Which experiment the arm belongs to: the A/B arms, a calibration, a swept rate, a matrix cell. */
    experiment: z.enum(['ab', 'calibration', 'sweep', 'matrix', 'case']),
    /** In the case study (--suite case): which arm this is. */
    caseRole: z.enum(CASE_ROLES).optional(),
    batching: z.enum(['continuous', 'static']),
    prefixCache: z.boolean(),
    policy: z.enum(['fcfs', 'priority']),
    arrival: z
      .object({
        /** 'trace': the arrivals of an imported trace. */
        kind: z.enum(['poisson', 'concurrency', 'all-at-once', 'trace']),
        rateRps: rate.optional(),
        burstiness: z.number().positive().optional(),
        concurrency: count.optional(),
      })
      .strict(),
    seed: count,
    slo: z.object({ ttftMs: ms.optional(), tpotMs: ms.optional(), e2elMs: ms.optional() }).strict(),
    durationMs: ms,
    tokenBudget: count,
    maxBatch: count,
    kvTokens: count,
    /** The per-request KV budget the arm ran under (absent: none). */
    kvBudget: z
      .object({ tokens: count, policy: z.enum(['reject', 'truncate']) })
      .strict()
      .optional(),
    steps: count,
    summary: ServeSummarySchema,
    byClass: z.record(z.string().max(50), ServeSummarySchema),
    /** Short requests' TTFT and E2E against the same request alone on the idle engine. */
    slowdown: z
      .object({
        n: count,
        ttft: z.object({ p50: rate, p95: rate }).strict(),
        e2e: z.object({ p50: rate, p95: rate }).strict(),
      })
      .strict()
      .nullable(),
    /** Finished requests whose tokens equal the same request run alone (null: no solo runs). */
    identical: z
      .object({ checked: count, mismatches: count, firstMismatches: z.array(z.string().max(200)).max(10) })
      .strict()
      .nullable(),
    /** Replayed rows (recompute after a preemption) whose output differed from the token emitted before. */
    replayMismatches: count,
    timeline: z.array(TimelinePointSchema).max(20_000),
    slots: z.array(SlotSpanSchema).max(50_000),
    requests: z.array(ServeRequestSchema).max(5000),
    /** Why the arm stopped before every request finished, if it did. */
    stopped: z.string().max(500).optional(),
    /** Where the traffic went: the engine in this run's process, or an OpenAI-compatible server over HTTP. */
    target: z
      .object({
        kind: z.enum(['in-process', 'http']),
        url: z.string().max(500).optional(),
        /** What the server is: "this project's server (loopback)", or the name its /v1/models gives. */
        server: z.string().max(200).optional(),
        /** Output tokens counted from each chunk's token ids, from the server's `usage`, or one per streamed chunk. */
        tokenCounting: z.enum(['token_ids', 'usage', 'chunks']).optional(),
        /** Median round trip of an empty GET on a warm connection, before the arm. */
        roundTripMs: ms.nullable().optional(),
        /**
         * Session turns whose history stood in for an answer the server streamed without token ids
         * (llama-server's /v1/completions): as many seeded tokens, not what it said.
         */
        standIns: count.optional(),
        /**
         * The case study on a URL server: the arrival times were multiplied by this, this engine's
         * saturation throughput over the server's on the same burst, so the server meets the case at
         * its own load.
         */
        timeScale: z.number().positive().finite().optional(),
      })
      .strict()
      .optional(),
    /** Failed requests over HTTP, by type (connection_refused, timeout, http_429, http_5xx, dropped_stream, …). */
    errors: z.record(z.string().max(40), count).optional(),
    /** Server-side means over the arm from its /metrics, scraped before and after. */
    serverMetrics: z
      .object({
        requests: count,
        queueMsMean: ms.nullable(),
        prefillMsMean: ms.nullable(),
        ttftMsMean: ms.nullable(),
        /**
         * Where the means come from: latency histograms (vLLM, this project's server), or
         * llama-server's counters (llamacpp:prompt_seconds_total and the like: seconds and tokens
         * summed over its slots, no queue time), whose prefill mean is over the arm's finished requests.
         */
        source: z.enum(['histograms', 'llama.cpp counters']).optional(),
        /** llama-server's counters: generation seconds ÷ tokens generated, over its slots. */
        decodeMsPerToken: ms.nullable().optional(),
      })
      .strict()
      .nullable()
      .optional(),
    /** Pools on the one engine and the rule that routed requests to the second (absent: one pool). */
    pools: z.array(PoolSummarySchema).max(2).optional(),
    route: z.string().max(100).optional(),
    /** Agent sessions: durations split, and TTFT, prompt and computed tokens by turn (null: no sessions). */
    sessions: SessionSummarySchema.nullable().optional(),
    /** Over HTTP against an in-process arm of the same trace: finished requests whose tokens match. */
    matchesInProcess: z.object({ checked: count, mismatches: count }).strict().optional(),
  })
  .strict();
export type ServeRun = z.infer<typeof ServeRunSchema>;
export type PoolSummary = z.infer<typeof PoolSummarySchema>;

export const SweepPointSchema = z
  .object({
    label: z.string().max(200),
    /** The offered rate (requests/s); synchronous and saturating runs report what they reached. */
    rateRps: rate,
    requestsPerSec: rate,
    goodputRps: rate,
    p95TtftMs: ms.nullable(),
    /** At least the attainment share of requests met every SLO. */
    meetsSlo: z.boolean(),
  })
  .strict();

export const ServeResultSchema = z
  .object({
    runs: z.array(ServeRunSchema).max(96),
    /** The rate sweep, when one ran. */
    sweep: z
      .object({
        points: z.array(SweepPointSchema),
        /** Share of requests that must meet every SLO for a rate to count as meeting them. */
        attainment: z.number().min(0).max(1),
        maxRateMeetingSlo: rate.nullable(),
      })
      .strict()
      .nullable(),
    clock: z.string().max(300),
    definitions: z.string().max(2000),
  })
  .strict();
export type ServeResult = z.infer<typeof ServeResultSchema>;
