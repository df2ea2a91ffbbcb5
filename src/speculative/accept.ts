import { InternalError } from '../errors.ts';

/**
 * The acceptance rule of greedy speculative decoding. The verify pass held the pending token and
 * the drafted tokens d0 … dk−1, and `predictions[i]` is the target's greedy token after row i
 * (k + 1 of them: predictions[0] follows the pending token, predictions[i] follows d(i−1)). d0 is
 * kept if it equals predictions[0], each later di if it equals predictions[i]; the first
 * disagreement ends the run. The target's own token after the kept prefix comes free with the same
 * pass, so every step emits at least one token, and the output is exactly what plain greedy
 * decode would have produced.
 */
export function acceptDraft(
  draft: readonly number[],
  predictions: readonly number[],
): { accepted: number; next: number } {
  if (predictions.length !== draft.length + 1) {
    throw new InternalError(
      `acceptDraft: ${predictions.length} predictions for a draft of ${draft.length} (need one more than the draft)`,
    );
  }
  let accepted = 0;
  while (accepted < draft.length && draft[accepted] === predictions[accepted]) accepted++;
  return { accepted, next: predictions[accepted] };
}

/** Acceptance statistics as vLLM reports them. */
export class AcceptanceStats {
  private drafts = 0;
  private drafted = 0;
  private accepted = 0;
  /** Per draft position: times it was proposed, and times it was accepted. */
  private readonly proposedAt: number[] = [];
  private readonly acceptedAt: number[] = [];

  /** One verify step: `proposed` tokens drafted, the first `accepted` of them kept. */
  record(proposed: number, accepted: number): void {
    this.drafts++;
    this.drafted += proposed;
    this.accepted += accepted;
    for (let i = 0; i < proposed; i++) {
      this.proposedAt[i] = (this.proposedAt[i] ?? 0) + 1;
      this.acceptedAt[i] = (this.acceptedAt[i] ?? 0) + (i < accepted ? 1 : 0);
    }
  }

  /** Accepted ÷ drafted tokens (0 when nothing was drafted). */
  get acceptanceRate(): number {
    return this.drafted === 0 ? 0 : this.accepted / this.drafted;
  }

  /** Tokens emitted per verify step: 1 (the target's own) + accepted ÷ drafts. */
  get meanAcceptanceLength(): number {
    return this.drafts === 0 ? 0 : 1 + this.accepted / this.drafts;
  }

  /** Share of proposals accepted at each draft position. */
  get perPosition(): number[] {
    return this.proposedAt.map((n, i) => (n === 0 ? 0 : this.acceptedAt[i] / n));
  }
}

/**
 * The acceptance rule of speculative sampling (Leviathan et al. 2023; Chen et al. 2023), which
 * keeps the target's distribution exactly. `target[i]` is the target's distribution after row i
 * (k + 1 of them, as `predictions` above, each a full probability vector over the vocabulary, the
 * sampler's temperature, top-k and top-p already applied), `draft[i]` the drafted token and
 * `proposal[i]` the drafter's distribution it was drawn from; a deterministic drafter (n-gram
 * lookup) proposes with certainty: `proposal` null. Token di is kept with probability
 * min(1, p(di) ÷ q(di)); the first rejection draws the emitted token from max(0, p − q)
 * renormalized, and a fully kept draft draws the bonus token from the last target row. `random`
 * gives one uniform number per decision, in order.
 */
export function acceptSampled(
  draft: readonly number[],
  target: readonly ArrayLike<number>[],
  proposal: readonly ArrayLike<number>[] | null,
  random: () => number,
): { accepted: number; next: number } {
  if (target.length !== draft.length + 1) {
    throw new InternalError(
      `acceptSampled: ${target.length} target rows for a draft of ${draft.length} (need one more than the draft)`,
    );
  }
  for (let i = 0; i < draft.length; i++) {
    const p = target[i];
    const d = draft[i];
    const q = proposal ? proposal[i][d] : 1;
    if (q > 0 && random() < Math.min(1, p[d] / q)) continue;
    // Rejected: the residual max(0, p − q), with q a point mass at d for a deterministic drafter.
    const residual = Array.from({ length: p.length }, (_, t) =>
      Math.max(0, p[t] - (proposal ? proposal[i][t] : t === d ? 1 : 0)),
    );
    return { accepted: i, next: drawFrom(residual, random()) };
  }
  return { accepted: draft.length, next: drawFrom(target[draft.length], random()) };
}

/** A token drawn from weights (not necessarily normalized) with the uniform number `u`. */
function drawFrom(weights: ArrayLike<number>, u: number): number {
  let total = 0;
  for (let t = 0; t < weights.length; t++) total += weights[t];
  let sum = 0;
  for (let t = 0; t < weights.length; t++) {
    sum += weights[t] / total;
    if (u < sum && weights[t] > 0) return t;
  }
  for (let t = weights.length - 1; t >= 0; t--) if (weights[t] > 0) return t;
  throw new InternalError('drawFrom: every weight is 0');
}
