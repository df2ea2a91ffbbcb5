import type { WeightFormat } from '../weight-format.ts';
import type { Agreement } from './schema.ts';

/** The format an agreement is judged by: the one this engine ran, "mixed" for a file of several (Q4_K_M). */
export type AgreementFormat = WeightFormat | 'mixed';

/**
 * How close llama.cpp must come to this engine, per weight format, on the next-token
 * log-probabilities of one prompt. The top-1 share counts flips only where they are not near-ties
 * (onlyNearTies): on seeded random weights the top two tokens are often 1e-2 apart.
 * - f32: both compute in f32 from the same weights. The agreement context keeps llama.cpp's KV
 *   cache in f32 and runs without flash attention (whose CPU path multiplies Q·K in f16), so what
 *   is left is the order of f32 sums: 4.6e-6 on ci-tiny; 1.8e-5 and 2.9e-5 (wllama 7.0e-6, 6.6e-6)
 *   on the Qwen3-shaped F32 files below. 5e-3 is the bound, kept as the pass line;
 *   llama.cpp's defaults (f16 KV, flash attention) measured 4.5e-3 to 7.2e-3 here.
 * - f16: llama.cpp's CPU matmul rounds the activations to f16 for an F16 weight, this engine keeps
 *   them in f32: further apart than f32, nearer than the 8-bit formats (not measured here).
 * - The GGUF block types: llama.cpp's CPU path (natively and in wllama's wasm) quantizes the
 *   activations to 8 bits before each dot product, Q8_0/Q8_1 blocks of 32 for the legacy types and
 *   Q8_K blocks of 256 for the K-quants, where this engine multiplies by the exact dequantized
 *   weights in f32. Measured (docs/peers.md, "The agreement's bounds") on a Qwen3-shaped 2-layer
 *   model (d 256) with GPT-2's and Qwen2's vocabularies, 3 weight seeds, 32 positions each, max
 *   |Δ log p| native llama.cpp / wllama's top 1024:
 *   - q4_0 9.4e-2–1.20e-1 / 6.9e-2–8.6e-2, q4_1 1.03e-1–1.08e-1 / 8.9e-2–1.00e-1, q5_0
 *     9.4e-2–1.03e-1 / 8.5e-2, q5_1 1.11e-1–1.13e-1 / 8.5e-2–8.6e-2, q8_0 9.5e-2–1.22e-1 /
 *     7.7e-2–8.6e-2: bound 0.2 (1.6× the largest). int8 and int4 are Q8_0 and Q4_0 files
 *     (smollm2-135m measured 1.16e-1 and 1.35e-1), so they take it too;
 *   - q2_k 1.43e-1–1.63e-1 / 1.26e-1–1.43e-1, q3_k 1.33e-1–1.59e-1 / 1.27e-1–1.29e-1, q4_k
 *     1.46e-1–1.63e-1 / 1.12e-1–1.25e-1, q5_k 1.41e-1–1.52e-1 / 1.06e-1–1.30e-1, q6_k
 *     1.30e-1–1.71e-1 / 1.03e-1–1.25e-1: bound 0.25 (1.5× the largest);
 *   - mixed (a file of several types; a GGUF run is judged by the format it ran, weightFormatOf,
 *     and Q4_K_M is Q4_K with Q6_K): Q4_K_M 1.32e-1–1.52e-1 / 1.13e-1–1.37e-1: the K-quants' 0.25,
 *     the loosest of any type a mix can hold.
 *   Top-1 was 87.5–100%; every flip was a near-tie, this engine's gap 1.3e-4 to 6.1e-2.
 *   The difference grows with the vocabulary (a max over more tokens): Qwen2's 151,936 gave the
 *   largest. It depends on the model too: these are seeded random weights, whose logits are flat.
 */
const LEGACY_BLOCKS = { top1: 0.95, maxAbsLogprobDiff: 0.2 } as const;
const K_QUANTS = { top1: 0.95, maxAbsLogprobDiff: 0.25 } as const;

