import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../random.ts';
import { acceptSampled } from './accept.ts';

/** Chi-square of counts against probabilities (cells with p > 0). */
function chiSquare(counts: number[], p: number[], n: number): number {
  return p.reduce((s, pi, i) => (pi > 0 ? s + (counts[i] - n * pi) ** 2 / (n * pi) : s), 0);
}

// The target after the pending token, and after a first draft token: four tokens.
const P0 = [0.5, 0.3, 0.15, 0.05];
const P1 = [0.1, 0.2, 0.3, 0.4];
// A drafter that likes token 1 more than the target does.
const Q0 = [0.1, 0.7, 0.1, 0.1];
const N = 40_000;
// Chi-square critical value at p = 0.001 with 3 degrees of freedom.
const CRITICAL = 16.27;

describe('speculative sampling keeps the target distribution', () => {
  it('a model drafter: the first token emitted follows the target row, not the drafter', () => {
    const random = mulberry32(11);
    const counts = [0, 0, 0, 0];
    let accepted = 0;
    for (let i = 0; i < N; i++) {
      // The drafter draws its token from Q0, as it would.
      const u = random();
      const d = u < 0.1 ? 0 : u < 0.8 ? 1 : u < 0.9 ? 2 : 3;
      const r = acceptSampled([d], [P0, P1], [Q0], random);
      accepted += r.accepted;
      counts[r.accepted === 1 ? d : r.next]++;
    }
    expect(chiSquare(counts, P0, N)).toBeLessThan(CRITICAL);
    // And the test can tell: against the drafter's own distribution it fails.
    expect(chiSquare(counts, Q0, N)).toBeGreaterThan(CRITICAL);
    // Acceptance is Σ min(p, q) = 0.1 + 0.3 + 0.1 + 0.05 = 0.55 by hand.
    expect(accepted / N).toBeGreaterThan(0.54);
    expect(accepted / N).toBeLessThan(0.56);
  });

  it('a deterministic drafter (n-gram): kept with probability p(d), else drawn from p without d', () => {
    const random = mulberry32(5);
    const counts = [0, 0, 0, 0];
    let accepted = 0;
    for (let i = 0; i < N; i++) {
      const r = acceptSampled([1], [P0, P1], null, random);
      accepted += r.accepted;
      counts[r.accepted === 1 ? 1 : r.next]++;
    }
    expect(chiSquare(counts, P0, N)).toBeLessThan(CRITICAL);
    expect(accepted / N).toBeGreaterThan(0.29);
    expect(accepted / N).toBeLessThan(0.31);
  });

  it('a fully kept draft draws its bonus token from the last row; a draft with q = 0 for its token is rejected', () => {
    const always = () => 0;
    expect(
      acceptSampled(
        [0],
        [
          [1, 0],
          [0, 1],
        ],
        null,
        always,
      ),
    ).toEqual({ accepted: 1, next: 1 });
    // q(1) = 0: rejected for sure, and the residual max(0, p − q) = (0, 0.5) leaves token 1.
    expect(
      acceptSampled(
        [1],
        [
          [0.5, 0.5],
          [1, 0],
        ],
        [[1, 0]],
        always,
      ),
    ).toEqual({ accepted: 0, next: 1 });
  });
});
