/**
 * The acceptance rule of greedy speculative decoding. The target has already predicted `expected`,
 * its own next token after the context. The drafted tokens d0 … dk−1 were then verified in one
 * pass, and `predictions[i]` is the target's greedy token after d0 … di. d0 is kept if it equals
 * `expected`, each later di if it equals `predictions[i − 1]`; the first disagreement ends the run.
 * The target's own token after the kept prefix comes free with the same pass, so every step emits
 * at least one token, and the output is exactly what plain greedy decode would have produced.
 */
export function acceptDraft(
  expected: number,
  draft: readonly number[],
  predictions: readonly number[],
): { accepted: number; next: number } {
  let accepted = 0;
  while (
    accepted < draft.length &&
    draft[accepted] === (accepted === 0 ? expected : predictions[accepted - 1])
  ) {
    accepted++;
  }
  const next = accepted === 0 ? expected : predictions[accepted - 1];
  return { accepted, next };
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
