import { InternalError } from '../errors.ts';
import type { Model } from '../model/forward.ts';
import type { PoolCapacity, RouteRule } from '../spec/workloads/serve-pools.ts';
import type { RequestRecord } from './metrics.ts';
import { PooledScheduler, routeOf } from './pools.ts';
import {
  type KvPort,
  Scheduler,
  type SchedulerOptions,
  type ServeRequest,
  type ServeRequestInit,
  type StepPlan,
} from './scheduler.ts';
import { SessionBook } from './sessions.ts';
import { hashTokens } from './tokens-hash.ts';
import type { SessionTurn, TraceRequest } from './traffic.ts';

/**
 * Drives the scheduler on the real engine, in real time: requests arrive on the wall clock as the
 * trace says (or, closed loop, as earlier ones finish), every step the scheduler plans is one
 * `Model.step` (decode rows and prompt chunks in one command buffer, one submit, one readback),
 * and every token is stamped with the worker's wall clock when its step's readback returns. Between
 * steps nothing else runs; when nothing is running the loop sleeps until the next arrival.
 */

export interface ArmOptions extends SchedulerOptions {
  /** Closed loop: keep this many requests in flight (arrivals are set at run time). */
  concurrency: number | null;
  prefixCache: boolean;
  /**
   * Agent sessions (a trace with session turns): a later turn arrives its tool wait after the turn
   * before it finishes, with that turn's prompt and generated tokens at the head of its own. Open
   * loop only. One book per arm: it records the prompts it hands out.
   */
  sessions?: SessionBook;
  /**
   * Pools on the one engine (pools.ts): each its share of pages, slots and step budget, its own
   * scheduler; `rule` routes each request. maxBatch and tokenBudget above are the totals split.
   */
  pools?: { capacity: PoolCapacity[]; rule: RouteRule };
}

/** The engine state after a step: what the timeline charts draw. */
export interface TimelinePoint {
  tMs: number;
  /** Requests running (admitted, not finished). */
  running: number;
  waiting: number;
  decodeRows: number;
  prefillTokens: number;
  /** New tokens emitted by the step (first tokens from completed prompts included, replayed rows not). */
  tokensOut: number;
  /** Pages referenced by sequences, and the pool. */
  kvUsedPages: number;
  kvTotalPages: number;
  stepMs: number;
  /** With pools: each pool's state after the step, in pool order (tokens = its decode rows and prompt tokens in the step). */
  pools?: { running: number; waiting: number; kvUsedPages: number; kvTotalPages: number; tokens: number }[];
}

/** One request's stay in one batch slot (a slot is a place in the running batch). */
export interface SlotSpan {
  slot: number;
  id: number;
  class: string;
  startMs: number;
  endMs: number;
  /** How the stay ended. */
  end: 'finished' | 'preempted' | 'failed' | 'cancelled';
}

export interface ArmRun {
  records: ServeRecord[];
  /** Generated tokens per request id (the identical-output check compares them with solo runs). */
  tokens: Map<number, number[]>;
  timeline: TimelinePoint[];
  slots: SlotSpan[];
  durationMs: number;
  steps: number;
  replayMismatches: number;
  /** Set when the run stopped early (cancel, lost device): the finished requests are still in `records`. */
  stoppedBy?: unknown;
}

/**
 * Full pages of what each sequence of a step now holds (K/V written by the step) become reusable
 * by later requests. Called after the step and before `complete`, which frees the finished ones.
 */
export function commitStep(alloc: Model['kv']['allocator'], plan: StepPlan): void {
  for (const d of plan.decodes) {
    const r = d.req;
    if (r.seq !== null) alloc.commitTokens(r.seq, [...r.prompt, ...r.generated.slice(0, r.fed + 1)]);
  }
  for (const p of plan.prefills) {
    const r = p.req;
    if (r.seq !== null) alloc.commitTokens(r.seq, r.prompt.slice(0, r.promptDone + p.tokens.length));
  }
}

