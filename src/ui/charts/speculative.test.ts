import { describe, expect, it } from 'vitest';
import { makeSpecResult } from '../../../test-support/fixtures/speculative.ts';
import { curveAt } from '../../speculative/predict.ts';
import { freeDrafterLines } from './speculative.ts';

describe('freeDrafterLines', () => {
  const s = makeSpecResult().speculative;
  if (!s) throw new Error('the fixture has no speculative section');

  it('runs from no acceptance (one token per verify of K + 1) to full acceptance (K + 1 tokens)', () => {
    const [line, ...others] = freeDrafterLines(s);
    expect(others).toEqual([]);
    expect(line.k).toBe(4);
    // The runs' mean context is 64 + 64 / 2 = 96 tokens: the curve's depth 64 is the nearest.
    expect(line.depth).toBe(64);
    const at = curveAt(s.verifyCurve, 5, 96);
    if (!at) throw new Error('no curve');
    const first = line.points[0];
    const last = line.points[line.points.length - 1];
    expect(first.rate).toBe(0);
    expect(first.speedup).toBeCloseTo(at.decodeMs / at.verifyMs, 12);
    expect(last.rate).toBe(1);
    expect(last.speedup).toBeCloseTo((5 * at.decodeMs) / at.verifyMs, 12);
  });

  it('puts a free drafter that drafts K every step on the line: x is (τ − 1) ÷ K', () => {
    const [line] = freeDrafterLines(s);
    const at = curveAt(s.verifyCurve, 5, 96);
    if (!at) throw new Error('no curve');
    // accepted ÷ drafted = (τ − 1) ÷ K, so the line is straight in x: (1 + K·x) · decode ÷ verify.
    for (const p of line.points)
      expect(p.speedup).toBeCloseTo(((1 + 4 * p.rate) * at.decodeMs) / at.verifyMs, 9);
  });

  it('draws nothing without runs', () => {
    expect(freeDrafterLines({ ...s, runs: [] })).toEqual([]);
  });
});
