import { describe, expect, it } from 'vitest';
import { jsonCompletionValid, kldStats, logProb, quantile, verdict, wilson } from './task-score.ts';

describe('task scores', () => {
  it("Wilson's interval matches the closed form by hand", () => {
    // 180 of 200: p = 0.9, z = 1.96: centre (0.9 + 3.8416/400)/(1 + 3.8416/200) = 0.90959/1.019208 = 0.892447;
    // half 1.96·sqrt(0.09/200 + 3.8416/160000)/1.019208 = 1.96·0.0217637/1.019208 = 0.041853.
    const [lo, hi] = wilson(180, 200);
    expect(lo).toBeCloseTo(0.850594, 5);
    expect(hi).toBeCloseTo(0.9343, 4);
    expect(wilson(0, 0)).toEqual([0, 1]);
    expect(wilson(0, 10)[0]).toBe(0);
    expect(wilson(10, 10)[1]).toBe(1);
  });

  it('degraded only past 5 points below f32', () => {
    expect(verdict(-5)).toBe('acceptable');
    expect(verdict(-5.5)).toBe('degraded');
    expect(verdict(3)).toBe('acceptable');
  });

  it('quantiles interpolate between ranks, as numpy does', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    // 0.99 · 4 = 3.96: 4 + 0.96 · (10 − 4)
    expect(quantile([0, 1, 2, 4, 10], 0.99)).toBeCloseTo(9.76, 12);
    const s = kldStats([0.3, 0.1, 0.2], 2);
    expect(s.mean).toBeCloseTo(0.2, 12);
    expect(s.median).toBe(0.2);
    expect(s.max).toBe(0.3);
    expect(s.sameTop).toBeCloseTo(2 / 3, 12);
  });

  it('a JSON completion is valid when the object closes, cut at the newline', () => {
    expect(jsonCompletionValid('JSON: {"id": 5,', ' "name": "bob"}\nJSON: {')).toBe(true);
    expect(jsonCompletionValid('JSON: {"id": 5,', ' "name": "bob"')).toBe(false);
    expect(jsonCompletionValid('JSON: {"id": 5,', ' "name": "bob"} x')).toBe(false);
    expect(jsonCompletionValid('JSON: [1,', ' 2]')).toBe(false);
  });

  it('log-probabilities of a row by hand', () => {
    // logits (0, ln 3): p = (1/4, 3/4)
    expect(logProb([0, Math.log(3)], 1)).toBeCloseTo(Math.log(0.75), 12);
    expect(logProb([1000, 1000], 0)).toBeCloseTo(Math.log(0.5), 12);
  });
});
