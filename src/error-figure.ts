/**
 * Error figures of the validation records (src/model/verify.ts), which a result keeps: an error
 * that is not finite (the GPU's output held NaN or ±Inf) is recorded as null, because no figure
 * means what "max error" says then, and JSON cannot hold Infinity. Pure, for the engine, the
 * report and the page alike.
 */

/** An error as a validation record holds it: null when it is not finite (NaN or ±Inf outputs). */
export function finiteError(err: number): number | null {
  return Number.isFinite(err) ? err : null;
}

/** The largest of some checks' errors; null when any of them is null (not finite). */
export function maxError(errs: readonly (number | null)[]): number | null {
  let max = 0;
  for (const e of errs) {
    if (e === null) return null;
    max = Math.max(max, e);
  }
  return max;
}

/** An error for a person: its value, or what a null one means. */
export function formatError(err: number | null, digits = 2): string {
  return err === null ? 'not finite (the GPU produced NaN or Inf)' : err.toExponential(digits);
}
