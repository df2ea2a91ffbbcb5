import type { Model, StepResult } from '../model/forward.ts';
import { type SamplingSettings, sampleToken } from '../model/sampler.ts';
import { mulberry32 } from '../random.ts';
import { commitStep, kvPort } from './driver.ts';
import { KV_BUDGET_ERROR, type KvBudget, peakKvTokens } from './kv-budget.ts';
import { Scheduler, type ServeRequest } from './scheduler.ts';

/**
 * The engine behind the HTTP server: the load test's scheduler and paged KV cache, fed by requests
 * that arrive while it runs instead of by a trace. One loop owns the model: each turn plans one
 * step (decode rows and prompt chunks of every running request), runs it as one `Model.step`, and
 * hands each request its new tokens the moment the step's readback returns. Nothing else touches
 * the model, so a cancel that lands while a step is in flight waits for that step to end, and only
 * then frees the request's pages (its rows are in the command buffer being run).
 *
 * Times are on the caller's clock (`now`, epoch milliseconds in the server, so the client on the
 * same machine can line its own stamps up with them).
 */

export interface OnlineOptions {
  maxBatch: number;
  /** Tokens per step: decode rows plus prompt-chunk tokens (the scheduler's budget). */
  tokenBudget: number;
  /** Requests allowed to wait for a batch slot; one more is refused (HTTP 429). */
  maxWaiting: number;
  /**
   * Automatic prefix caching: a prompt whose leading full pages another request computed (a shared
   * system prompt, an agent session's history) attaches them instead of computing them again. The
   * model must have been built with a prefix-caching KV pool.
   */
  prefixCache?: boolean;
  /** The most KV one request may hold: refused before it is queued (reject), or its prompt's oldest tokens cut (truncate). */
  kvBudget?: KvBudget;
  now: () => number;
}

/** A request's server-side timeline, on the `now` clock (ms). */
export interface OnlineTimeline {
  receivedMs: number;
  admittedMs: number | null;
  firstTokenMs: number | null;
  finishMs: number | null;
}

export type OnlineEnd =
  | {
      status: 'finished';
      tokens: number[];
      timeline: OnlineTimeline;
      tokenTimesMs: number[];
      /** Prompt tokens served from the prefix cache (0 without one). */
      cachedTokens: number;
    }
  | { status: 'cancelled' | 'failed'; error: string; tokens: number[]; timeline: OnlineTimeline };

export interface OnlineSubmit {
  prompt: readonly number[];
  maxTokens: number;
  /** Ends the request after a token it returns true for (an end-of-generation token), before maxTokens. */
  stopAfter?: (token: number) => boolean;
  /** Sample each token (temperature above 0) instead of taking the GPU's argmax. */
  sampling?: SamplingSettings;
  /** New tokens of a step, in order, with the time the step's readback returned. */
  onTokens: (tokens: number[], atMs: number) => void;
  /** Called exactly once: finished, cancelled (by `cancel`) or failed (the engine or the request). */
  onEnd: (end: OnlineEnd) => void;
}

export interface OnlineHandle {
  /** Stops the request (a client that went away); its pages are freed after the step in flight. */
  cancel(reason: string): void;
}

export interface OnlineStats {
  running: number;
  waiting: number;
  kvUsedPages: number;
  kvTotalPages: number;
  steps: number;
}

interface Entry {
  req: ServeRequest;
  sub: OnlineSubmit;
  sent: number;
  ended: boolean;
  /** The request's own seeded draws, when it samples. */
  random?: () => number;
}

export class OnlineEngine {
  private readonly scheduler: Scheduler;
  private readonly entries = new Map<ServeRequest, Entry>();
  private readonly cancels = new Map<ServeRequest, string>();
  private nextId = 1;
  private steps = 0;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private stopped: string | null = null;

  constructor(
    private readonly model: Model,
    private readonly o: OnlineOptions,
  ) {
    this.scheduler = new Scheduler(kvPort(model, o.prefixCache === true), {
      batching: 'continuous',
      policy: 'fcfs',
      tokenBudget: o.tokenBudget,
      maxBatch: o.maxBatch,
      ...(o.kvBudget ? { kvBudget: o.kvBudget } : {}),
    });
  }