export const AGREEMENT_TOLERANCES: Record<AgreementFormat, Agreement['tolerance']> = {
  f32: { top1: 1, maxAbsLogprobDiff: 5e-3 },
  f16: { top1: 0.95, maxAbsLogprobDiff: 5e-2 },
  int8: LEGACY_BLOCKS,
  int4: LEGACY_BLOCKS,
  q4_0: LEGACY_BLOCKS,
  q4_1: LEGACY_BLOCKS,
  q5_0: LEGACY_BLOCKS,
  q5_1: LEGACY_BLOCKS,
  q8_0: LEGACY_BLOCKS,
  q2_k: K_QUANTS,
  q3_k: K_QUANTS,
  q4_k: K_QUANTS,
  q5_k: K_QUANTS,
  q6_k: K_QUANTS,
  mixed: K_QUANTS,
};

/** log-softmax of a row of logits, in float64. */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - lse;
  return out;
}

/**
 * log-softmax of a row of logits over every token but `left` (whose entries become −∞): the
 * distribution renormalized over the rest, as llama.cpp gives it when those tokens are banned.
 */
export function logSoftmaxWithout(logits: ArrayLike<number>, left: readonly number[]): Float64Array {
  if (left.length === 0) return logSoftmax(logits);
  const row = Float64Array.from(logits);
  for (const id of left) row[id] = Number.NEGATIVE_INFINITY;
  return logSoftmax(row);
}

/** The row's argmax (the lower id on a tie) and the largest value of the other entries, in one pass. */
function topTwo(row: ArrayLike<number>): { best: number; second: number } {
  let best = 0;
  let second = Number.NEGATIVE_INFINITY;
  for (let i = 1; i < row.length; i++) {
    if (row[i] > row[best]) {
      second = row[best];
      best = i;
    } else if (row[i] > second) second = row[i];
  }
  return { best, second };
}

/**
 * Compares two engines' next-token log-probabilities, one row per prompt position (each row a
 * whole vocabulary). `ours` and `theirs` must be log-probabilities already (see logSoftmax); a
 * probability the peer rounded to 0 counts as a difference of +∞, which fails the bound.
 */
export function agreement(
  ours: readonly ArrayLike<number>[],
  theirs: readonly ArrayLike<number>[],
  tolerance: Agreement['tolerance'],
): Agreement {
  if (ours.length !== theirs.length || ours.length === 0)
    throw new Error(`agreement: ${ours.length} positions against ${theirs.length}`);
  // A whole row is every token listed, in id order (so a tie resolves to the lower id, as argmax).
  const listed = theirs.map((b, p) => {
    if (b.length !== ours[p].length)
      throw new Error(`agreement: position ${p} has ${ours[p].length} and ${b.length} entries`);
    return Array.from(b, (logprob, id) => ({ id, logprob }));
  });
  return agreementTopK(ours, listed, tolerance);
}

/**
 * The probability, in this engine, from which a token counts as one sampling could pick
 * (maxAbsLogprobDiffLikely): on a trained model the largest |Δ log p| sits in the far tail (tokens
 * at log p −20, where llama.cpp's 8-bit activations move the logit by a few tenths), which no
 * draw at any usual temperature reaches.
 */
export const LIKELY = 1e-3;

/** One of the peer's most likely next tokens at a position, with its log-probability. */
export interface TopLogprob {
  id: number;
  logprob: number;
}

/**
 * Whether every top-1 that differs is a near-tie: this engine puts its own top-1 and the peer's
 * within the log-probability bound of each other. Seeded random weights give flat distributions
 * (over 50,000 tokens, the top two are often 1e-2 apart in log p), so a peer within the bound can
 * flip them: that is not a disagreement about the model, and such flips do not fail the check
 * (the report lists them with their gaps). A flip between tokens further apart than the bound
 * still counts against the top-1 share. Any flip is at most twice the largest |Δ log p| apart, so
 * this holds the peer to the same bound as the log-probabilities do.
 */
export function onlyNearTies(a: Pick<Agreement, 'top1Gaps' | 'tolerance'>): boolean {
  return a.top1Gaps.every((g) => g <= a.tolerance.maxAbsLogprobDiff);
}

/**
 * As `agreement`, for a peer that gives only its K most likely tokens per position (wllama's top
 * log-probs); `ours` are whole-vocabulary log-probability rows. The peer's top-1 is its likeliest
 * listed token; |Δ log p| is taken over the listed tokens; KL(this engine ‖ peer) is taken over the
 * listed tokens plus one bucket holding the rest of each distribution, so it never exceeds the
 * whole-vocabulary KL. With K at the vocabulary size every figure equals `agreement`'s.
 */
