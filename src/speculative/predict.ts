/** What the predictions read off a verify-K curve point (a VerifyPoint has these and more). */
export interface CurvePoint {
  k: number;
  depth: number;
  verifyMs: number;
  decodeMs: number;
}

/**
 * What speculation should gain, from measured parts. One step drafts K tokens (draftMs), verifies
 * K + 1 in one pass (verifyMs, read off the verify-K curve) and emits τ tokens on average (the
 * mean acceptance length, 1 + accepted ÷ steps). Plain decode emits one token per decodeMs. So
 *
 *   predicted speedup = τ · decodeMs ÷ (draftMs + verifyMs(K + 1))
 *
 * It leaves out the loop's own host time (acceptance, rollback bookkeeping), which is why the
 * measured speedup may fall a little short of it.
 */
export const SPEEDUP_FORMULA =
  'predicted speedup = τ · decodeMs ÷ (draftMs + verifyMs(K + 1)), with τ the measured mean acceptance length, draftMs the measured draft time per step, and decodeMs and verifyMs(K + 1) read off the verify-K curve at the nearest depth (linear between measured k)';

export function predictedSpeedup(p: {
  meanAcceptanceLength: number;
  draftMs: number;
  verifyMs: number;
  decodeMs: number;
}): number {
  const stepMs = p.draftMs + p.verifyMs;
  return stepMs > 0 ? (p.meanAcceptanceLength * p.decodeMs) / stepMs : 0;
}

/**
 * Expected tokens per step when each drafted token is accepted independently with probability α
 * (the oracle drafter's model): 1 + α + α² + … + α^K = (1 − α^(K+1)) ÷ (1 − α).
 */
export function expectedAcceptanceLength(alpha: number, k: number): number {
  if (alpha >= 1) return k + 1;
  return (1 - alpha ** (k + 1)) / (1 - alpha);
}

/**
 * Verify and decode time at `rows` tokens per pass, from the curve at the depth nearest `depth`:
 * the measured point when there is one, else linear between the neighbouring measured k (clamped
 * to the ends). Null when the curve is empty.
 */
export function curveAt(
  curve: readonly CurvePoint[],
  rows: number,
  depth: number,
): { verifyMs: number; decodeMs: number; depth: number } | null {
  if (curve.length === 0) return null;
  const nearest = curve.reduce((a, b) =>
    Math.abs(b.depth - depth) < Math.abs(a.depth - depth) ? b : a,
  ).depth;
  const points = curve.filter((p) => p.depth === nearest).sort((a, b) => a.k - b.k);
  const decodeMs = points.reduce((s, p) => s + p.decodeMs, 0) / points.length;
  const exact = points.find((p) => p.k === rows);
  if (exact) return { verifyMs: exact.verifyMs, decodeMs, depth: nearest };
  const below = points.filter((p) => p.k < rows).at(-1);
  const above = points.find((p) => p.k > rows);
  if (!below) return { verifyMs: points[0].verifyMs, decodeMs, depth: nearest };
  if (!above) return { verifyMs: below.verifyMs, decodeMs, depth: nearest };
  const t = (rows - below.k) / (above.k - below.k);
  return { verifyMs: below.verifyMs + t * (above.verifyMs - below.verifyMs), decodeMs, depth: nearest };
}

/**
 * The knee: the largest k whose verify costs at most `ratio` decode steps, at every depth where
 * the points up to it all stay under (a later dip back under does not count). Null if even the
 * smallest k costs more.
 */
export function kneeOf(
  curve: readonly (CurvePoint & { ratio: number })[],
  ratio: number,
): { knee: number | null; byDepth: { depth: number; k: number | null }[] } {
  const depths = [...new Set(curve.map((p) => p.depth))].sort((a, b) => a - b);
  const byDepth = depths.map((depth) => {
    let k: number | null = null;
    for (const p of curve.filter((q) => q.depth === depth).sort((a, b) => a.k - b.k)) {
      if (p.ratio > ratio) break;
      k = p.k;
    }
    return { depth, k };
  });
  const ks = byDepth.map((d) => d.k);
  const knee = ks.length === 0 || ks.some((k) => k === null) ? null : Math.min(...(ks as number[]));
  return { knee, byDepth };
}