  /**
   * Queues a request. Returns null (and calls nothing) when the queue is full: the caller answers
   * 429. A request that can never fit the KV pool ends at once as failed, with the reason.
   */
  submit(sub: OnlineSubmit): OnlineHandle | null {
    if (this.stopped !== null) {
      sub.onEnd({ status: 'failed', error: this.stopped, tokens: [], timeline: blankTimeline(this.o.now()) });
      return { cancel: () => {} };
    }
    if (this.scheduler.waitingCount >= this.o.maxWaiting) return null;
    const req = this.scheduler.arrive({
      id: this.nextId++,
      class: 'http',
      priority: 0,
      prompt: sub.prompt,
      outputTokens: sub.maxTokens,
      arrivalMs: this.o.now(),
      stopAfter: sub.stopAfter,
    });
    const sampled = sub.sampling && sub.sampling.temperature > 0 ? sub.sampling : undefined;
    const entry: Entry = {
      req,
      sub,
      sent: 0,
      ended: false,
      random: sampled ? mulberry32(sampled.seed) : undefined,
    };
    this.entries.set(req, entry);
    if (req.state === 'failed') this.end(entry);
    else this.kick();
    return { cancel: (reason) => this.cancel(req, reason) };
  }

  /**
   * Why a request would be refused before it is queued, or null: the engine has stopped (a lost
   * device: the server answers 503), or the request can never fit the KV pool (400). The server
   * asks before it answers, so a refusal is an HTTP error, not a stream that ends at once.
   */
  refusal(
    promptTokens: number,
    maxTokens: number,
  ): { status: 400 | 503; message: string; code?: typeof KV_BUDGET_ERROR } | null {
    if (this.stopped !== null) return { status: 503, message: this.stopped };
    const budget = this.o.kvBudget;
    if (budget?.policy === 'reject' && peakKvTokens(promptTokens, maxTokens) > budget.tokens) {
      return {
        status: 400,
        code: KV_BUDGET_ERROR,
        message: `The request would hold ${peakKvTokens(promptTokens, maxTokens)} KV tokens (${promptTokens} prompt tokens + ${maxTokens} to generate, less the last), over the server's per-request budget of ${budget.tokens}. Reduce the prompt or max_tokens.`,
      };
    }
    const pageSize = this.model.kv.pageSize;
    const total = this.model.kv.allocator.stats().totalPages;
    const need = Math.ceil((promptTokens + maxTokens - 1) / pageSize);
    if (need > total) {
      return {
        status: 400,
        message: `The request needs ${need} KV pages (${promptTokens} prompt tokens + ${maxTokens} to generate, ${pageSize} per page) and the server's pool has ${total}: it can never run. Reduce the prompt or max_tokens.`,
      };
    }
    return null;
  }

  stats(): OnlineStats {
    const kv = this.model.kv.allocator.stats();
    return {
      running: this.scheduler.runningCount,
      waiting: this.scheduler.waitingCount,
      kvUsedPages: kv.usedPages,
      kvTotalPages: kv.totalPages,
      steps: this.steps,
    };
  }

  /** Fails every open request with `reason` and refuses new ones; resolves when the loop has stopped. */
  async close(reason: string): Promise<void> {
    this.stopped = reason;
    for (const e of [...this.entries.values()]) this.cancel(e.req, reason);
    this.kick();
    await this.loop;
  }

  private cancel(req: ServeRequest, reason: string): void {
    const e = this.entries.get(req);
    if (!e || e.ended) return;
    this.cancels.set(req, reason);
    // Outside a step the pages are free to go now; inside one the loop applies it when the step ends.
    if (this.loop === null) this.applyCancels();
  }

  private applyCancels(): void {
    const now = this.o.now();
    for (const [req, reason] of this.cancels) {
      const e = this.entries.get(req);
      if (e && !e.ended && req.state !== 'finished' && req.state !== 'failed') {
        this.scheduler.fail(req, reason, now);
        this.end(e, 'cancelled');
      }
    }
    this.cancels.clear();
  }

  private kick(): void {
    if (this.wake) {
      const w = this.wake;
      this.wake = null;
      w();
    }
    if (this.loop === null) {
      this.loop = this.run().finally(() => {
        this.loop = null;
        // A request submitted after the loop's last look at the queue but before this ran found
        // the loop still set and did not start one: start it now, or it would wait forever.
        if (this.scheduler.busy) this.kick();
      });
    }
  }

