import { describe, expect, it } from 'vitest';
import {
  type KvPort,
  Scheduler,
  type SchedulerOptions,
  type ServeRequestInit,
  type StepPlan,
} from './scheduler.ts';

/** A KV pool that counts pages per sequence, as the paged allocator does (no prefix cache). */
class FakeKv implements KvPort {
  readonly lengths = new Map<number, number>();
  private next = 0;
  constructor(
    readonly pageSize: number,
    readonly totalPages: number,
  ) {}
  private pages(tokens: number) {
    return Math.ceil(tokens / this.pageSize);
  }
  used(): number {
    let n = 0;
    for (const len of this.lengths.values()) n += this.pages(len);
    return n;
  }
  availablePages() {
    return this.totalPages - this.used();
  }
  pagesToGrow(seq: number | null, n: number) {
    const len = seq === null ? 0 : (this.lengths.get(seq) ?? 0);
    return this.pages(len + n) - this.pages(len);
  }
  open() {
    const seq = this.next++;
    this.lengths.set(seq, 0);
    return { seq, hitTokens: 0 };
  }
  close(seq: number) {
    this.lengths.delete(seq);
  }
  grow(seq: number, n: number) {
    this.lengths.set(seq, (this.lengths.get(seq) ?? 0) + n);
    if (this.used() > this.totalPages) throw new Error(`pool overflow: ${this.used()} > ${this.totalPages}`);
  }
}

/** What the fake model answers: a token that depends only on the request and the position. */
const modelToken = (id: number, index: number) => (id * 131 + index * 17) % 1000;

interface Trace {
  requests: ServeRequestInit[];
}

/** Drives the scheduler over a trace with a fixed cost per step; checks invariants at every step. */
function drive(trace: Trace, kv: FakeKv, o: SchedulerOptions, stepMs = 10) {
  const s = new Scheduler(kv, o);
  const pending = [...trace.requests].sort((a, b) => a.arrivalMs - b.arrivalMs);
  const plans: StepPlan[] = [];
  const runningBefore: number[] = [];
  let now = 0;
  for (let guard = 0; guard < 100_000; guard++) {
    while (pending.length > 0 && pending[0].arrivalMs <= now) s.arrive(pending.shift() as ServeRequestInit);
    if (!s.busy) {
      if (pending.length === 0) break;
      now = pending[0].arrivalMs;
      continue;
    }
    runningBefore.push(s.runningCount);
    const plan = s.plan(now);
    plans.push(plan);
    const tokens = plan.decodes.length + plan.prefills.reduce((n, p) => n + p.tokens.length, 0);
    expect(tokens, 'token budget').toBeLessThanOrEqual(o.tokenBudget);
    expect(s.runningCount, 'batch').toBeLessThanOrEqual(o.maxBatch);
    for (const d of plan.decodes) kv.grow(d.req.seq as number, 1);
    for (const p of plan.prefills) kv.grow(p.req.seq as number, p.tokens.length);
    now += stepMs;
    const decodeTokens = plan.decodes.map((d) => modelToken(d.req.id, d.req.fed + 1));
    const prefillTokens = plan.prefills.map((p) => modelToken(p.req.id, 0));
    s.complete(plan, decodeTokens, prefillTokens, now);
  }
  return { s, plans, runningBefore };
}

function request(
  id: number,
  arrivalMs: number,
  promptLen: number,
  out: number,
  priority = 0,
): ServeRequestInit {
  return {
    id,
    class: 'c',
    priority,
    prompt: Array.from({ length: promptLen }, (_, i) => (id + i) % 97),
    outputTokens: out,
    arrivalMs,
  };
}

const continuous: SchedulerOptions = { batching: 'continuous', policy: 'fcfs', tokenBudget: 32, maxBatch: 4 };

