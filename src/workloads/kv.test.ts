import { describe, expect, it } from 'vitest';
import { defaultKvHeads, defaultWindow, errorByPosition } from './kv.ts';

describe('the KV matrix runner’s pure parts', () => {
  it('default window: the largest whole pages whose 4× still leaves room for a generation', () => {
    // maxSeqLen 1024, gen 8: (1024 − 8) / 4 = 254 → 15 pages of 16 = 240 (depth 960 + 7 ≤ 1024).
    expect(defaultWindow(1024, 8, 16)).toBe(240);
    // Never below one page.
    expect(defaultWindow(40, 8, 16)).toBe(16);
  });

  it('default KV heads: MHA, the model’s own, MQA, each once', () => {
    const c = { numHeads: 4, numKvHeads: 2 } as Parameters<typeof defaultKvHeads>[0];
    expect(defaultKvHeads(c)).toEqual([4, 2, 1]);
    expect(defaultKvHeads({ ...c, numKvHeads: 4 })).toEqual([4, 1]);
  });

  it('error by position: each fifth’s normwise error, top-1 share and first divergence (hand counts)', () => {
    // 10 positions of a vocab of 2: fifths are positions 0–1, 4–5 and 8–9.
    const want = new Float32Array(20);
    for (let p = 0; p < 10; p++) want.set([1, 0], 2 * p);
    const got = new Float32Array(want);
    got.set([0, 1], 2 * 5); // position 5: argmax flips, error √2 against a norm of √2 (two rows of 1)
    got.set([1.5, 0], 2 * 8); // position 8: same argmax, error 0.5 over a norm of √2
    const e = errorByPosition(got, want, 2);
    expect(e.map((b) => b.bucket)).toEqual(['first', 'middle', 'last']);
    expect(e[0]).toEqual({ bucket: 'first', relErr: 0, top1: 1, firstDivergence: null });
    expect(e[1].relErr).toBeCloseTo(Math.sqrt(2) / Math.sqrt(2), 12);
    expect(e[1].top1).toBe(0.5);
    expect(e[1].firstDivergence).toBe(5);
    expect(e[2].relErr).toBeCloseTo(0.5 / Math.sqrt(2), 12);
    expect(e[2].top1).toBe(1);
  });
});