/** The scheduler's view of the model's paged KV cache. */
export function kvPort(model: Model, prefixCache: boolean): KvPort {
  const alloc = model.kv.allocator;
  const pageSize = model.kv.pageSize;
  const pages = (tokens: number) => Math.ceil(tokens / pageSize);
  return {
    pageSize,
    totalPages: alloc.stats().totalPages,
    availablePages: () => (prefixCache ? alloc.availablePages() : alloc.stats().freePages),
    pagesToGrow: (seq, n) => {
      const len = seq === null ? 0 : alloc.length(seq);
      return pages(len + n) - pages(len);
    },
    open: (prompt) => {
      const seq = model.createSequence();
      const hitTokens = prefixCache ? alloc.acquirePrefix(seq, prompt) : 0;
      return { seq, hitTokens };
    },
    close: (seq) => model.freeSequence(seq),
  };
}

/**
 * Waits `ms`, or until `signal` aborts. The abort listener goes when the timer fires: an arm sleeps
 * between arrivals many times on one signal, and listeners left on it piled up (Node warned of a
 * leak past 10, in the middle of `--suite case`'s output).
 */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

export interface ArmProgress {
  done: number;
  total: number;
  running: number;
  kvUsedPct: number;
}

/**
 * Runs one arm of a load test over `trace` (prompt ids from `prompts`) on `model`, which must be
 * fresh (an empty KV pool) and built with at least `o.maxBatch` decode rows.
 */
