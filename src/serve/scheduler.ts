import { InternalError } from '../errors.ts';
import { applyKvBudget, type KvBudget } from './kv-budget.ts';

/**
 * The serving scheduler: before every engine step it decides which requests run and how many
 * tokens each computes. It is pure bookkeeping (no GPU, no clock): a driver executes its plan on
 * the engine and hands back the tokens, which is what lets its invariants be unit-tested against a
 * fake engine.
 *
 * Continuous batching (as vLLM schedules with chunked prefill): every step first gives each
 * running request that has finished its prompt one decode row, then spends what is left of the
 * token budget on prompt chunks: of running requests still prefilling, then of waiting requests,
 * admitted one by one while the batch has room and their KV pages fit. Static batching, the
 * baseline: a batch is formed from what is waiting when nothing runs, and nothing joins it until
 * every one of its requests has finished.
 *
 * Preemption by recompute: when a decode row needs a KV page and none is left, running requests
 * are preempted (lowest priority first, then the latest arrival), their pages freed and the
 * victim put back at the front of the queue. On readmission it computes its prompt again and then
 * replays the tokens it had generated as decode rows, whose outputs are already known. vLLM's
 * recompute instead runs one prefill over prompt + output; replaying through the decode path costs
 * more steps but computes every position exactly as the request alone would (the decode kernels
 * are batch-invariant), so the tokens it emits are bit-for-bit those of a solo run, and a replayed
 * row that disagrees with the recorded token is counted as a mismatch, not hidden.
 */

/** The scheduler's view of the KV cache (the driver backs it with the real page allocator). */
export interface KvPort {
  readonly pageSize: number;
  /** Every page of the pool. */
  readonly totalPages: number;
  /** Pages that can still be taken: free ones, plus cached ones no sequence holds (evictable). */
  availablePages(): number;
  /** Pages `seq` must take to grow by `n` tokens (a new sequence: `seq` null). */
  pagesToGrow(seq: number | null, n: number): number;
  /** Creates a request's sequence, attaching any cached prefix of `prompt`; the hit in tokens. */
  open(prompt: readonly number[]): { seq: number; hitTokens: number };
  /** Frees a sequence (a finished or preempted request). */
  close(seq: number): void;
}

export type Batching = 'continuous' | 'static';
export type Policy = 'fcfs' | 'priority';

export interface SchedulerOptions {
  batching: Batching;
  policy: Policy;
  /** Most tokens computed in one step: decode rows count one each, prompt chunks their length. */
  tokenBudget: number;
  /** Most requests running at once (the decode batch). */
  maxBatch: number;
  /** The most KV one request may hold, and what happens to one over it (kv-budget.ts). */
  kvBudget?: KvBudget;
}

export interface ServeRequestInit {
  id: number;
  class: string;
  priority: number;
  /** Prompt token ids. */
  prompt: readonly number[];
  /** Tokens to generate. */
  outputTokens: number;
  /** Arrival, ms from the run's start. */
  arrivalMs: number;
  /**
   * Ends the request early after a token it returns true for (the model's end-of-generation
   * tokens, for a server with a tokenizer); that token is the request's last. Without it a request
   * always generates `outputTokens`.
   */
  stopAfter?: (token: number) => boolean;
  /** Prompt tokens a KV-budget truncation keeps at the head (the shared system prompt). */
  keepHead?: number;
}

export type RequestState = 'waiting' | 'running' | 'finished' | 'failed';

/** A request as the scheduler tracks it; the driver reads its timeline at the end. */
export interface ServeRequest extends ServeRequestInit {
  state: RequestState;
  seq: number | null;
  /** Prompt tokens whose K/V are cached (computed or hit) since the last admission. */
  promptDone: number;
  /** Generated tokens whose K/V are cached (fed back as decode rows) since the last admission. */
  fed: number;
  /** Generated token ids, and when each was first emitted (ms). */
  generated: number[];
  tokenTimesMs: number[];
  admittedMs: number | null;
  finishMs: number | null;
  preemptions: number;
  /** Prompt tokens served from the prefix cache at the first admission (later ones count as recompute saved). */
  prefixHitTokens: number;
  /** Prompt tokens computed again after a preemption (replayed decode rows are not counted). */
  recomputedTokens: number;
  /** Replayed rows whose output differed from the token emitted before the preemption. */
  replayMismatches: number;
  /** Prompt tokens the KV budget cut (0: none). */
  truncatedTokens: number;
  error?: string;
}

