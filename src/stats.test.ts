import { describe, expect, it } from 'vitest';
import { percentile, percentiles, stddev, summarize } from './stats.ts';

describe('stats', () => {
  it('interpolates percentiles like numpy', () => {
    // numpy.percentile([1, 2, 3, 4], 95) = 3.85
    expect(percentile([4, 1, 3, 2], 95)).toBeCloseTo(3.85, 12);
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5);
    expect(percentile([7], 99)).toBe(7);
  });

  it('uses the sample standard deviation', () => {
    // [2, 4, 4, 4, 5, 5, 7, 9]: population sd 2, sample sd sqrt(32/7)
    expect(stddev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(Math.sqrt(32 / 7), 12);
  });

  it('gives a Student-t 95% interval, flags noise and measures drift', () => {
    const s = summarize([10, 12, 14]);
    // mean 12, sd 2, t(2) = 4.303: half-width 4.303 · 2 / sqrt 3
    const half = (4.303 * 2) / Math.sqrt(3);
    expect(s.ci95[0]).toBeCloseTo(12 - half, 9);
    expect(s.ci95[1]).toBeCloseTo(12 + half, 9);
    expect(s.cv).toBeCloseTo(2 / 12, 12);
    expect(s.highVariance).toBe(true);
    expect(s.driftPct).toBeCloseTo(40, 12);
    expect(summarize([10, 10.1, 10]).highVariance).toBe(false);
  });

  it('handles a single sample and empty latency lists', () => {
    expect(summarize([5])).toMatchObject({ median: 5, stddev: 0, ci95: [5, 5], cv: 0 });
    expect(percentiles([])).toEqual({ p50: 0, p95: 0, p99: 0 });
  });
});
