/**
 * Task quality by slice, as the seed's §05 judges a format: a share of cases right with its 95%
 * interval, its change against f32 in points ("degraded" past 5), and beside it the KL-divergence
 * statistics `llama-perplexity --kl-divergence` prints against the f32 logits. Pure arithmetic, so
 * the unit tests check it against hand counts.
 */

/** The 95% Wilson score interval of k successes in n trials (as train/eval.py computes it). */
export function wilson(k: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  // Exact ends where the count is at an end (rounding would leave 1e-17 above a score of 0).
  return [k === 0 ? 0 : Math.max(0, centre - half), k === n ? 1 : Math.min(1, centre + half)];
}

/** The change that marks a slice degraded: more than this many points below f32 (the seed's line). */
export const DEGRADED_POINTS = 5;

/** "degraded" when the score fell more than 5 points below f32's, "acceptable" otherwise. */
export function verdict(deltaPoints: number): 'degraded' | 'acceptable' {
  return deltaPoints < -DEGRADED_POINTS ? 'degraded' : 'acceptable';
}

/** The q-quantile of ascending values, interpolated linearly between ranks (numpy's default). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const at = q * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** What llama-perplexity --kl-divergence prints, over the positions compared. */
export interface KldStats {
  positions: number;
  mean: number;
  median: number;
  p99: number;
  max: number;
  /** Share of positions whose argmax is f32's ("Same top p"). */
  sameTop: number;
}

/** The statistics of per-position KL(f32 ‖ format) values and how many positions kept f32's top token. */
export function kldStats(values: readonly number[], sameTop: number): KldStats {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  return {
    positions: n,
    mean: n ? sorted.reduce((s, v) => s + v, 0) / n : 0,
    median: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: n ? sorted[n - 1] : 0,
    sameTop: n ? sameTop / n : 0,
  };
}

/**
 * Whether a JSON completion is valid: the prompt's object text (after `prefix`) and the completion
 * up to its first newline parse as one JSON object.
 */
export function jsonCompletionValid(prompt: string, completion: string, prefix = 'JSON: '): boolean {
  const start = prompt.startsWith(prefix) ? prompt.slice(prefix.length) : prompt;
  try {
    const v: unknown = JSON.parse(start + completion.split('\n')[0]);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** log-softmax of a logit row at `target`, in float64 with the max subtracted. */
export function logProb(row: ArrayLike<number>, target: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i] - max);
  return row[target] - max - Math.log(sum);
}
