import { describe, expect, it } from 'vitest';
import { agreement, agreementTopK, logSoftmax, logSoftmaxWithout, onlyNearTies } from './agreement.ts';

const loose = { top1: 0.5, maxAbsLogprobDiff: 0.1 };

describe('logSoftmax', () => {
  it('matches the hand count on three logits', () => {
    // log(e^0 + e^1 + e^2) = 2.40760596…
    const out = logSoftmax([0, 1, 2]);
    expect(out[0]).toBeCloseTo(-2.4076059644, 9);
    expect(out[1]).toBeCloseTo(-1.4076059644, 9);
    expect(out[2]).toBeCloseTo(-0.4076059644, 9);
  });

  it('does not overflow on large logits', () => {
    const out = logSoftmax([1000, 1000]);
    expect(out[0]).toBeCloseTo(-Math.LN2, 12);
  });
});

describe('logSoftmaxWithout', () => {
  it('renormalizes over the tokens kept, the ones left out at −∞', () => {
    // Token 1 left out: log(e^0 + e^2) = 2.12692801…
    const out = logSoftmaxWithout([0, 1, 2], [1]);
    expect(out[0]).toBeCloseTo(-2.126928011, 9);
    expect(out[1]).toBe(Number.NEGATIVE_INFINITY);
    expect(out[2]).toBeCloseTo(-0.126928011, 9);
    expect(logSoftmaxWithout([0, 1, 2], [])).toEqual(logSoftmax([0, 1, 2]));
  });
});

describe('agreement', () => {
  it('counts top-1 matches, the largest |Δ log p| and the mean KL by hand', () => {
    const ours = [Math.log(0.5), Math.log(0.5)];
    const theirs = [Math.log(0.25), Math.log(0.75)];
    // Position 0: identical. Position 1: top-1 differs (a tie resolves to index 0 vs 1).
    const a = agreement([ours, [Math.log(0.9), Math.log(0.1)]], [ours, theirs], loose);
    expect(a.tokens).toBe(2);
    expect(a.top1).toBe(0.5);
    expect(a.top1Mismatches).toEqual([1]);
    // This engine's own gap between its top-1 (0.9) and the peer's (0.1): ln 9.
    expect(a.top1Gaps[0]).toBeCloseTo(Math.log(9), 12);
    // |log 0.9 − log 0.25| = 1.2809…, |log 0.1 − log 0.75| = 2.0149…
    expect(a.maxAbsLogprobDiff).toBeCloseTo(Math.log(0.75 / 0.1), 12);
    // KL(p‖q) at position 1 = 0.9 ln(0.9/0.25) + 0.1 ln(0.1/0.75); position 0 adds 0; mean over 2.
    const kl1 = 0.9 * Math.log(0.9 / 0.25) + 0.1 * Math.log(0.1 / 0.75);
    expect(a.kl).toBeCloseTo(kl1 / 2, 12);
    expect(a.passed).toBe(false);
    expect(a.logprobMismatches).toEqual([1]);
  });

  it('the largest |Δ log p| over likely tokens leaves out the far tail', () => {
    // Three tokens: two likely, one at p = 1e-6 whose log p the peer puts 2 nats lower.
    const ours = [Math.log(0.6), Math.log(0.4 - 1e-6), Math.log(1e-6)];
    const theirs = [Math.log(0.6), Math.log(0.4 - 1e-6) - 0.01, Math.log(1e-6) - 2];
    const a = agreement([ours], [theirs], loose);
    expect(a.maxAbsLogprobDiff).toBeCloseTo(2, 12);
    expect(a.maxAbsLogprobDiffLikely).toBeCloseTo(0.01, 12);
  });

  it('passes identical distributions with zero difference and zero KL', () => {
    const row = logSoftmax([0.3, -1, 2, 0]);
    const a = agreement([row, row], [row, row], { top1: 1, maxAbsLogprobDiff: 0 });
    expect(a).toMatchObject({
      top1: 1,
      maxAbsLogprobDiff: 0,
      kl: 0,
      passed: true,
      top1Mismatches: [],
      top1Gaps: [],
    });
  });

  it('fails a peer that gave a token probability 0 (log p = −∞)', () => {
    const ours = logSoftmax([0, 0]);
    const a = agreement([ours], [[0, Number.NEGATIVE_INFINITY]], loose);
    expect(a.passed).toBe(false);
    expect(Number.isFinite(a.maxAbsLogprobDiff)).toBe(true);
    expect(a.maxAbsLogprobDiff).toBeGreaterThan(1e300);
  });

  it('does not fail on top-1 flips between tokens within the log-p bound (near-ties), only on wider ones', () => {
    const bound = { top1: 0.95, maxAbsLogprobDiff: 0.1 };
    const same = [Math.log(0.5), Math.log(0.5)];
    // Position 1: this engine has token 0 ahead by 0.06 in log p, the peer token 1 ahead by 0.02;
    // each |Δ log p| is 0.04, within 0.1, and so is the gap of 0.06.
    const ours = [same, [-0.66, -0.72]];
    const theirs = [same, [-0.7, -0.68]];
    const a = agreement(ours, theirs, bound);
    expect(a.top1).toBe(0.5);
    expect(a.top1Gaps[0]).toBeCloseTo(0.06, 12);
    expect(a.maxAbsLogprobDiff).toBeCloseTo(0.04, 12);
    expect(onlyNearTies(a)).toBe(true);
    expect(a.passed).toBe(true);
    // Each |Δ log p| 0.06, within the bound, but the tokens 0.12 apart here: not a near-tie, and the
    // top-1 share of 50% fails.
    const wide = agreement([same, [-0.63, -0.75]], [same, [-0.69, -0.69 + 1e-9]], bound);
    expect(wide.maxAbsLogprobDiff).toBeCloseTo(0.06, 8);
    expect(onlyNearTies(wide)).toBe(false);
    expect(wide.passed).toBe(false);
    // The first flip against a bound of 0.05: |Δ log p| 0.04 within it, the gap 0.06 not.
    expect(agreement(ours, theirs, { top1: 0.95, maxAbsLogprobDiff: 0.05 }).passed).toBe(false);
  });

  it('counts the near-ties, flipped or not, and the top-1 share at the other positions', () => {
    const bound = { top1: 0.99, maxAbsLogprobDiff: 0.1 };
    // This engine's top two, by hand: position 0 apart by 1.0, 1 by 0.05 (a near-tie the peer
    // keeps), 2 by 0.08 (a near-tie the peer swaps), 3 by 0.5 (decided, and the peer swaps it).
    const ours = [
      [-0.3, -1.3, -5],
      [-0.7, -0.75, -5],
      [-0.66, -0.74, -5],
      [-0.5, -1.0, -5],
    ];
    const theirs = [ours[0], ours[1], [-0.71, -0.69, -5], [-1.0, -0.5, -5]];
    const a = agreement(ours, theirs, bound);
    expect(a.top1).toBe(0.5);
    expect(a.nearTies).toBe(2);
    // Positions 0 and 3 are outside the near-ties; the peer agrees at 0 alone.
    expect(a.top1OutsideNearTies).toBe(0.5);
    // Every position a near-tie: no share outside them.
    const flat = agreement([[-0.69, -0.7]], [[-0.7, -0.69]], bound);
    expect(flat.nearTies).toBe(1);
    expect(flat.top1OutsideNearTies).toBeUndefined();
  });

  it('refuses rows of different lengths or counts', () => {
    expect(() => agreement([[0]], [], loose)).toThrow(/positions/);
    expect(() => agreement([[0, 1]], [[0]], loose)).toThrow(/entries/);
  });
});

