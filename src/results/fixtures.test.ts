import { describe, expect, it } from 'vitest';
import { curveAt, kneeOf, predictedSpeedup } from '../speculative/predict.ts';
import { makeSpecResult } from './fixtures.ts';
import { BenchResultSchema } from './schema.ts';

describe('makeSpecResult', () => {
  const r = makeSpecResult();
  const s = r.speculative;

  it('is a valid result of the spec suite, as an imported file would be', () => {
    const parsed = BenchResultSchema.safeParse(JSON.parse(JSON.stringify(r)));
    expect(parsed.success).toBe(true);
    expect(r.spec.suite).toBe('spec');
    expect(r.spec.workloads.map((w) => w.kind)).toEqual(['spec']);
    expect(r.points).toEqual([]);
  });

  it('has the curve of the README ratios, its knee, and one run per drafter and prompt class', () => {
    if (!s) throw new Error('no speculative section');
    const at64 = s.verifyCurve.filter((p) => p.depth === 64);
    expect(at64.map((p) => p.k)).toEqual([1, 2, 4, 8, 16]);
    expect(at64.map((p) => Number(p.ratio.toFixed(2)))).toEqual([1.02, 1.1, 1.3, 1.6, 3.1]);
    // Each larger verify does more work on nearly the same bytes: it slides right on the roofline.
    for (let i = 1; i < at64.length; i++) expect(at64[i].intensity).toBeGreaterThan(at64[i - 1].intensity);
    expect(kneeOf(s.verifyCurve, s.kneeRatio)).toEqual({ knee: s.knee, byDepth: s.kneeByDepth });
    expect(s.knee).toBe(4);
    expect(s.runs.map((run) => `${run.drafter} ${run.promptClass}`)).toEqual([
      'ngram repetitive',
      'ngram random',
      'oracle:0.8 repetitive',
      'oracle:0.8 random',
      'truncated:1 repetitive',
      'truncated:1 random',
    ]);
    expect(s.runs.filter((run) => run.synthetic).map((run) => run.drafter)).toEqual([
      'oracle:0.8',
      'oracle:0.8',
    ]);
  });

  it('keeps each run consistent: rates from counts, speed-up from TPOTs, prediction from the formula', () => {
    for (const run of s?.runs ?? []) {
      expect(run.acceptanceRate).toBeCloseTo(run.accepted / run.drafted, 12);
      expect(run.meanAcceptanceLength).toBeCloseTo(1 + run.accepted / run.steps, 12);
      expect(run.speedup).toBeCloseTo(run.baselineTpotMs / run.tpotMs, 12);
      expect(run.perPosition).toHaveLength(run.k);
      const at = curveAt(s?.verifyCurve ?? [], run.k + 1, run.promptTokens + run.tokens / 2);
      expect(at).not.toBeNull();
      if (at) {
        expect(run.predictedSpeedup).toBeCloseTo(
          predictedSpeedup({ meanAcceptanceLength: run.meanAcceptanceLength, draftMs: run.draftMs, ...at }),
          12,
        );
      }
    }
  });
});
