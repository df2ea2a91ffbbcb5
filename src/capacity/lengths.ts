import { mulberry32 } from '../random.ts';

/**
 * Seeded sequence lengths for the capacity probe: a traffic mix of mean and long sequences, the
 * same two classes as the estimator's traffic profile. The same seed gives the same lengths, so the
 * calculator's prediction and the allocator's admission see one list.
 */
export interface LengthMix {
  /** Mean context tokens of a sequence of the mean class. */
  meanTokens: number;
  /** Share of long sequences. */
  longShare: number;
  /** A long sequence's mean is this many times `meanTokens`. */
  longFactor: number;
  /** No sequence is longer (the model's maxSeqLen). */
  maxTokens: number;
  seed: number;
}

/**
 * An endless stream of lengths: each sequence is long with probability `longShare`, and its
 * length is uniform on [½, 1½] of its class mean, rounded, clamped to [1, maxTokens].
 */
export function* sequenceLengths(mix: LengthMix): Generator<number, never> {
  const random = mulberry32(mix.seed);
  for (;;) {
    const long = random() < mix.longShare;
    const mean = long ? mix.meanTokens * mix.longFactor : mix.meanTokens;
    const length = Math.round(mean * (0.5 + random()));
    yield Math.min(mix.maxTokens, Math.max(1, length));
  }
}

/** The first `n` lengths of a mix. */
export function firstLengths(mix: LengthMix, n: number): number[] {
  const out: number[] = [];
  for (const len of sequenceLengths(mix)) {
    if (out.length === n) break;
    out.push(len);
  }
  return out;
}