describe('agreementTopK', () => {
  it('counts the top-2 of a 4-token vocabulary by hand, with the rest as one bucket', () => {
    const ours = [Math.log(0.5), Math.log(0.3), Math.log(0.1), Math.log(0.1)];
    // The peer lists tokens 1 and 0 (its own order), at 0.4 and 0.4: a tie it breaks to the first listed.
    const theirs = [
      { id: 1, logprob: Math.log(0.4) },
      { id: 0, logprob: Math.log(0.4) },
    ];
    const a = agreementTopK([ours], [theirs], loose);
    expect(a.peerTopK).toBe(2);
    expect(a.top1).toBe(0);
    expect(a.top1Mismatches).toEqual([0]);
    expect(a.top1Gaps[0]).toBeCloseTo(Math.log(0.5 / 0.3), 12);
    // |ln 0.3 − ln 0.4| = 0.2877, |ln 0.5 − ln 0.4| = 0.2231: the largest over the listed two.
    expect(a.maxAbsLogprobDiff).toBeCloseTo(Math.log(0.4 / 0.3), 12);
    // KL over {0}, {1}, {2, 3}: 0.5 ln(0.5/0.4) + 0.3 ln(0.3/0.4) + 0.2 ln(0.2/0.2).
    expect(a.kl).toBeCloseTo(0.5 * Math.log(0.5 / 0.4) + 0.3 * Math.log(0.3 / 0.4), 12);
    expect(a.passed).toBe(false);
  });

  it('gives agreement()’s figures for a whole vocabulary listed in the peer’s own order', () => {
    const ours = [logSoftmax([0.3, -1, 2, 0]), logSoftmax([1, 1.5, -2, 0.1])];
    const full = [logSoftmax([0.31, -1.2, 1.9, 0]), logSoftmax([1.4, 1.2, -2, 0])];
    const listed = full.map((row) =>
      Array.from(row, (logprob, id) => ({ id, logprob })).sort((x, y) => y.logprob - x.logprob),
    );
    const a = agreementTopK(ours, listed, loose);
    const b = agreement(ours, full, loose);
    expect(a.peerTopK).toBeUndefined();
    expect(a.top1).toBe(b.top1);
    expect(a.top1Mismatches).toEqual(b.top1Mismatches);
    expect(a.maxAbsLogprobDiff).toBeCloseTo(b.maxAbsLogprobDiff, 12);
    expect(a.kl).toBeCloseTo(b.kl, 12);
  });

  it('refuses a token id outside the vocabulary and an empty list', () => {
    expect(() => agreementTopK([[0, 0]], [[{ id: 2, logprob: 0 }]], loose)).toThrow(/token 2/);
    expect(() => agreementTopK([[0, 0]], [[]], loose)).toThrow(/no token/);
  });
});