export async function runArm(
  model: Model,
  trace: readonly TraceRequest[],
  prompts: ReadonlyMap<number, readonly number[]>,
  o: ArmOptions,
  signal: AbortSignal,
  onProgress: (p: ArmProgress) => void,
): Promise<ArmRun> {
  const port = kvPort(model, o.prefixCache);
  const pooled = o.pools
    ? new PooledScheduler(
        port,
        (seq) => Math.ceil(model.kv.allocator.length(seq) / port.pageSize),
        o.pools.capacity,
        o,
      )
    : null;
  const single = pooled ? null : new Scheduler(port, o);
  const scheduler = (pooled ?? single) as Pick<
    Scheduler,
    'busy' | 'runningCount' | 'waitingCount' | 'all' | 'plan' | 'complete'
  >;
  const arrive = (init: ServeRequestInit, t: TraceRequest) =>
    pooled && o.pools ? pooled.arrive(init, routeOf(o.pools.rule, t)) : (single as Scheduler).arrive(init);
  const alloc = model.kv.allocator;
  const byId = new Map(trace.map((t) => [t.id, t]));
  const book = o.sessions;
  if (book && o.concurrency !== null) throw new InternalError('sessions run open loop only');
  const promptOf = new Map(prompts);
  // Open loop: arrivals from the trace. Closed loop: the first C at once, each finish releases the
  // next. A later session turn joins `pending` when the turn before it finishes.
  const pending = trace
    .filter((t) => !book || !SessionBook.isFollowUp(t))
    .sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id);
  const schedule = (t: TraceRequest) => {
    const at = pending.findIndex((q) => q.arrivalMs > t.arrivalMs);
    pending.splice(at < 0 ? pending.length : at, 0, t);
  };
  let released = o.concurrency === null ? pending.length : Math.min(o.concurrency, pending.length);
  const arrivalOf = new Map<number, number>();
  const slots: SlotSpan[] = [];
  const slotOf = new Map<ServeRequest, { slot: number; startMs: number }>();
  const freeSlots = Array.from({ length: o.maxBatch }, (_, i) => i);
  const timeline: TimelinePoint[] = [];
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  let steps = 0;
  let finishedSeen = 0;
  let stoppedBy: unknown;

  const closeSlot = (r: ServeRequest, end: SlotSpan['end'], at: number) => {
    const s = slotOf.get(r);
    if (!s) return;
    slots.push({ slot: s.slot, id: r.id, class: r.class, startMs: s.startMs, endMs: at, end });
    slotOf.delete(r);
    freeSlots.push(s.slot);
    freeSlots.sort((a, b) => a - b);
  };
  const arriveDue = (at: number) => {
    while (pending.length > 0) {
      const next = pending[0];
      const closedLoop = o.concurrency !== null;
      if (closedLoop ? released <= 0 : next.arrivalMs > at) break;
      pending.shift();
      if (closedLoop) released--;
      const arrivalMs = closedLoop ? at : next.arrivalMs;
      arrivalOf.set(next.id, arrivalMs);
      const r = arrive(
        {
          id: next.id,
          class: next.class,
          priority: next.priority,
          prompt: promptOf.get(next.id) ?? [],
          outputTokens: next.outputTokens,
          arrivalMs,
        },
        next,
      );
      if (r.state === 'failed' && closedLoop) released++;
    }
  };

  try {
    for (;;) {
      signal.throwIfAborted();
      arriveDue(now());
      if (!scheduler.busy) {
        if (pending.length === 0) break;
        if (o.concurrency === null) await sleep(Math.max(0, pending[0].arrivalMs - now()), signal);
        continue;
      }
      const plan = scheduler.plan(now());
      const at = now();
      for (const r of plan.preempted) closeSlot(r, 'preempted', at);
      for (const r of plan.admitted) slotOf.set(r, { slot: freeSlots.shift() ?? -1, startMs: at });
      if (plan.decodes.length === 0 && plan.prefills.length === 0) {
        // Nothing fits this step (every page taken by prompts still waiting for room): wait for the next arrival.
        if (pending.length === 0 && scheduler.runningCount === 0) break;
        await sleep(1, signal);
        continue;
      }
      const started = now();
      const result = await model.step({
        decodes: plan.decodes.map((d) => ({ seq: d.req.seq as number, token: d.token })),
        prefills: plan.prefills.map((p) => ({ seq: p.req.seq as number, tokens: p.tokens })),
      });
      const done = now();
      steps++;
      if (o.prefixCache) commitStep(alloc, plan);
      const before = new Set(scheduler.all.filter((r) => r.state === 'running'));
      const emittedBefore = scheduler.all.reduce((n, r) => n + r.generated.length, 0);
      scheduler.complete(plan, result.decodeTokens, result.prefillTokens, done);
      for (const r of before) {
        if (r.state === 'finished') {
          closeSlot(r, 'finished', done);
          finishedSeen++;
          if (o.concurrency !== null) released++;
          const next = book?.finished(r.id, r.generated);
          if (next) {
            promptOf.set(next.req.id, next.prompt);
            schedule({ ...next.req, arrivalMs: done + (next.req.session?.toolWaitMs ?? 0) });
          }
        }
      }
      const stats = alloc.stats();
      timeline.push({
        tMs: done,
        running: scheduler.runningCount,
        waiting: scheduler.waitingCount,
        decodeRows: plan.decodes.length,
        prefillTokens: plan.prefills.reduce((n, p) => n + p.tokens.length, 0),
        tokensOut: scheduler.all.reduce((n, r) => n + r.generated.length, 0) - emittedBefore,
        kvUsedPages: stats.usedPages,
        kvTotalPages: stats.totalPages,
        stepMs: done - started,
        ...(pooled
          ? {
              pools: pooled.schedulers.map((s, i) => ({
                running: s.runningCount,
                waiting: s.waitingCount,
                kvUsedPages: pooled.ports[i].usedPages(),
                kvTotalPages: pooled.ports[i].totalPages,
                tokens: pooled.lastStepTokens()[i],
              })),
            }
          : {}),
      });
      onProgress({
        done: finishedSeen,
        total: trace.length,
        running: scheduler.runningCount,
        kvUsedPct: (100 * stats.usedPages) / stats.totalPages,
      });
    }
  } catch (e) {
    stoppedBy = e;
  }
  const end = now();
  for (const r of [...slotOf.keys()]) closeSlot(r, 'cancelled', end);
  const records = scheduler.all.map((r) => {
    const rec = toRecord(r, byId.get(r.id) as TraceRequest, stoppedBy !== undefined);
    return pooled ? { ...rec, pool: pooled.capacity[pooled.poolOf(r)].name } : rec;
  });
  // Session turns never sent: an earlier turn failed, or the run stopped first.
  const seen = new Set(records.map((r) => r.id));
  for (const t of trace) {
    if (!seen.has(t.id)) records.push(unsentRecord(t, stoppedBy !== undefined));
  }
  records.sort((a, b) => a.id - b.id);
  return {
    records,
    tokens: new Map(scheduler.all.map((r) => [r.id, r.generated])),
    timeline,
    slots,
    durationMs: end,
    steps,
    replayMismatches: scheduler.all.reduce((n, r) => n + r.replayMismatches, 0),
    stoppedBy,
  };
}

