import { describe, expect, it } from 'vitest';
import {
  argmaxRef,
  attentionRef,
  compare,
  matmulRef,
  rmsNormRef,
  ropeRef,
  swigluRef,
} from '../kernels/reference.ts';
import { presetConfig } from './config.ts';
import { referenceForward } from './reference.ts';
import { ropeTable } from './rope.ts';
import { randomWeights, weightsChecksum } from './weights.ts';

describe('CPU reference ops, checked by hand', () => {
  it('matmul uses the nn.Linear [out, in] convention', () => {
    // x = [[1, 2]], W = [[3, 4], [5, 6], [7, 8]] → [1·3+2·4, 1·5+2·6, 1·7+2·8]
    expect([...matmulRef([1, 2], [3, 4, 5, 6, 7, 8], 1, 2, 3)]).toEqual([11, 17, 23]);
  });

  it('rmsnorm divides by the root mean square', () => {
    // x = [3, 4]: mean square 12.5
    const out = rmsNormRef([3, 4], [1, 2], 1, 2, 0);
    expect(out[0]).toBeCloseTo(3 / Math.sqrt(12.5), 12);
    expect(out[1]).toBeCloseTo((2 * 4) / Math.sqrt(12.5), 12);
  });

  it('rope rotates the halves by the position angle and leaves position 0 alone', () => {
    const c = { ...presetConfig('ci-tiny'), headDim: 4, maxSeqLen: 4 };
    const table = ropeTable(c);
    const x0 = Float64Array.from([1, 2, 3, 4]);
    ropeRef(x0, [0], 1, 4, table);
    expect([...x0]).toEqual([1, 2, 3, 4]);
    const x = Float64Array.from([1, 0, 0, 0]);
    ropeRef(x, [1], 1, 4, table);
    // pair (x[0], x[2]) rotates by 1 rad: (cos 1, sin 1)
    expect(x[0]).toBeCloseTo(Math.cos(1), 6);
    expect(x[2]).toBeCloseTo(Math.sin(1), 6);
  });

  it('attention of the first token returns its own value; later tokens average by softmax', () => {
    const shape = { heads: 1, kvHeads: 1, headDim: 4 };
    const v = [1, 2, 3, 4, 5, 6, 7, 8];
    const k = [0, 0, 0, 0, 0, 0, 0, 0]; // equal scores → uniform weights
    const out = attentionRef([1, 1, 1, 1, 1, 1, 1, 1], k, v, 2, 0, shape);
    expect([...out.subarray(0, 4)]).toEqual([1, 2, 3, 4]);
    expect([...out.subarray(4, 8)]).toEqual([3, 4, 5, 6]);
  });

  it('swiglu and argmax (lowest index wins ties)', () => {
    expect(swigluRef([0], [5])[0]).toBe(0);
    expect(swigluRef([2], [1])[0]).toBeCloseTo(2 / (1 + Math.exp(-2)), 12);
    expect(argmaxRef([1, 3, 3, 0, 9, 9], 2, 3)).toEqual([1, 1]);
  });
});

describe('compare', () => {
  it('passes within tolerance and reports the normwise relative error', () => {
    const r = compare([1, 2.001], [1, 2], { atol: 1e-2, rtol: 0 });
    expect(r.passed).toBe(true);
    expect(r.maxAbsErr).toBeCloseTo(0.001, 9);
    expect(r.maxRelErr).toBeCloseTo(0.0005, 9);
  });

  it('fails and lists the mismatches, NaN included', () => {
    const r = compare([1, Number.NaN, 5], [1, 2, 3], { atol: 1e-3, rtol: 0 });
    expect(r.passed).toBe(false);
    expect(r.mismatches.map((m) => m.index)).toEqual([1, 2]);
    expect(r.maxAbsErr).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('seeded weights and the full reference forward', () => {
  it('are deterministic per seed', () => {
    const c = presetConfig('ci-tiny');
    expect(weightsChecksum(randomWeights(c, 3))).toBe(weightsChecksum(randomWeights(c, 3)));
    expect(weightsChecksum(randomWeights(c, 3))).not.toBe(weightsChecksum(randomWeights(c, 4)));
  });

  it('is causal: logits at a position do not depend on later tokens', () => {
    const w = randomWeights(presetConfig('ci-tiny'), 0);
    const V = w.config.vocabSize;
    const a = referenceForward(w, [5, 9, 100, 7]);
    const b = referenceForward(w, [5, 9, 100, 300]);
    expect(a.subarray(0, 3 * V)).toEqual(b.subarray(0, 3 * V));
    expect(a.subarray(3 * V)).not.toEqual(b.subarray(3 * V));
  });
});
