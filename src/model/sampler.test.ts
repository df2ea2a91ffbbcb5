import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../random.ts';
import { drawToken, samplingDistribution, samplingProblem } from './sampler.ts';

/** Chi-square statistic of observed counts against expected probabilities. */
function chiSquare(counts: number[], probs: number[], n: number): number {
  return counts.reduce((s, c, i) => s + (c - n * probs[i]) ** 2 / (n * probs[i]), 0);
}

describe('sampling', () => {
  it('greedy at temperature 0: the argmax, the first on a tie', () => {
    expect(samplingDistribution([1, 3, 3, 2], { temperature: 0, topK: 0, topP: 1 })).toEqual({
      ids: [1],
      probs: [1],
    });
  });

  it('temperature, top-k and top-p keep the distribution computed by hand', () => {
    // logits ln(4), ln(3), ln(2), ln(1), ln(0.5) at temperature 1: p ∝ 4, 3, 2, 1, 0.5.
    const logits = [4, 3, 2, 1, 0.5].map(Math.log);
    const all = samplingDistribution(logits, { temperature: 1, topK: 0, topP: 1 });
    expect(all.ids).toEqual([0, 1, 2, 3, 4]);
    for (const [i, p] of all.probs.entries()) expect(p).toBeCloseTo([4, 3, 2, 1, 0.5][i] / 10.5, 12);
    // top-k 3: 4, 3, 2 over 9.
    const k3 = samplingDistribution(logits, { temperature: 1, topK: 3, topP: 1 });
    expect(k3.ids).toEqual([0, 1, 2]);
    for (const [i, p] of k3.probs.entries()) expect(p).toBeCloseTo([4, 3, 2][i] / 9, 12);
    // top-p 0.6 of (4, 3, 2, 1, 0.5)/10.5: 0.381, then 0.667 ≥ 0.6: two kept, 4/7 and 3/7.
    const p6 = samplingDistribution(logits, { temperature: 1, topK: 0, topP: 0.6 });
    expect(p6.ids).toEqual([0, 1]);
    expect(p6.probs[0]).toBeCloseTo(4 / 7, 12);
    // temperature 0.5 squares the odds: 16, 9, 4, 1, 0.25.
    const t5 = samplingDistribution(logits, { temperature: 0.5, topK: 0, topP: 1 });
    for (const [i, p] of t5.probs.entries()) expect(p).toBeCloseTo([16, 9, 4, 1, 0.25][i] / 30.25, 12);
  });

  it('draws follow the distribution: chi-square over 20,000 seeded draws below the 0.1% critical value', () => {
    const logits = [2.0, 1.5, 0.3, -0.4, -1.0, 0.9];
    const settings = { temperature: 0.8, topK: 5, topP: 0.95 };
    const d = samplingDistribution(logits, settings);
    // By hand: the 5 largest logits are ids 0, 1, 5, 2, 3; exp(l/0.8) over them, then top-p 0.95.
    const w = [2.0, 1.5, 0.9, 0.3, -0.4].map((l) => Math.exp(l / 0.8));
    const z = w.reduce((a, b) => a + b, 0);
    const p = w.map((x) => x / z);
    let keep = 0;
    for (let s = 0; keep < p.length && s < 0.95; keep++) s += p[keep];
    const want = p.slice(0, keep).map((x) => x / p.slice(0, keep).reduce((a, b) => a + b, 0));
    expect(d.ids).toEqual([0, 1, 5, 2, 3].slice(0, keep));
    for (const [i, x] of d.probs.entries()) expect(x).toBeCloseTo(want[i], 12);
    const n = 20_000;
    const counts = new Array(d.ids.length).fill(0);
    const random = mulberry32(7);
    for (let i = 0; i < n; i++) counts[d.ids.indexOf(drawToken(d, random()))]++;
    // Critical values of chi-square at p = 0.001: df 3 → 16.27, df 4 → 18.47.
    const critical = { 3: 16.27, 4: 18.47 }[d.ids.length - 1] ?? 0;
    expect(critical).toBeGreaterThan(0);
    expect(chiSquare(counts, want, n)).toBeLessThan(critical);
    // And a wrong distribution is told apart: the counts against uniform probabilities.
    expect(
      chiSquare(
        counts,
        want.map(() => 1 / want.length),
        n,
      ),
    ).toBeGreaterThan(critical);
  });

  it('names a bad setting', () => {
    expect(samplingProblem({ temperature: -1, topK: 0, topP: 1, seed: 0 })).toMatch(/temperature -1/);
    expect(samplingProblem({ temperature: 1, topK: 1.5, topP: 1, seed: 0 })).toMatch(/top-k 1.5/);
    expect(samplingProblem({ temperature: 1, topK: 0, topP: 0, seed: 0 })).toMatch(/top-p 0/);
    expect(samplingProblem({ temperature: 1, topK: 0, topP: 1, seed: 3 })).toBeNull();
  });
});
