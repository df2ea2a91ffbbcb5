import { describe, expect, it } from 'vitest';
import { AcceptanceStats, acceptDraft } from './accept.ts';
import { ngramDrafter, oracleDrafter } from './drafters.ts';

describe('n-gram prompt lookup', () => {
  const d = ngramDrafter(1, 3);
  it('proposes what followed the longest earlier match of the suffix', () => {
    // Suffix [7, 8, 9] occurred at 1..3, followed by 4, 5, 6.
    expect(d.propose([1, 7, 8, 9, 4, 5, 6, 2, 7, 8, 9], 3)).toEqual([4, 5, 6]);
    // Only [9] matches (at index 2, followed by 5 …); a longer match would win over it.
    expect(d.propose([3, 1, 9, 5, 6, 2, 9], 2)).toEqual([5, 6]);
  });

  it('prefers the most recent of equally long matches, and continues a short period', () => {
    // [4] occurs at 1 (→ 10) and at 3 (→ 20): the later one wins. Only 20, 4 follow it before the
    // end, so the copy goes on with the period they set: 20, 4, 20, 4.
    expect(d.propose([0, 4, 10, 4, 20, 4], 4)).toEqual([20, 4, 20, 4]);
    // A run of one token: [7, 7, 7] matched one place back; the copy repeats 7.
    expect(d.propose([1, 7, 7, 7, 7], 3)).toEqual([7, 7, 7]);
    // A match far enough back needs no extension.
    expect(d.propose([5, 6, 1, 2, 3, 9, 5, 6], 3)).toEqual([1, 2, 3]);
  });

  it('proposes nothing without a match, and rejects a bad K', () => {
    expect(d.propose([1, 2, 3, 4], 4)).toEqual([]);
    expect(d.propose([5], 4)).toEqual([]);
    expect(() => d.propose([1, 1], 0)).toThrow('K (draft length) must be a whole number in 1…16, got 0');
    expect(() => d.propose([1, 1], 17)).toThrow(/got 17/);
    expect(() => ngramDrafter(3, 2)).toThrow(/1 ≤ minN ≤ maxN/);
  });
});

describe('controlled-acceptance (oracle) drafter', () => {
  const reference = Array.from({ length: 20_000 }, (_, i) => (i * 31) % 500);
  it('proposes the reference continuation at the right offset, and is labelled synthetic', () => {
    const d = oracleDrafter({ promptLength: 3, reference, p: 1, vocab: 500, seed: 1 });
    expect(d.synthetic).toBe(true);
    expect(d.propose([9, 9, 9, ...reference.slice(0, 5)], 4)).toEqual(reference.slice(5, 9));
  });

  it('keeps each token with probability p and otherwise proposes a different one', () => {
    const d = oracleDrafter({ promptLength: 0, reference, p: 0.8, vocab: 500, seed: 2 });
    let kept = 0;
    let total = 0;
    for (let at = 0; at + 4 <= reference.length; at += 4) {
      const draft = d.propose(reference.slice(0, at), 4);
      draft.forEach((t, i) => {
        total++;
        if (t === reference[at + i]) kept++;
        else expect(t).toBeLessThan(500);
      });
    }
    // 20,000 Bernoulli(0.8) trials: the standard deviation of the share is 0.0028.
    expect(Math.abs(kept / total - 0.8)).toBeLessThan(0.01);
    const none = oracleDrafter({ promptLength: 0, reference, p: 0, vocab: 500, seed: 3 });
    expect(none.propose([], 16).some((t, i) => t === reference[i])).toBe(false);
  });
});

describe('greedy acceptance', () => {
  it('keeps the longest agreeing prefix and adds the target’s own next token', () => {
    // Rows: pending, 5, 6, 7, 8. The target predicts 5 after pending, 6 after 5, then 9 after 6.
    expect(acceptDraft([5, 6, 7, 8], [5, 6, 9, 1, 2])).toEqual({ accepted: 2, next: 9 });
    // All four agree: the bonus token is the prediction after the last.
    expect(acceptDraft([5, 6, 9, 1], [5, 6, 9, 1, 2])).toEqual({ accepted: 4, next: 2 });
    // The first disagrees: the target's own token after the pending one, as plain decode gives.
    expect(acceptDraft([4, 6], [5, 6, 9])).toEqual({ accepted: 0, next: 5 });
    // No draft: a plain decode step.
    expect(acceptDraft([], [7])).toEqual({ accepted: 0, next: 7 });
    expect(() => acceptDraft([1, 2], [1, 2])).toThrow(/need one more than the draft/);
  });

  it('counts acceptance rate, mean acceptance length and per-position acceptance as vLLM does', () => {
    const s = new AcceptanceStats();
    s.record(4, 2);
    s.record(4, 4);
    s.record(4, 0);
    // 6 of 12 drafted tokens kept; 1 + 6 / 3 steps = 3 tokens per step.
    expect(s.acceptanceRate).toBe(0.5);
    expect(s.meanAcceptanceLength).toBe(3);
    expect(s.perPosition).toEqual([2 / 3, 2 / 3, 1 / 3, 1 / 3]);
  });
});
