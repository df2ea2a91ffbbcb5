import { QUANT_FORMATS, type QuantFormat, type WeightFormat } from '../weight-format.ts';
import type { Agreement } from './schema.ts';

/**
 * How close llama.cpp must come to this engine, per weight format, on the next-token
 * log-probabilities of one prompt.
 * - f32: both compute in f32 from the same weights. The agreement context keeps llama.cpp's KV
 *   cache in f32 and runs without flash attention (whose CPU path multiplies Q·K in f16), so what
 *   is left is the order of f32 sums: 4.6e-6 on ci-tiny. 5e-3 is the bound, kept as the
 *   pass line; llama.cpp's defaults (f16 KV, flash attention) measured 4.5e-3 to 7.2e-3 here.
 * - f16: llama.cpp's CPU matmul rounds the activations to f16 for an F16 weight, this engine keeps
 *   them in f32: further apart than f32, nearer than the 8-bit formats.
 * - int8 (Q8_0), int4 (Q4_0): llama.cpp's CPU path quantizes the activations to 8 bits (Q8_0
 *   blocks) before the dot product, where this engine dequantizes the weights exactly; measured on a
 *   2-layer model that alone put it 6.4e-2 (Q8_0) and 5.6e-2 (Q4_0) from the exact result.
 */
export const AGREEMENT_TOLERANCES: Record<WeightFormat, Agreement['tolerance']> = {
  f32: { top1: 1, maxAbsLogprobDiff: 5e-3 },
  f16: { top1: 0.95, maxAbsLogprobDiff: 5e-2 },
  int8: { top1: 0.95, maxAbsLogprobDiff: 0.15 },
  int4: { top1: 0.95, maxAbsLogprobDiff: 0.15 },
  ...(Object.fromEntries(QUANT_FORMATS.map((f) => [f, { top1: 0.95, maxAbsLogprobDiff: 0.15 }])) as Record<
    QuantFormat,
    Agreement['tolerance']
  >),
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

function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
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

/** One of the peer's most likely next tokens at a position, with its log-probability. */
export interface TopLogprob {
  id: number;
  logprob: number;
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
  let maxDiff = 0;
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
    const ourTop = argmax(a);
    let theirTop = listed[0];
    for (const t of listed) if (t.logprob > theirTop.logprob) theirTop = t;
    if (ourTop === theirTop.id) top1++;
    else {
      top1Mismatches.push(p);
      top1Gaps.push(Math.max(0, a[ourTop] - a[theirTop.id]));
    }
    let rowMax = 0;
    let kl = 0;
    let oursListed = 0;
    let theirsListed = 0;
    for (const t of listed) {
      if (!(t.id >= 0 && t.id < a.length)) throw new Error(`agreement: the peer listed token ${t.id}`);
      const d = Math.abs(a[t.id] - t.logprob);
      rowMax = Math.max(rowMax, Number.isNaN(d) ? Number.POSITIVE_INFINITY : d);
      const pa = Math.exp(a[t.id]);
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
    klSum += kl;
  }
  const share = top1 / ours.length;
  const kl = klSum / ours.length;
  return {
    tokens: ours.length,
    top1: share,
    maxAbsLogprobDiff: Number.isFinite(maxDiff) ? maxDiff : Number.MAX_VALUE,
    kl: Number.isFinite(kl) ? Math.max(0, kl) : Number.MAX_VALUE,
    tolerance,
    passed: share >= tolerance.top1 && maxDiff <= tolerance.maxAbsLogprobDiff,
    top1Mismatches: top1Mismatches.slice(0, 4096),
    top1Gaps: top1Gaps.slice(0, 4096),
    logprobMismatches: logprobMismatches.slice(0, 4096),
    ...(k < ours[0].length ? { peerTopK: k } : {}),
  };
}