  private async run(): Promise<void> {
    for (;;) {
      this.applyCancels();
      if (!this.scheduler.busy) return;
      const plan = this.scheduler.plan(this.o.now());
      if (plan.decodes.length === 0 && plan.prefills.length === 0) {
        // Every page is held by requests still prefilling: wait for a cancel or a new arrival.
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, 1);
        });
        continue;
      }
      let result: Awaited<ReturnType<Model['step']>>;
      // Logits come back only when a request of the step samples (a greedy step reads ids alone).
      const samples = (req: ServeRequest) => this.entries.get(req)?.random !== undefined;
      const logits = plan.decodes.some((d) => samples(d.req)) || plan.prefills.some((p) => samples(p.req));
      try {
        result = await this.model.step(
          {
            decodes: plan.decodes.map((d) => ({ seq: d.req.seq as number, token: d.token })),
            prefills: plan.prefills.map((p) => ({ seq: p.req.seq as number, tokens: p.tokens })),
          },
          { logits },
        );
        if (logits) result = this.sample(plan, result);
      } catch (err) {
        // A lost device or an engine fault: every open request fails with it, and the server stops taking work.
        const message = `engine step failed: ${(err as Error)?.message ?? err}`;
        this.stopped = message;
        const now = this.o.now();
        for (const e of [...this.entries.values()]) {
          if (e.req.state === 'running' || e.req.state === 'waiting')
            this.scheduler.fail(e.req, message, now);
          this.end(e, 'failed');
        }
        return;
      }
      const done = this.o.now();
      this.steps++;
      if (this.o.prefixCache) commitStep(this.model.kv.allocator, plan);
      const touched = new Set([...plan.decodes.map((d) => d.req), ...plan.prefills.map((p) => p.req)]);
      this.scheduler.complete(plan, result.decodeTokens, result.prefillTokens, done);
      for (const req of touched) {
        const e = this.entries.get(req);
        if (!e || e.ended) continue;
        if (req.generated.length > e.sent) {
          const fresh = req.generated.slice(e.sent);
          e.sent = req.generated.length;
          e.sub.onTokens(fresh, done);
        }
        if (req.state === 'finished' || req.state === 'failed') this.end(e);
      }
    }
  }

  /**
   * The step's tokens with each sampling request's drawn from its logits (its own seeded draws, in
   * step order); the greedy requests keep the GPU's argmax. A prefill chunk that is not its
   * prompt's last also draws, and the scheduler drops that token, as it drops the argmax.
   */
  private sample(plan: ReturnType<Scheduler['plan']>, r: StepResult): StepResult {
    const vocab = this.model.config.vocabSize;
    const draw = (req: ServeRequest, greedy: number, row: Float32Array | undefined) => {
      const e = this.entries.get(req);
      const s = e?.sub.sampling;
      if (!e?.random || !s || !row) return greedy;
      return sampleToken(row, s, e.random());
    };
    return {
      decodeTokens: plan.decodes.map((d, b) =>
        draw(d.req, r.decodeTokens[b], r.decodeLogits?.subarray(b * vocab, (b + 1) * vocab)),
      ),
      prefillTokens: plan.prefills.map((p, i) => draw(p.req, r.prefillTokens[i], r.prefillLogits?.[i])),
    };
  }

  /** Ends a request once: its callback, and it leaves the scheduler's list (a server runs for days). */
  private end(e: Entry, as?: 'cancelled' | 'failed'): void {
    if (e.ended) return;
    e.ended = true;
    this.entries.delete(e.req);
    const i = this.scheduler.all.indexOf(e.req);
    if (i >= 0) this.scheduler.all.splice(i, 1);
    const r = e.req;
    const timeline: OnlineTimeline = {
      receivedMs: r.arrivalMs,
      admittedMs: r.admittedMs,
      firstTokenMs: r.tokenTimesMs[0] ?? null,
      finishMs: r.finishMs,
    };
    if (r.state === 'finished' && as === undefined) {
      e.sub.onEnd({
        status: 'finished',
        tokens: r.generated,
        timeline,
        tokenTimesMs: r.tokenTimesMs,
        cachedTokens: r.prefixHitTokens,
      });
    } else {
      e.sub.onEnd({
        status: as ?? 'failed',
        error: r.error ?? 'request failed',
        tokens: r.generated,
        timeline,
      });
    }
  }
}

function blankTimeline(now: number): OnlineTimeline {
  return { receivedMs: now, admittedMs: null, firstTokenMs: null, finishMs: now };
}
