import { describe, expect, it } from 'vitest';
import { measurePeer, type PeerDriver, promptTokens } from './measure.ts';

/** A driver that answers with fixed times and records what it was asked (the loop's logic only). */
function fakeDriver() {
  const calls: string[] = [];
  let prefillMs = 10;
  const driver: PeerDriver = {
    async prefill(tokens) {
      calls.push(`pp${tokens.length}`);
      return prefillMs++;
    },
    async decode(context, steps) {
      calls.push(`tg${steps}@${context.length}`);
      return Array.from({ length: steps }, (_, i) => 2 + i);
    },
  };
  return { driver, calls };
}

describe('measurePeer', () => {
  it('runs warm-up then measured repetitions per point and keeps only the measured ones', async () => {
    const { driver, calls } = fakeDriver();
    const points = await measurePeer(driver, {
      prefill: [4],
      depths: [0, 8],
      gen: 3,
      reps: 3,
      warmup: 1,
      vocabSize: 500,
    });
    // 1 warm-up + 3 reps for pp4 (times 10 discarded, then 11, 12, 13), then per depth 4 decode calls of
    // gen − 1 = 2 steps (the first token comes from the prompt), depth 0 as a one-token prompt.
    expect(calls).toEqual([...Array(4).fill('pp4'), ...Array(4).fill('tg2@1'), ...Array(4).fill('tg2@8')]);
    expect(points[0]).toMatchObject({
      pass: 'prefill',
      tokens: 4,
      depth: 0,
      samplesMs: [11, 12, 13],
      medianMs: 12,
    });
    expect(points[0].tokPerS).toBeCloseTo(4000 / 12, 9);
    // Each decode sample is the mean of its steps: (2 + 3) / 2 = 2.5 ms per token.
    expect(points[1]).toMatchObject({
      pass: 'decode',
      tokens: 1,
      depth: 0,
      samplesMs: [2.5, 2.5, 2.5],
      medianMs: 2.5,
    });
    expect(points[2].tokPerS).toBeCloseTo(400, 9);
  });
});

describe('measurePeer with the plan’s prompts', () => {
  it('feeds each point its own prompt’s ids and hands the driver the prompt (its text)', async () => {
    const seen: string[] = [];
    const driver: PeerDriver = {
      async prefill(tokens, prompt) {
        seen.push(`pp ${tokens.join(',')} "${prompt?.text}"`);
        return 1;
      },
      async decode(context, steps, prompt) {
        seen.push(`tg${steps} ${context.join(',')} "${prompt?.text}"`);
        return [1];
      },
    };
    const points = await measurePeer(driver, {
      prefill: [2],
      depths: [0],
      gen: 2,
      reps: 1,
      warmup: 0,
      vocabSize: 500,
      // Depth 0's context is the 2 tokens a text gives (as record.ts peerPlan spells it), kept as depth 0.
      prompts: { prefill: [{ ids: [3, 101], text: 'a' }], decode: [{ ids: [3, 102], text: 'b' }] },
    });
    expect(seen).toEqual(['pp 3,101 "a"', 'tg1 3,102 "b"']);
    expect(points.map((p) => [p.pass, p.tokens, p.depth])).toEqual([
      ['prefill', 2, 0],
      ['decode', 1, 0],
    ]);
  });
});

describe('measurePeer with a driver that names its clock', () => {
  it('keeps the driver’s clock on each point and the wall clock beside it', async () => {
    let call = 0;
    const driver: PeerDriver = {
      clock: 'llama.cpp-perf',
      async prefill() {
        call++;
        return { ms: call, wallMs: 10 * call };
      },
      async decode() {
        // A mean per step already, as llama.cpp's eval time over one generation gives it.
        return { ms: 0.25, wallMs: 1 };
      },
    };
    const [pp, tg] = await measurePeer(driver, {
      prefill: [16],
      depths: [16],
      gen: 16,
      reps: 3,
      warmup: 1,
      vocabSize: 509,
    });
    expect(pp).toEqual({
      pass: 'prefill',
      tokens: 16,
      depth: 0,
      samplesMs: [2, 3, 4],
      medianMs: 3,
      tokPerS: 16000 / 3,
      clock: 'llama.cpp-perf',
      wallSamplesMs: [20, 30, 40],
      wallMedianMs: 30,
    });
    expect(tg).toMatchObject({ samplesMs: [0.25, 0.25, 0.25], tokPerS: 4000, wallMedianMs: 1 });
  });

  it('leaves both out for a driver that names no clock (wllama’s)', async () => {
    const { driver } = fakeDriver();
    const [p] = await measurePeer(driver, {
      prefill: [4],
      depths: [],
      gen: 2,
      reps: 1,
      warmup: 0,
      vocabSize: 500,
    });
    expect(p).not.toHaveProperty('clock');
    expect(p).not.toHaveProperty('wallSamplesMs');
  });
});

describe('promptTokens', () => {
  it('feeds ids past the specials and byte tokens, within the vocabulary, the same every time', () => {
    const t = promptTokens(64, 509);
    expect(t).toHaveLength(64);
    expect(Math.min(...t)).toBeGreaterThanOrEqual(132);
    expect(Math.max(...t)).toBeLessThan(509);
    expect(promptTokens(64, 509)).toEqual(t);
    expect(new Set(t).size).toBeGreaterThan(60);
  });
});
