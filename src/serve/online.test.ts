import { describe, expect, it } from 'vitest';
import { PageAllocator } from '../kv/allocator.ts';
import type { Model } from '../model/forward.ts';
import { type OnlineEnd, OnlineEngine } from './online.ts';

/**
 * The online loop's bookkeeping on a stand-in model: the real page allocator, and a `step` that
 * appends each row's tokens to its sequence and answers token = 1000 + position (so outputs can be
 * counted by hand). Kernels and the real model run in e2e/serve-api.spec.ts.
 */
function fakeModel(pages: number, opts: { failAt?: number; prefixCache?: boolean } = {}) {
  const allocator = new PageAllocator({
    numPages: pages,
    pageSize: 4,
    bytesPerTokenSlot: 1,
    prefixCache: opts.prefixCache,
  });
  let steps = 0;
  let release: (() => void) | null = null;
  const gate = { hold: false };
  const model = {
    config: { vocabSize: 2000 },
    kv: { allocator, pageSize: 4 },
    createSequence: () => allocator.createSequence(),
    freeSequence: (seq: number) => allocator.freeSequence(seq),
    step: async (req: {
      decodes: { seq: number; token: number }[];
      prefills: { seq: number; tokens: number[] }[];
    }) => {
      steps++;
      if (opts.failAt === steps) throw new Error('device lost');
      // As the real step: the rows' K/V slots are taken when the step is encoded, before the GPU runs it.
      const next = (seq: number, n: number) => {
        allocator.appendTokens(seq, n);
        return 1000 + allocator.length(seq);
      };
      const out = {
        decodeTokens: req.decodes.map((d) => next(d.seq, 1)),
        prefillTokens: req.prefills.map((p) => next(p.seq, p.tokens.length)),
      };
      if (gate.hold) await new Promise<void>((r) => (release = r));
      return out;
    },
  };
  return { model: model as unknown as Model, allocator, gate, release: () => release?.() };
}

const clock = () => {
  let t = 0;
  return () => ++t;
};

function collect() {
  const tokens: number[] = [];
  let onEnd: (end: OnlineEnd) => void = () => {};
  const done = new Promise<OnlineEnd>((resolve) => {
    onEnd = resolve;
  });
  const sub = { onTokens: (t: number[]) => tokens.push(...t), onEnd: (end: OnlineEnd) => onEnd(end) };
  return { sub, tokens, done };
}

