import type { PoolCapacity, RouteRule } from '../spec/workloads/serve-pools.ts';
import {
  type KvPort,
  Scheduler,
  type SchedulerOptions,
  type ServeRequest,
  type ServeRequestInit,
  type StepPlan,
} from './scheduler.ts';
import type { TraceRequest } from './traffic.ts';

/**
 * Pools on one engine (spec/workloads/serve-pools.ts): each gets its share of the KV pages, of the
 * batch slots and of the step's token budget, and a scheduler of its own over a view of the KV
 * cache that counts only its sequences' pages. Every step runs the plans of all pools together
 * (one `Model.step`), so the pools share the device and nothing else: a long prompt in one cannot
 * take the pages, the slots or the step's tokens of the other.
 */

/** The pool index a request goes to: 1 when the rule holds, else 0. */
export function routeOf(
  rule: RouteRule,
  t: Pick<TraceRequest, 'promptTokens' | 'outputTokens' | 'class'>,
): number {
  if (rule.field === 'class') return t.class === rule.value ? 1 : 0;
  const v = rule.field === 'prompt' ? t.promptTokens : t.outputTokens;
  return (rule.op === '>' ? v > rule.value : v < rule.value) ? 1 : 0;
}

/**
 * A pool's view of the KV cache: its own page count, and as available what its share leaves after
 * the pages its own sequences hold (never more than the whole cache has free). `pagesOf` reads a
 * live sequence's pages off the allocator.
 */
export function poolPort(
  base: KvPort,
  pages: number,
  pagesOf: (seq: number) => number,
): KvPort & { usedPages(): number } {
  const seqs = new Set<number>();
  const usedPages = () => {
    let n = 0;
    for (const s of seqs) n += pagesOf(s);
    return n;
  };
  return {
    pageSize: base.pageSize,
    totalPages: pages,
    availablePages: () => Math.max(0, Math.min(pages - usedPages(), base.availablePages())),
    pagesToGrow: (seq, n) => base.pagesToGrow(seq, n),
    open: (prompt) => {
      const r = base.open(prompt);
      seqs.add(r.seq);
      return r;
    },
    close: (seq) => {
      seqs.delete(seq);
      base.close(seq);
    },
    usedPages,
  };
}

/**
 * The schedulers of the pools behind the one interface the driver steps: a request arrives in the
 * pool it is routed to, a step's plan is every pool's plan together (decode rows, then prompt
 * chunks, pool by pool), and the step's tokens go back to each pool's scheduler in that order.
 */
export class PooledScheduler {
  readonly schedulers: Scheduler[];
  readonly ports: ReturnType<typeof poolPort>[];
  private readonly poolOfRequest = new Map<ServeRequest, number>();
  private lastPlans: StepPlan[] = [];

  constructor(
    base: KvPort,
    pagesOf: (seq: number) => number,
    readonly capacity: readonly PoolCapacity[],
    o: SchedulerOptions,
  ) {
    this.ports = capacity.map((c) => poolPort(base, c.pages, pagesOf));
    this.schedulers = capacity.map(
      (c, i) => new Scheduler(this.ports[i], { ...o, maxBatch: c.slots, tokenBudget: c.tokenBudget }),
    );
  }

  arrive(init: ServeRequestInit, pool: number): ServeRequest {
    const r = this.schedulers[pool].arrive(init);
    this.poolOfRequest.set(r, pool);
    return r;
  }

  /** The pool a request was routed to. */
  poolOf(r: ServeRequest): number {
    return this.poolOfRequest.get(r) ?? 0;
  }

  get busy(): boolean {
    return this.schedulers.some((s) => s.busy);
  }

  get runningCount(): number {
    return this.schedulers.reduce((n, s) => n + s.runningCount, 0);
  }

  get waitingCount(): number {
    return this.schedulers.reduce((n, s) => n + s.waitingCount, 0);
  }

  get all(): ServeRequest[] {
    return this.schedulers.flatMap((s) => s.all);
  }

  plan(nowMs: number): StepPlan {
    this.lastPlans = this.schedulers.map((s) => s.plan(nowMs));
    return {
      decodes: this.lastPlans.flatMap((p) => p.decodes),
      prefills: this.lastPlans.flatMap((p) => p.prefills),
      preempted: this.lastPlans.flatMap((p) => p.preempted),
      admitted: this.lastPlans.flatMap((p) => p.admitted),
    };
  }

  /** The last plan's share of each pool: its decode rows and prompt tokens. */
  lastStepTokens(): number[] {
    return this.lastPlans.map((p) => p.decodes.length + p.prefills.reduce((n, c) => n + c.tokens.length, 0));
  }

  complete(
    _plan: StepPlan,
    decodeTokens: readonly number[],
    prefillTokens: readonly number[],
    nowMs: number,
  ) {
    let d = 0;
    let q = 0;
    this.schedulers.forEach((s, i) => {
      const p = this.lastPlans[i];
      s.complete(
        p,
        decodeTokens.slice(d, d + p.decodes.length),
        prefillTokens.slice(q, q + p.prefills.length),
        nowMs,
      );
      d += p.decodes.length;
      q += p.prefills.length;
    });
  }
}