export interface PlannedDecode {
  req: ServeRequest;
  /** The token fed: the last generated one, or (replay) the next one already emitted. */
  token: number;
}

export interface PlannedPrefill {
  req: ServeRequest;
  tokens: number[];
}

export interface StepPlan {
  decodes: PlannedDecode[];
  prefills: PlannedPrefill[];
  /** Requests preempted while planning this step (already back in the queue). */
  preempted: ServeRequest[];
  /** Requests admitted while planning this step. */
  admitted: ServeRequest[];
}

/** Pages a request holds at its largest: its prompt and every generated token but the last. */
function peakTokens(r: ServeRequestInit): number {
  return r.prompt.length + r.outputTokens - 1;
}

export class Scheduler {
  /** Arrived and not running, in service order (preempted requests at the front). */
  private readonly waiting: ServeRequest[] = [];
  private readonly running: ServeRequest[] = [];
  readonly all: ServeRequest[] = [];
  /** Static batching: requests of the batch in flight that have not finished. */
  private staticBatchOpen = false;

  constructor(
    private readonly kv: KvPort,
    private readonly o: SchedulerOptions,
  ) {
    if (!(o.tokenBudget >= 1) || !(o.maxBatch >= 1)) {
      throw new InternalError(
        `scheduler: token budget ${o.tokenBudget} and max batch ${o.maxBatch} must be ≥ 1`,
      );
    }
  }

  /** A request arrives. One that can never fit the KV pool fails at once, with the reason. */
  arrive(init: ServeRequestInit): ServeRequest {
    const r: ServeRequest = {
      ...init,
      state: 'waiting',
      seq: null,
      promptDone: 0,
      fed: 0,
      generated: [],
      tokenTimesMs: [],
      admittedMs: null,
      finishMs: null,
      preemptions: 0,
      prefixHitTokens: 0,
      recomputedTokens: 0,
      replayMismatches: 0,
      truncatedTokens: 0,
    };
    this.all.push(r);
    if (this.o.kvBudget) {
      const b = applyKvBudget(r.prompt, r.outputTokens, r.keepHead ?? 0, this.o.kvBudget);
      if (!b.ok) {
        r.state = 'failed';
        r.error = b.error;
        r.finishMs = r.arrivalMs;
        return r;
      }
      r.prompt = b.prompt;
      r.truncatedTokens = b.truncatedTokens;
    }
    const need = Math.ceil(peakTokens(r) / this.kv.pageSize);
    if (need > this.kv.totalPages) {
      r.state = 'failed';
      r.error = `request ${r.id} needs ${need} KV pages (${peakTokens(r)} tokens) and the pool has ${this.kv.totalPages}: it can never run`;
      r.finishMs = r.arrivalMs;
      return r;
    }
    if (r.prompt.length === 0 || r.outputTokens < 1) {
      r.state = 'failed';
      r.error = `request ${r.id} has an empty prompt or asks for no tokens`;
      r.finishMs = r.arrivalMs;
      return r;
    }
    this.enqueue(r, false);
    return r;
  }

