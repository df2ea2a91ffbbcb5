import { describe, expect, it } from 'vitest';
import { parseDrafterSpec } from '../spec/drafter.ts';
import { curveAt, expectedAcceptanceLength, kneeOf, predictedSpeedup } from './predict.ts';

describe('predicted speed-up', () => {
  it('is τ decode steps of work per draft plus verify', () => {
    // τ = 3 tokens per step; a step costs 1 ms of drafting + 14 ms of verify; plain decode 10 ms/token.
    // 3 tokens for 15 ms against 30 ms: 2×.
    expect(predictedSpeedup({ meanAcceptanceLength: 3, draftMs: 1, verifyMs: 14, decodeMs: 10 })).toBe(2);
    expect(predictedSpeedup({ meanAcceptanceLength: 3, draftMs: 0, verifyMs: 0, decodeMs: 10 })).toBe(0);
  });

  it('expects 1 + α + … + α^K tokens per step', () => {
    // α = 0.5, K = 2: 1 + 0.5 + 0.25.
    expect(expectedAcceptanceLength(0.5, 2)).toBeCloseTo(1.75, 12);
    // α = 0.8, K = 4: 1 + .8 + .64 + .512 + .4096.
    expect(expectedAcceptanceLength(0.8, 4)).toBeCloseTo(3.3616, 12);
    expect(expectedAcceptanceLength(1, 4)).toBe(5);
    expect(expectedAcceptanceLength(0, 4)).toBe(1);
  });
});

describe('reading the verify-K curve', () => {
  const curve = [
    { k: 1, depth: 64, verifyMs: 10, decodeMs: 10 },
    { k: 4, depth: 64, verifyMs: 16, decodeMs: 12 },
    { k: 8, depth: 64, verifyMs: 30, decodeMs: 11 },
    { k: 4, depth: 512, verifyMs: 40, decodeMs: 20 },
  ];

  it('takes the nearest depth, a measured k as is, and interpolates between neighbours', () => {
    // Decode: the mean of that depth's three decode medians, (10 + 12 + 11) / 3.
    expect(curveAt(curve, 4, 100)).toEqual({ verifyMs: 16, decodeMs: 11, depth: 64 });
    // k = 5 is a quarter of the way from 4 (16 ms) to 8 (30 ms): 19.5 ms.
    expect(curveAt(curve, 5, 64)?.verifyMs).toBeCloseTo(19.5, 12);
    // Past the ends: clamped.
    expect(curveAt(curve, 17, 64)?.verifyMs).toBe(30);
    expect(curveAt(curve, 2, 400)).toEqual({ verifyMs: 40, decodeMs: 20, depth: 512 });
    expect(curveAt([], 4, 64)).toBeNull();
  });

  it('puts the knee at the largest k under the ratio at every depth, stopping at the first miss', () => {
    const points = [
      { k: 1, depth: 64, verifyMs: 1, decodeMs: 1, ratio: 1.0 },
      { k: 2, depth: 64, verifyMs: 1, decodeMs: 1, ratio: 1.2 },
      { k: 4, depth: 64, verifyMs: 1, decodeMs: 1, ratio: 1.6 },
      // Back under after a miss: does not count.
      { k: 8, depth: 64, verifyMs: 1, decodeMs: 1, ratio: 1.4 },
      { k: 1, depth: 256, verifyMs: 1, decodeMs: 1, ratio: 1.0 },
      { k: 2, depth: 256, verifyMs: 1, decodeMs: 1, ratio: 1.1 },
      { k: 4, depth: 256, verifyMs: 1, decodeMs: 1, ratio: 1.5 },
    ];
    expect(kneeOf(points, 1.5)).toEqual({
      knee: 2,
      byDepth: [
        { depth: 64, k: 2 },
        { depth: 256, k: 4 },
      ],
    });
    // A depth where even k = 1 misses: no knee at all.
    expect(kneeOf([{ k: 1, depth: 64, verifyMs: 2, decodeMs: 1, ratio: 2 }], 1.5).knee).toBeNull();
  });
});

describe('drafter syntax', () => {
  it('parses each drafter and names what is wrong with the rest', () => {
    expect(parseDrafterSpec('ngram')).toEqual({ kind: 'ngram', minN: 1, maxN: 4 });
    expect(parseDrafterSpec(' ngram:2-3 ')).toEqual({ kind: 'ngram', minN: 2, maxN: 3 });
    expect(parseDrafterSpec('model:ci-tiny')).toEqual({ kind: 'model', preset: 'ci-tiny' });
    expect(parseDrafterSpec('truncated:2')).toEqual({ kind: 'truncated', layers: 2 });
    expect(parseDrafterSpec('oracle:0.8')).toEqual({ kind: 'oracle', p: 0.8 });
    expect(parseDrafterSpec('ngram:3-2')).toMatch(/1 ≤ MIN ≤ MAX/);
    expect(parseDrafterSpec('truncated:0')).toMatch(/at least 1 layer/);
    expect(parseDrafterSpec('oracle:1.5')).toMatch(/\[0, 1\]/);
    expect(parseDrafterSpec('medusa')).toMatch(/"medusa" is not a drafter/);
  });
});
