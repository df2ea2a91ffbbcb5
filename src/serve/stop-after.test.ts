import { describe, expect, it } from 'vitest';
import { PageAllocator } from '../kv/allocator.ts';
import type { Model } from '../model/forward.ts';
import { type OnlineEnd, OnlineEngine } from './online.ts';

/**
 * A request that ends early at a token its `stopAfter` names (an end-of-generation token): on a
 * stand-in model whose every step answers 1000 + the sequence's length, beside a request without
 * one, which still generates all its tokens.
 */
function engine() {
  const allocator = new PageAllocator({ numPages: 32, pageSize: 4, bytesPerTokenSlot: 1 });
  const next = (seq: number, n: number) => {
    allocator.appendTokens(seq, n);
    return 1000 + allocator.length(seq);
  };
  const model = {
    config: { vocabSize: 2000 },
    kv: { allocator, pageSize: 4 },
    createSequence: () => allocator.createSequence(),
    freeSequence: (seq: number) => allocator.freeSequence(seq),
    step: async (req: { decodes: { seq: number }[]; prefills: { seq: number; tokens: number[] }[] }) => ({
      decodeTokens: req.decodes.map((d) => next(d.seq, 1)),
      prefillTokens: req.prefills.map((p) => next(p.seq, p.tokens.length)),
    }),
  } as unknown as Model;
  let t = 0;
  const e = new OnlineEngine(model, { maxBatch: 4, tokenBudget: 64, maxWaiting: 8, now: () => ++t });
  const submit = (prompt: number[], maxTokens: number, stopAfter?: (token: number) => boolean) =>
    new Promise<OnlineEnd>((onEnd) => {
      const streamed: number[] = [];
      e.submit({ prompt, maxTokens, stopAfter, onTokens: (ts) => streamed.push(...ts), onEnd });
    });
  return { e, allocator, submit };
}

describe('stopAfter', () => {
  it('ends a request after the token it names, which is its last; the pages come back', async () => {
    const { allocator, submit } = engine();
    const [stopped, full] = await Promise.all([
      submit([1, 2, 3], 10, (token) => token === 1005),
      submit([4, 5, 6], 4),
    ]);
    expect(stopped).toMatchObject({ status: 'finished', tokens: [1003, 1004, 1005] });
    expect(full).toMatchObject({ status: 'finished', tokens: [1003, 1004, 1005, 1006] });
    expect(stopped.timeline.finishMs).not.toBeNull();
    expect(allocator.stats().usedPages).toBe(0);
  });

  it('a stop at the prefill’s token ends the request with that one token', async () => {
    const { submit } = engine();
    expect((await submit([7, 8], 5, () => true)).tokens).toEqual([1002]);
  });
});
