import { describe, expect, it } from 'vitest';
import { argmax, klFromLogits, logitsError } from './quality.ts';

describe('format error against f32', () => {
  it('KL of two-way distributions matches the closed form', () => {
    // softmax([0, 0]) = (½, ½); softmax([ln 3, 0]) = (¾, ¼).
    // KL((½, ½) ‖ (¾, ¼)) = ½ ln(½ / ¾) + ½ ln(½ / ¼) = ½ ln(4/3) ≈ 0.143841.
    expect(klFromLogits([0, 0], [Math.log(3), 0])).toBeCloseTo(0.5 * Math.log(4 / 3), 12);
    // Shifting logits does not change a distribution.
    expect(klFromLogits([5, 1, -2], [105, 101, 98])).toBeCloseTo(0, 12);
  });

  it('argmax takes the first of equal values', () => {
    expect(argmax([1, 3, 3, 2])).toBe(1);
    expect(argmax([9, 1, 3, 7], 2, 4)).toBe(1);
  });

  it('counts agreement, the first divergence and the normwise error by hand', () => {
    const ref = new Float32Array([1, 2, 0, /**/ 3, 0, 0, /**/ 0, 0, 4]);
    // Step 0 agrees (argmax 1), step 1 flips to index 1, step 2 agrees (index 2).
    const test = new Float32Array([1, 2, 0, /**/ 3, 4, 0, /**/ 0, 0, 4]);
    const e = logitsError(test, ref, 3);
    expect(e.top1Agreement).toBeCloseTo(2 / 3, 12);
    expect(e.divergenceStep).toBe(1);
    // ‖diff‖ = 4, ‖ref‖ = sqrt(1 + 4 + 9 + 16) = sqrt(30).
    expect(e.relErr).toBeCloseTo(4 / Math.sqrt(30), 7);
    // Only step 1 differs: KL(softmax[3,0,0] ‖ softmax[3,4,0]) / 3.
    const p = [Math.exp(3), 1, 1].map((v) => v / (Math.exp(3) + 2));
    const q = [Math.exp(3), Math.exp(4), 1].map((v) => v / (Math.exp(3) + Math.exp(4) + 1));
    const kl = p.reduce((a, pi, i) => a + pi * Math.log(pi / q[i]), 0);
    expect(e.klDiv).toBeCloseTo(kl / 3, 9);
  });

  it('identical logits: no error and no divergence', () => {
    const ref = new Float32Array([0.5, -1, 2, 2, 1, 0]);
    const e = logitsError(ref.slice(), ref, 3);
    expect(e).toEqual({ relErr: 0, top1Agreement: 1, klDiv: 0, divergenceStep: null });
  });

  it('rejects logits that do not make whole rows', () => {
    expect(() => logitsError(new Float32Array(4), new Float32Array(4), 3)).toThrow(/rows of 3/);
  });
});