describe('OnlineEngine', () => {
  it('streams each request its tokens and frees every page when they finish', async () => {
    const { model, allocator } = fakeModel(16);
    const e = new OnlineEngine(model, { maxBatch: 4, tokenBudget: 64, maxWaiting: 8, now: clock() });
    const a = collect();
    const b = collect();
    e.submit({ prompt: [1, 2, 3], maxTokens: 3, ...a.sub });
    e.submit({ prompt: [4, 5], maxTokens: 2, ...b.sub });
    const [ea, eb] = await Promise.all([a.done, b.done]);
    // Prompt of 3 → first token at position 3, then one decode row per step: 1003, 1004, 1005.
    expect(a.tokens).toEqual([1003, 1004, 1005]);
    expect(b.tokens).toEqual([1002, 1003]);
    expect(ea.status).toBe('finished');
    expect(eb.status).toBe('finished');
    expect(ea.timeline.admittedMs).not.toBeNull();
    expect(allocator.stats().usedPages).toBe(0);
    expect(e.stats()).toMatchObject({ running: 0, waiting: 0, kvUsedPages: 0 });
  });

  it('a cancel during a step lands after it: the pages come back, the others go on', async () => {
    const { model, allocator, gate, release } = fakeModel(16);
    const e = new OnlineEngine(model, { maxBatch: 4, tokenBudget: 64, maxWaiting: 8, now: clock() });
    const a = collect();
    const b = collect();
    gate.hold = true;
    const ha = e.submit({ prompt: [1, 2, 3, 4, 5], maxTokens: 50, ...a.sub });
    e.submit({ prompt: [1], maxTokens: 3, ...b.sub });
    await new Promise((r) => setTimeout(r, 5));
    ha?.cancel('the client disconnected');
    // Still in the step: nothing freed yet.
    expect(allocator.stats().usedPages).toBeGreaterThan(0);
    gate.hold = false;
    release();
    const ea = await a.done;
    expect(ea.status).toBe('cancelled');
    expect(ea.status === 'cancelled' && ea.error).toBe('the client disconnected');
    expect((await b.done).status).toBe('finished');
    expect(allocator.stats().usedPages).toBe(0);
  });

  it('refuses a request past the queue (the server answers 429) and fails one the pool can never hold', async () => {
    const { model } = fakeModel(2);
    const e = new OnlineEngine(model, { maxBatch: 1, tokenBudget: 64, maxWaiting: 1, now: clock() });
    const big = collect();
    // 2 pages of 4 tokens: a 6-token prompt plus 4 outputs needs 9 slots, 3 pages.
    e.submit({ prompt: [1, 2, 3, 4, 5, 6], maxTokens: 4, ...big.sub });
    const end = await big.done;
    expect(end.status).toBe('failed');
    expect(end.status === 'failed' && end.error).toMatch(/can never run/);
    const [a, b, c] = [collect(), collect(), collect()];
    // a takes the one batch slot at once (the loop plans as soon as it arrives), b waits, and c
    // would be a second waiting request with room for one.
    expect(e.submit({ prompt: [1], maxTokens: 2, ...a.sub })).not.toBeNull();
    expect(e.submit({ prompt: [1], maxTokens: 2, ...b.sub })).not.toBeNull();
    expect(e.stats()).toMatchObject({ running: 1, waiting: 1 });
    expect(e.submit({ prompt: [1], maxTokens: 2, ...c.sub })).toBeNull();
    expect((await a.done).status).toBe('finished');
    expect((await b.done).status).toBe('finished');
  });

  it('an engine fault fails every open request and every later one', async () => {
    const { model } = fakeModel(16, { failAt: 1 });
    const e = new OnlineEngine(model, { maxBatch: 4, tokenBudget: 64, maxWaiting: 8, now: clock() });
    const a = collect();
    e.submit({ prompt: [1], maxTokens: 2, ...a.sub });
    const end = await a.done;
    expect(end.status).toBe('failed');
    expect(end.status === 'failed' && end.error).toMatch(/engine step failed: device lost/);
    const b = collect();
    e.submit({ prompt: [1], maxTokens: 2, ...b.sub });
    expect((await b.done).status).toBe('failed');
  });
});

describe('OnlineEngine.refusal', () => {
  it('names what can never fit the pool, and an engine that has stopped', async () => {
    const { model } = fakeModel(2);
    const e = new OnlineEngine(model, { maxBatch: 1, tokenBudget: 64, maxWaiting: 1, now: clock() });
    // 2 pages of 4 slots: 5 + 4 − 1 = 8 slots fit, 5 + 5 − 1 = 9 do not.
    expect(e.refusal(5, 4)).toBeNull();
    expect(e.refusal(5, 5)).toMatchObject({
      status: 400,
      message: expect.stringMatching(/needs 3 KV pages/),
    });
    await e.close('shutting down');
    expect(e.refusal(1, 1)).toEqual({ status: 503, message: 'shutting down' });
  });

  it('with a prefix cache, a prompt that repeats an earlier prompt and its answer attaches their full pages', async () => {
    const { model, allocator } = fakeModel(16, { prefixCache: true });
    const e = new OnlineEngine(model, {
      maxBatch: 4,
      tokenBudget: 64,
      maxWaiting: 8,
      now: clock(),
      prefixCache: true,
    });
    const first = collect();
    const prompt = Array.from({ length: 10 }, (_, i) => 1 + i);
    e.submit({ prompt, maxTokens: 3, ...first.sub });
    const a = await first.done;
    expect(a.status).toBe('finished');
    if (a.status === 'finished') expect(a.cachedTokens).toBe(0);
    // The next turn: the prompt, the answer, five new tokens (18). Cached: the prompt and the two
    // answer tokens fed back (the last is never fed): 12 tokens, three full pages of 4.
    const second = collect();
    e.submit({ prompt: [...prompt, ...first.tokens, 50, 51, 52, 53, 54], maxTokens: 2, ...second.sub });
    const b = await second.done;
    expect(b.status).toBe('finished');
    if (b.status === 'finished') expect(b.cachedTokens).toBe(12);
    expect(allocator.stats().usedPages).toBe(0);
  });
});
