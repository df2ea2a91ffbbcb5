import { InternalError } from './errors.ts';
/**
 * Statistics for repeated timings. Percentiles use linear interpolation between order statistics
 * (numpy's default), the confidence interval is Student's t on the mean, and the coefficient of
 * variation flags a point whose repeats disagree too much to trust its median.
 */

/** A point whose stddev exceeds this fraction of its mean is flagged as noisy. */
export const HIGH_CV = 0.1;

/** Two-sided 95% Student t quantiles for 1…30 degrees of freedom; above 30 the normal 1.96 is close enough. */
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
] as const;

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new InternalError('percentile of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

export function mean(samples: readonly number[]): number {
  return samples.reduce((a, b) => a + b, 0) / samples.length;
}

/** Sample standard deviation (n − 1); 0 for a single sample. */
export function stddev(samples: readonly number[]): number {
  if (samples.length < 2) return 0;
  const m = mean(samples);
  return Math.sqrt(samples.reduce((a, b) => a + (b - m) ** 2, 0) / (samples.length - 1));
}

export interface Summary {
  n: number;
  mean: number;
  median: number;
  p95: number;
  p99: number;
  stddev: number;
  /** 95% confidence interval of the mean. */
  ci95: [number, number];
  cv: number;
  highVariance: boolean;
  /** (last − first) / first, percent: laptops that throttle drift upward. */
  driftPct: number;
}

export function summarize(samples: readonly number[]): Summary {
  const n = samples.length;
  const m = mean(samples);
  const sd = stddev(samples);
  const t = n < 2 ? 0 : n - 1 <= T95.length ? T95[n - 2] : 1.96;
  const half = n < 2 ? 0 : (t * sd) / Math.sqrt(n);
  const cv = m > 0 ? sd / m : 0;
  return {
    n,
    mean: m,
    median: percentile(samples, 50),
    p95: percentile(samples, 95),
    p99: percentile(samples, 99),
    stddev: sd,
    ci95: [m - half, m + half],
    cv,
    highVariance: cv > HIGH_CV,
    driftPct: samples[0] > 0 ? ((samples[n - 1] - samples[0]) / samples[0]) * 100 : 0,
  };
}

export function percentiles(samples: readonly number[]): { p50: number; p95: number; p99: number } {
  if (samples.length === 0) return { p50: 0, p95: 0, p99: 0 };
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), p99: percentile(samples, 99) };
}
