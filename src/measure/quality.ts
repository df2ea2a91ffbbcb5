/**
 * How far a format's next-token distributions are from f32's on the same inputs. Pure arithmetic
 * on logits, in float64, so the unit tests can check it against hand counts.
 *
 * Both sides hold `steps` distributions of `vocab` logits, in order: a slice's prompts one after
 * another, each prompt's prefill and then its decode steps, every one fed f32's greedy token. Up
 * to the first step where the argmaxes differ both models saw the same context, so that step is
 * also where the format's own greedy generation would first leave f32's.
 */
export interface LogitsError {
  /** ‖test − ref‖₂ / ‖ref‖₂ over all the logits. */
  relErr: number;
  /** Share of distributions whose argmax agrees. */
  top1Agreement: number;
  /** Mean over distributions of KL(softmax(ref) ‖ softmax(test)), nats. */
  klDiv: number;
  /** Index of the first distribution whose argmax differs; null if none does. */
  divergenceStep: number | null;
}

/** Index of the largest value; the first on a tie (as the GPU argmax kernel picks). */
export function argmax(x: ArrayLike<number>, from = 0, to = x.length): number {
  let best = from;
  for (let i = from + 1; i < to; i++) if (x[i] > x[best]) best = i;
  return best - from;
}

/** KL(softmax(p) ‖ softmax(q)) of two logit rows, in float64 with the max subtracted. */
export function klFromLogits(p: ArrayLike<number>, q: ArrayLike<number>): number {
  const n = p.length;
  let pMax = Number.NEGATIVE_INFINITY;
  let qMax = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    pMax = Math.max(pMax, p[i]);
    qMax = Math.max(qMax, q[i]);
  }
  let pSum = 0;
  let qSum = 0;
  for (let i = 0; i < n; i++) {
    pSum += Math.exp(p[i] - pMax);
    qSum += Math.exp(q[i] - qMax);
  }
  const logPZ = pMax + Math.log(pSum);
  const logQZ = qMax + Math.log(qSum);
  let kl = 0;
  for (let i = 0; i < n; i++) {
    const logP = p[i] - logPZ;
    const logQ = q[i] - logQZ;
    kl += Math.exp(logP) * (logP - logQ);
  }
  // Rounding can leave a tiny negative for identical rows.
  return Math.max(0, kl);
}

export function logitsError(test: Float32Array, ref: Float32Array, vocab: number): LogitsError {
  if (test.length !== ref.length || ref.length === 0 || ref.length % vocab !== 0)
    throw new RangeError(`logits of ${test.length} and ${ref.length} values do not make rows of ${vocab}`);
  const steps = ref.length / vocab;
  let diff2 = 0;
  let ref2 = 0;
  for (let i = 0; i < ref.length; i++) {
    diff2 += (test[i] - ref[i]) ** 2;
    ref2 += ref[i] ** 2;
  }
  let agree = 0;
  let kl = 0;
  let divergenceStep: number | null = null;
  for (let s = 0; s < steps; s++) {
    const row = (x: Float32Array) => x.subarray(s * vocab, (s + 1) * vocab);
    const same = argmax(row(test)) === argmax(row(ref));
    if (same) agree++;
    else divergenceStep ??= s;
    kl += klFromLogits(row(ref), row(test));
  }
  return {
    relErr: ref2 > 0 ? Math.sqrt(diff2 / ref2) : Math.sqrt(diff2),
    top1Agreement: agree / steps,
    klDiv: kl / steps,
    divergenceStep,
  };
}