/** A request's record, with what the trace asked of it (so the trace can be written back). */
export type ServeRecord = RequestRecord & {
  requestedTokens: number;
  prefixId: number | null;
  prefixTokens: number;
  /** Fingerprint of the generated tokens (tokens-hash.ts), to match runs over HTTP with this one. */
  outputHash?: string;
  /** The request's place in an agent session. */
  session?: SessionTurn;
  /** The pool it was routed to (pools.ts), when the arm has pools. */
  pool?: string;
};

/** A request's record before anything came back: failed until it finishes, with what the trace asked. */
export function blankRecord(t: TraceRequest, arrivalMs: number, promptTokens: number): ServeRecord {
  return {
    id: t.id,
    class: t.class,
    priority: t.priority,
    promptTokens,
    outputTokens: 0,
    prefixHitTokens: 0,
    preemptions: 0,
    status: 'failed',
    arrivalMs,
    admittedMs: null,
    tokenTimesMs: [],
    finishMs: null,
    requestedTokens: t.outputTokens,
    prefixId: t.prefixId,
    prefixTokens: t.prefixTokens,
    ...(t.session ? { session: t.session } : {}),
  };
}

/** A session turn that was never sent: the turn before it did not finish (or the run stopped). */
export function unsentRecord(t: TraceRequest, stopped: boolean): ServeRecord {
  return {
    ...blankRecord(t, t.arrivalMs, t.promptTokens),
    status: stopped ? 'cancelled' : 'failed',
    error: `not sent: an earlier turn of session ${t.session?.id} did not finish`,
  };
}

export function toRecord(r: ServeRequest, t: TraceRequest, stopped: boolean): ServeRecord {
  const status =
    r.state === 'finished' ? 'finished' : r.state === 'failed' ? 'failed' : stopped ? 'cancelled' : 'failed';
  return {
    id: r.id,
    class: r.class,
    priority: r.priority,
    promptTokens: r.prompt.length,
    outputTokens: r.generated.length,
    prefixHitTokens: r.prefixHitTokens,
    preemptions: r.preemptions,
    recomputedTokens: r.recomputedTokens,
    status,
    ...(r.error ? { error: r.error } : {}),
    arrivalMs: r.arrivalMs,
    admittedMs: r.admittedMs,
    tokenTimesMs: [...r.tokenTimesMs],
    finishMs: r.finishMs,
    requestedTokens: t.outputTokens,
    prefixId: t.prefixId,
    prefixTokens: t.prefixTokens,
    outputHash: hashTokens(r.generated),
    ...(r.truncatedTokens > 0 ? { truncatedTokens: r.truncatedTokens } : {}),
    ...(t.session ? { session: t.session } : {}),
  };
}

/**
 * Builds the decode plans of every batch size 1…maxBatch (each compiles its GEMV) and a prefill
 * plan, outside any timing, so no step of a measured run (or a served request) pays for a compile.
 */
export async function warmUp(model: Model, maxBatch: number): Promise<void> {
  const seqs = Array.from({ length: maxBatch }, () => model.createSequence());
  try {
    const first = await model.prefill(
      seqs.map((seq, i) => ({ seq, tokens: [1 + (i % (model.config.vocabSize - 1))] })),
      'none',
    );
    let tokens = first.map((r) => r.nextToken);
    for (let b = maxBatch; b >= 1; b--) {
      const r = await model.decode(seqs.slice(0, b).map((seq, i) => ({ seq, token: tokens[i] })));
      tokens = r.nextTokens;
    }
  } finally {
    for (const seq of seqs) model.freeSequence(seq);
  }
}