describe('continuous batching', () => {
  it('never exceeds the token budget or the pool, and every request finishes with its own tokens', () => {
    const requests = Array.from({ length: 20 }, (_, i) =>
      request(i, i * 7, 5 + ((i * 13) % 40), 3 + (i % 9)),
    );
    const kv = new FakeKv(8, 64);
    const { s } = drive({ requests }, kv, continuous);
    for (const r of s.all) {
      expect(r.state).toBe('finished');
      expect(r.generated).toEqual(Array.from({ length: r.outputTokens }, (_, j) => modelToken(r.id, j)));
      expect(r.tokenTimesMs).toHaveLength(r.outputTokens);
    }
    // Every page went back.
    expect(kv.used()).toBe(0);
  });

  it('splits a long prompt into chunks within the budget, alongside decode rows', () => {
    // A running request decodes while a 70-token prompt arrives: budget 32 = 1 decode row + 31 prompt tokens.
    const requests = [request(0, 0, 4, 20), request(1, 15, 70, 2)];
    const { plans } = drive({ requests }, new FakeKv(8, 64), continuous);
    const chunks = plans.flatMap((p) => p.prefills.filter((c) => c.req.id === 1).map((c) => c.tokens.length));
    expect(chunks).toEqual([31, 31, 8]);
    const mixed = plans.filter((p) => p.decodes.length > 0 && p.prefills.some((c) => c.req.id === 1));
    expect(mixed.length).toBe(3);
  });

  it('preempts by recompute when pages run out, replays the emitted tokens, and emits each token once', () => {
    // Pool of 6 pages of 4 tokens: three requests of 6 + 10 tokens each need 4 pages at their peak.
    const requests = [request(0, 0, 6, 10), request(1, 0, 6, 10), request(2, 0, 6, 10)];
    const kv = new FakeKv(4, 6);
    const { s, plans } = drive({ requests }, kv, { ...continuous, maxBatch: 3 });
    const preempted = plans.flatMap((p) => p.preempted.map((r) => r.id));
    expect(preempted.length).toBeGreaterThan(0);
    // The first victim is the latest arrival (equal arrival: the highest id).
    expect(preempted[0]).toBe(2);
    for (const r of s.all) {
      expect(r.state).toBe('finished');
      expect(r.generated).toEqual(Array.from({ length: 10 }, (_, j) => modelToken(r.id, j)));
      expect(r.tokenTimesMs).toHaveLength(10);
      expect(r.replayMismatches).toBe(0);
    }
    const victim = s.all[2];
    expect(victim.preemptions).toBeGreaterThan(0);
    expect(victim.recomputedTokens).toBeGreaterThan(0);
  });

  it('does not starve anyone under FCFS: first tokens come in arrival order for equal requests', () => {
    const requests = Array.from({ length: 12 }, (_, i) => request(i, 0, 10, 5));
    const { s } = drive({ requests }, new FakeKv(8, 16), { ...continuous, maxBatch: 3 });
    const firsts = s.all.map((r) => r.tokenTimesMs[0]);
    expect([...firsts].sort((a, b) => a - b)).toEqual(firsts);
    expect(s.all.every((r) => r.state === 'finished')).toBe(true);
  });

  it('fails a request that can never fit the pool, at once, and runs the others', () => {
    // 4 pages of 8 = 32 tokens; request 1 needs 40 + 9 − 1 = 48.
    const requests = [request(0, 0, 8, 4), request(1, 0, 40, 9), request(2, 0, 8, 4)];
    const { s } = drive({ requests }, new FakeKv(8, 4), continuous);
    expect(s.all.map((r) => r.state)).toEqual(['finished', 'failed', 'finished']);
    expect(s.all[1].error).toMatch(/needs 6 KV pages \(48 tokens\) and the pool has 4/);
  });
});

describe('admission', () => {
  it('counts the prompts still owed by running requests, so admitted prompts never outgrow the pool', () => {
    // 8 pages of 8 tokens; four 30-token prompts need 4 pages each. With a 16-token budget the first
    // prompt gets a chunk and the second none: admitting a third would owe 4 + 4 + 4 > 8 pages.
    const requests = [0, 1, 2, 3].map((i) => request(i, 0, 30, 3));
    const { plans, s } = drive({ requests }, new FakeKv(8, 8), {
      batching: 'static',
      policy: 'fcfs',
      tokenBudget: 16,
      maxBatch: 4,
    });
    expect(plans[0].admitted.map((r) => r.id)).toEqual([0, 1]);
    expect(s.all.every((r) => r.state === 'finished' && r.preemptions === 0)).toBe(true);
  });

  it('shrinks a prompt chunk to the pages left rather than skipping it', () => {
    // 5 pages of 4 tokens: one request decoding holds 3 pages (9 + 1 tokens); a 12-token prompt
    // admitted when 2 pages were free must still advance 8 tokens a step, not stall.
    const requests = [request(0, 0, 9, 6), request(1, 5, 12, 2)];
    const { s } = drive({ requests }, new FakeKv(4, 5), { ...continuous, tokenBudget: 32 });
    expect(s.all.map((r) => r.state)).toEqual(['finished', 'finished']);
  });
});

