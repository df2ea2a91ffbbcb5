import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../random.ts';
import { type Drafter, ngramDrafter, oracleDrafter } from './drafters.ts';
import { speculativeDecode, type VerifyTarget } from './loop.ts';

const VOCAB = 50;

/**
 * A stand-in target without a GPU: its greedy token after a context is a fixed function of the
 * last three tokens, so its output repeats now and then (as small models' does) and the n-gram
 * drafter has something to find. It keeps each sequence's "cache" as a token list and counts passes.
 */
class FakeTarget implements VerifyTarget {
  readonly cache = new Map<number, number[]>();
  passes = 0;
  rowsVerified = 0;
  static next(context: readonly number[]): number {
    const [a = 0, b = 0, c = 0] = context.slice(-3);
    return (a * 7 + b * 3 + c) % 11 === 0 ? (a + 1) % VOCAB : (a * 31 + b * 17 + c * 5 + 3) % VOCAB;
  }
  async verify(seq: number, tokens: readonly number[]) {
    this.passes++;
    this.rowsVerified += tokens.length;
    const kv = this.cache.get(seq) ?? [];
    const nextTokens = tokens.map((t) => {
      kv.push(t);
      return FakeTarget.next(kv);
    });
    this.cache.set(seq, kv);
    return { nextTokens };
  }
  truncate(seq: number, length: number) {
    const kv = this.cache.get(seq) ?? [];
    if (length > kv.length) throw new Error('truncate past the end');
    kv.length = length;
  }
  sequenceLength(seq: number) {
    return this.cache.get(seq)?.length ?? 0;
  }
}

/** Plain greedy decode by the same rule, token by token. */
function greedy(prompt: readonly number[], count: number): number[] {
  const ctx = [...prompt];
  const out: number[] = [];
  while (out.length < count) {
    const t = FakeTarget.next(ctx);
    out.push(t);
    ctx.push(t);
  }
  return out;
}

function run(drafter: Drafter, k: number, count = 64, adaptive = false) {
  const target = new FakeTarget();
  const prompt = [1, 2, 3, 4, 5, 1, 2, 3];
  target.cache.set(0, [...prompt]);
  let clock = 0;
  return speculativeDecode(target, drafter, {
    seq: 0,
    prompt,
    first: FakeTarget.next(prompt),
    firstAt: 0,
    count,
    k,
    adaptive,
    now: () => clock++,
  }).then((r) => ({ r, target, prompt }));
}

/** A drafter that proposes seeded random tokens: almost never right. */
function noise(seed: number): Drafter {
  const random = mulberry32(seed);
  return {
    name: 'noise',
    synthetic: true,
    propose: (_c, k) => Array.from({ length: k }, () => Math.floor(random() * VOCAB)),
  };
}

describe('the speculative decoding loop', () => {
  const prompt = [1, 2, 3, 4, 5, 1, 2, 3];
  const want = greedy(prompt, 64);

  it('emits exactly plain greedy output, whatever the drafter and K', async () => {
    for (const k of [1, 2, 4, 7, 16]) {
      for (const drafter of [
        ngramDrafter(),
        noise(k),
        oracleDrafter({ promptLength: 8, reference: want, p: 0.7, vocab: VOCAB, seed: k }),
      ]) {
        const { r, target } = await run(drafter, k);
        expect(r.tokens, `${drafter.name} K=${k}`).toEqual(want);
        // The cache holds the prompt and every emitted token but the last (pending) one.
        expect(target.sequenceLength(0)).toBe(prompt.length + 63);
        expect(target.cache.get(0)).toEqual([...prompt, ...want.slice(0, 63)]);
      }
    }
  });

  it('with a perfect drafter, each step emits K + 1 tokens', async () => {
    const oracle = oracleDrafter({ promptLength: 8, reference: want, p: 1, vocab: VOCAB, seed: 1 });
    const { r, target } = await run(oracle, 4, 61);
    // 60 tokens after the first, 5 per step: 12 steps, 12 passes of 5 rows.
    expect(r.steps.length).toBe(12);
    expect(target.passes).toBe(12);
    expect(target.rowsVerified).toBe(60);
    expect(r.stats.acceptanceRate).toBe(1);
    expect(r.stats.meanAcceptanceLength).toBe(5);
    expect(r.stats.perPosition).toEqual([1, 1, 1, 1]);
  });

  it('with a drafter that is always wrong, each step is one decode step', async () => {
    const wrong = oracleDrafter({ promptLength: 8, reference: want, p: 0, vocab: VOCAB, seed: 1 });
    const { r } = await run(wrong, 3, 20);
    // One token per step; the last three steps draft fewer, as fewer tokens are still wanted.
    expect(r.steps.length).toBe(19);
    expect(r.steps.every((s) => s.accepted === 0)).toBe(true);
    expect(r.steps.map((s) => s.rows)).toEqual([...Array(16).fill(4), 3, 2, 1]);
    expect(r.stats.acceptanceRate).toBe(0);
    expect(r.stats.meanAcceptanceLength).toBe(1);
  });

  it('never drafts past the tokens still wanted', async () => {
    const oracle = oracleDrafter({ promptLength: 8, reference: want, p: 1, vocab: VOCAB, seed: 1 });
    // 1 + 5 + 5 + 2: the last step drafts 1 token, not 4.
    const { r } = await run(oracle, 4, 13);
    expect(r.steps.map((s) => s.drafted)).toEqual([4, 4, 1]);
    expect(r.tokens).toEqual(want.slice(0, 13));
  });

  it('adaptive K shrinks after rejections and grows back after full acceptances', async () => {
    const wrong = oracleDrafter({ promptLength: 8, reference: want, p: 0, vocab: VOCAB, seed: 1 });
    const { r } = await run(wrong, 4, 8, true);
    // Every draft is rejected: 4, 3, 2, 1, 1, 1, then none (one token left, the target's own).
    expect(r.steps.map((s) => s.drafted)).toEqual([4, 3, 2, 1, 1, 1, 0]);
    // Wrong for three proposals, then right: 4, 3, 2 rejected, then 1, 2, 3, 4, 4 fully accepted.
    let calls = 0;
    const late: Drafter = {
      name: 'late',
      synthetic: true,
      propose: (context, k) => {
        const at = context.length - 8;
        return want.slice(at, at + k).map((t) => (calls < 3 ? (t + 1) % VOCAB : t));
      },
    };
    const wrapped: Drafter = {
      ...late,
      propose: (c, k) => {
        const d = late.propose(c, k);
        calls++;
        return d;
      },
    };
    const grown = await run(wrapped, 4, 1 + 3 + 2 + 3 + 4 + 5 + 5, true);
    expect(grown.r.steps.map((s) => s.drafted)).toEqual([4, 3, 2, 1, 2, 3, 4, 4]);
    expect(grown.r.tokens).toEqual(want.slice(0, 23));
  });
});