  get runningCount(): number {
    return this.running.length;
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Whether anything is left to run (arrived requests only). */
  get busy(): boolean {
    return this.running.length > 0 || this.waiting.length > 0;
  }

  /** Plans the next step. May preempt and admit (updating the KV port); may return an empty plan. */
  plan(nowMs: number): StepPlan {
    const plan: StepPlan = { decodes: [], prefills: [], preempted: [], admitted: [] };
    let budget = this.o.tokenBudget;

    // Priority: a waiting request of higher priority than a running one takes its place when the
    // batch is full or its pages do not fit.
    if (this.o.policy === 'priority' && this.o.batching === 'continuous') this.priorityPreempt(plan);

    // 1. Decode rows for running requests past their prompt, in arrival order; each may need a
    // page, and when none is left the lowest-priority, latest request is preempted.
    for (const r of this.byAge(this.running)) {
      if (r.state !== 'running' || r.promptDone < r.prompt.length || budget < 1) continue;
      if (!this.reservePages(r, 1, plan)) continue; // r itself was preempted
      plan.decodes.push({ req: r, token: r.generated[r.fed] });
      budget -= 1;
    }

    // 2. Prompt chunks of running requests still prefilling.
    for (const r of this.byAge(this.running)) {
      if (budget < 1) break;
      if (r.state !== 'running' || r.promptDone >= r.prompt.length) continue;
      // As much of the prompt as the budget and the free pages allow (a chunk is never skipped for want of a page it could do without).
      const n = Math.min(budget, r.prompt.length - r.promptDone, this.tokensThatFit(r.seq, this.free(plan)));
      if (n < 1) continue;
      plan.prefills.push({ req: r, tokens: r.prompt.slice(r.promptDone, r.promptDone + n) });
      budget -= n;
    }

    // 3. Admission.
    const mayAdmit = this.o.batching === 'continuous' || !this.staticBatchOpen;
    if (mayAdmit) {
      while (this.waiting.length > 0 && this.running.length < this.o.maxBatch) {
        const r = this.waiting[0];
        // Static batching forms its batch from what is queued; the budget only limits the chunks.
        if (this.o.batching === 'continuous' && budget < 1) break;
        // Admission only when the whole prompt's pages fit (the rest of the output grows later).
        if (this.kv.pagesToGrow(null, r.prompt.length) > this.free(plan) - this.promptPagesOwed(plan)) break;
        this.waiting.shift();
        const { seq, hitTokens } = this.kv.open(r.prompt);
        r.seq = seq;
        r.state = 'running';
        r.promptDone = hitTokens;
        r.fed = 0;
        if (r.preemptions === 0) r.prefixHitTokens = hitTokens;
        if (r.admittedMs === null) r.admittedMs = nowMs;
        this.running.push(r);
        plan.admitted.push(r);
        if (budget >= 1) {
          const n = Math.min(
            budget,
            r.prompt.length - r.promptDone,
            this.tokensThatFit(r.seq, this.free(plan)),
          );
          plan.prefills.push({ req: r, tokens: r.prompt.slice(r.promptDone, r.promptDone + n) });
          budget -= n;
        }
      }
      if (this.o.batching === 'static' && this.running.length > 0) this.staticBatchOpen = true;
    }
    return plan;
  }

  /**
   * Records a step's outputs: the next token of each decode row, and of each prefill chunk (which
   * matters only for the chunk that completes the prompt). New tokens are stamped `nowMs`.
   */
  complete(plan: StepPlan, decodeTokens: readonly number[], prefillTokens: readonly number[], nowMs: number) {
    for (const [i, { req }] of plan.decodes.entries()) {
      req.fed += 1;
      this.emit(req, req.fed, decodeTokens[i], nowMs);
    }
    for (const [i, { req, tokens }] of plan.prefills.entries()) {
      // After a preemption every prompt token computed is computed again.
      if (req.preemptions > 0) req.recomputedTokens += tokens.length;
      req.promptDone += tokens.length;
      if (req.promptDone === req.prompt.length) this.emit(req, 0, prefillTokens[i], nowMs);
    }
  }

  /** Marks a request failed (an engine error that concerns it alone) and frees its pages. */
  fail(r: ServeRequest, message: string, nowMs: number): void {
    this.remove(r);
    r.state = 'failed';
    r.error = message;
    r.finishMs = nowMs;
  }

  /** The output at generated index `index`: a new token, or (replay) a check of a known one. */
  private emit(r: ServeRequest, index: number, token: number, nowMs: number): void {
    if (index < r.generated.length) {
      if (r.generated[index] !== token) r.replayMismatches += 1;
      return;
    }
    r.generated.push(token);
    r.tokenTimesMs.push(nowMs);
    if (r.generated.length >= r.outputTokens || r.stopAfter?.(token)) {
      this.remove(r);
      r.state = 'finished';
      r.finishMs = nowMs;
    }
  }

  private remove(r: ServeRequest): void {
    if (r.seq !== null) this.kv.close(r.seq);
    r.seq = null;
    const i = this.running.indexOf(r);
    if (i >= 0) this.running.splice(i, 1);
    const w = this.waiting.indexOf(r);
    if (w >= 0) this.waiting.splice(w, 1);
    if (this.o.batching === 'static' && this.running.length === 0) this.staticBatchOpen = false;
  }

  /** Takes `n` tokens' pages for `r`, preempting others (or `r` itself) until they fit. */
  private reservePages(r: ServeRequest, n: number, plan: StepPlan): boolean {
    while (this.kv.pagesToGrow(r.seq, n) > this.free(plan)) {
      const victim = this.victim();
      if (!victim) return false;
      this.preempt(victim, plan);
      if (victim === r) return false;
    }
    return true;
  }

  /** Tokens `seq` can grow by within `pages` new pages (the rest of its last page first). */
  private tokensThatFit(seq: number | null, pages: number): number {
    if (pages < 0) return 0;
    let n = pages * this.kv.pageSize;
    // Slack in the last page: growing by up to that many more tokens takes no extra page.
    while (this.kv.pagesToGrow(seq, n + 1) <= pages) n++;
    return n;
  }

  /**
   * Pages the running requests still need for the rest of their prompts beyond what this step
   * plans: admission counts them as taken, so admitted prompts never outgrow the pool together.
   */
  private promptPagesOwed(plan: StepPlan): number {
    let pages = 0;
    for (const r of this.running) {
      if (r.promptDone >= r.prompt.length) continue;
      const planned = plan.prefills.find((p) => p.req === r)?.tokens.length ?? 0;
      const len = r.promptDone + planned;
      if (len >= r.prompt.length) continue;
      // Pages to go from what it will hold after this step to its whole prompt.
      const done = Math.ceil(len / this.kv.pageSize);
      pages += Math.ceil(r.prompt.length / this.kv.pageSize) - done;
    }
    return pages;
  }

  /** Pages still available once the rows and chunks already planned this step take theirs (they are reserved only when it runs). */
  private free(plan: StepPlan): number {
    let pages = 0;
    for (const d of plan.decodes) pages += this.kv.pagesToGrow(d.req.seq, 1);
    for (const p of plan.prefills) pages += this.kv.pagesToGrow(p.req.seq, p.tokens.length);
    return this.kv.availablePages() - pages;
  }

  /** The running request to preempt: the lowest priority, then the latest arrival. */
  private victim(): ServeRequest | undefined {
    return [...this.running].sort(
      (a, b) => a.priority - b.priority || b.arrivalMs - a.arrivalMs || b.id - a.id,
    )[0];
  }

  private preempt(r: ServeRequest, plan: StepPlan): void {
    // Rows already planned for the victim this step are dropped with it.
    plan.decodes = plan.decodes.filter((d) => d.req !== r);
    plan.prefills = plan.prefills.filter((p) => p.req !== r);
    if (r.seq !== null) this.kv.close(r.seq);
    r.seq = null;
    this.running.splice(this.running.indexOf(r), 1);
    r.state = 'waiting';
    r.promptDone = 0;
    r.fed = 0;
    r.preemptions += 1;
    this.enqueue(r, true);
    plan.preempted.push(r);
    if (this.o.batching === 'static' && this.running.length === 0) this.staticBatchOpen = false;
  }

  private priorityPreempt(plan: StepPlan): void {
    for (;;) {
      const head = this.waiting[0];
      if (!head) return;
      const full = this.running.length >= this.o.maxBatch;
      const noRoom = this.kv.pagesToGrow(null, head.prompt.length) > this.kv.availablePages();
      if (!full && !noRoom) return;
      const victim = this.victim();
      if (!victim || victim.priority >= head.priority) return;
      this.preempt(victim, plan);
    }
  }

  /** Queue order: FCFS by arrival; under the priority policy, higher priority first. A preempted request goes first among its priority. */
  private enqueue(r: ServeRequest, front: boolean): void {
    let at = this.waiting.length;
    if (front) {
      at = this.o.policy === 'priority' ? this.waiting.findIndex((w) => w.priority <= r.priority) : 0;
      if (at < 0) at = this.waiting.length;
    } else if (this.o.policy === 'priority') {
      const i = this.waiting.findIndex((w) => w.priority < r.priority);
      if (i >= 0) at = i;
    }
    this.waiting.splice(at, 0, r);
  }

  private byAge(list: readonly ServeRequest[]): ServeRequest[] {
    return [...list].sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id);
  }
}