describe('priority', () => {
  it('a high-priority arrival preempts the lowest-priority, latest running request', () => {
    const kv = new FakeKv(8, 64);
    const s = new Scheduler(kv, { batching: 'continuous', policy: 'priority', tokenBudget: 64, maxBatch: 2 });
    s.arrive(request(0, 0, 4, 50, 0));
    s.arrive(request(1, 1, 4, 50, 0));
    let plan = s.plan(2);
    for (const p of plan.prefills) kv.grow(p.req.seq as number, p.tokens.length);
    s.complete(plan, [], [1, 2], 3);
    s.arrive(request(2, 4, 4, 5, 1));
    plan = s.plan(5);
    expect(plan.preempted.map((r) => r.id)).toEqual([1]);
    expect(plan.admitted.map((r) => r.id)).toEqual([2]);
    // The victim waits at the front of the queue, and comes back when the high-priority one is done.
    expect(s.waitingCount).toBe(1);
  });

  it('low priority never preempts high priority', () => {
    const kv = new FakeKv(8, 64);
    const s = new Scheduler(kv, { batching: 'continuous', policy: 'priority', tokenBudget: 64, maxBatch: 1 });
    s.arrive(request(0, 0, 4, 50, 1));
    s.plan(0);
    s.arrive(request(1, 1, 4, 5, 0));
    expect(s.plan(1).preempted).toEqual([]);
  });
});

describe('static batching', () => {
  it('never admits a request into a running batch', () => {
    const requests = Array.from({ length: 10 }, (_, i) => request(i, i * 3, 6, 2 + ((i * 5) % 11)));
    const { plans, runningBefore, s } = drive({ requests }, new FakeKv(8, 64), {
      batching: 'static',
      policy: 'fcfs',
      tokenBudget: 32,
      maxBatch: 4,
    });
    for (const [i, p] of plans.entries()) {
      if (p.admitted.length > 0) expect(runningBefore[i], `step ${i}`).toBe(0);
    }
    expect(s.all.every((r) => r.state === 'finished')).toBe(true);
    // Batches form as 4 + 4 + 2 at most; at least three admission steps.
    expect(plans.filter((p) => p.admitted.length > 0).length).toBeGreaterThanOrEqual(3);
  });
});

describe('per-request KV budget at arrival', () => {
  const init = (id: number, promptLen: number, out: number): ServeRequestInit => ({
    id,
    class: 'c',
    priority: 0,
    prompt: Array.from({ length: promptLen }, (_, i) => i + 1),
    outputTokens: out,
    arrivalMs: 0,
  });
  const o = { batching: 'continuous', policy: 'fcfs', tokenBudget: 64, maxBatch: 4 } as const;

  it('reject: one over the budget fails at once with the budget’s code; one at it waits', () => {
    const s = new Scheduler(new FakeKv(4, 100), { ...o, kvBudget: { tokens: 50, policy: 'reject' } });
    const over = s.arrive(init(1, 45, 7)); // 45 + 7 − 1 = 51
    const at = s.arrive(init(2, 45, 6)); // 50
    expect(over.state).toBe('failed');
    expect(over.error).toMatch(/^kv_budget_exceeded: the request would hold 51 KV tokens/);
    expect(at.state).toBe('waiting');
    expect(s.waitingCount).toBe(1);
  });

  it('truncate: the prompt keeps its newest tokens, exactly to the budget, and the cut is counted', () => {
    const s = new Scheduler(new FakeKv(4, 100), { ...o, kvBudget: { tokens: 50, policy: 'truncate' } });
    const r = s.arrive(init(1, 60, 7));
    expect(r.state).toBe('waiting');
    // 50 − 7 + 1 = 44 prompt tokens kept: ids 17…60.
    expect(r.prompt).toEqual(Array.from({ length: 44 }, (_, i) => i + 17));
    expect(r.truncatedTokens).toBe(16);
  });
});