export function agreementTopK(
  ours: readonly ArrayLike<number>[],
  theirs: readonly (readonly TopLogprob[])[],
  tolerance: Agreement['tolerance'],
): Agreement {
  if (ours.length !== theirs.length || ours.length === 0)
    throw new Error(`agreement: ${ours.length} positions against ${theirs.length}`);
  let top1 = 0;
  let nearTies = 0;
  let top1Decided = 0;
  let maxDiff = 0;
  let maxLikely = 0;
  let klSum = 0;
  let k = Number.POSITIVE_INFINITY;
  const top1Mismatches: number[] = [];
  const top1Gaps: number[] = [];
  const logprobMismatches: number[] = [];
  for (let p = 0; p < ours.length; p++) {
    const a = ours[p];
    const listed = theirs[p];
    if (listed.length === 0) throw new Error(`agreement: the peer listed no token at position ${p}`);
    k = Math.min(k, listed.length);
    const { best: ourTop, second } = topTwo(a);
    // This engine's own margin between its top two: within the log-p bound, a peer inside the
    // bound could swap them, so the position is a near-tie whether or not the peer did.
    const nearTie = a[ourTop] - second <= tolerance.maxAbsLogprobDiff;
    if (nearTie) nearTies++;
    let theirTop = listed[0];
    for (const t of listed) if (t.logprob > theirTop.logprob) theirTop = t;
    if (ourTop === theirTop.id) {
      top1++;
      if (!nearTie) top1Decided++;
    } else {
      top1Mismatches.push(p);
      top1Gaps.push(Math.max(0, a[ourTop] - a[theirTop.id]));
    }
    let rowMax = 0;
    let rowLikely = 0;
    let kl = 0;
    let oursListed = 0;
    let theirsListed = 0;
    for (const t of listed) {
      if (!(t.id >= 0 && t.id < a.length)) throw new Error(`agreement: the peer listed token ${t.id}`);
      const diff = Math.abs(a[t.id] - t.logprob);
      const d = Number.isNaN(diff) ? Number.POSITIVE_INFINITY : diff;
      rowMax = Math.max(rowMax, d);
      const pa = Math.exp(a[t.id]);
      if (pa >= LIKELY) rowLikely = Math.max(rowLikely, d);
      kl += pa * (a[t.id] - t.logprob);
      oursListed += pa;
      theirsListed += Math.exp(t.logprob);
    }
    // The rest of each distribution, as one bucket (zero when the peer listed every token).
    const restOurs = Math.max(0, 1 - oursListed);
    const restTheirs = Math.max(0, 1 - theirsListed);
    if (restOurs > 1e-12) kl += restOurs * (Math.log(restOurs) - Math.log(Math.max(restTheirs, 1e-300)));
    if (rowMax > tolerance.maxAbsLogprobDiff) logprobMismatches.push(p);
    maxDiff = Math.max(maxDiff, rowMax);
    maxLikely = Math.max(maxLikely, rowLikely);
    klSum += kl;
  }
  const share = top1 / ours.length;
  const kl = klSum / ours.length;
  return {
    tokens: ours.length,
    top1: share,
    nearTies,
    ...(nearTies < ours.length ? { top1OutsideNearTies: top1Decided / (ours.length - nearTies) } : {}),
    maxAbsLogprobDiff: Number.isFinite(maxDiff) ? maxDiff : Number.MAX_VALUE,
    maxAbsLogprobDiffLikely: Number.isFinite(maxLikely) ? maxLikely : Number.MAX_VALUE,
    kl: Number.isFinite(kl) ? Math.max(0, kl) : Number.MAX_VALUE,
    tolerance,
    passed:
      maxDiff <= tolerance.maxAbsLogprobDiff &&
      (share >= tolerance.top1 || onlyNearTies({ top1Gaps, tolerance })),
    top1Mismatches: top1Mismatches.slice(0, 4096),
    top1Gaps: top1Gaps.slice(0, 4096),
    logprobMismatches: logprobMismatches.slice(0, 4096),
    ...(k < ours[0].length ? { peerTopK: k } : {}),
  };
}
