import type { Progress } from '../src/runtime/api.ts';

const fmtS = (ms: number) => `${(ms / 1000).toFixed(0)}s`;

/**
 * One progress line: step, workload, what runs, elapsed and the estimate to the end. A workload
 * may count a point in parts (the task table, slice by slice), so `done` can be fractional; the
 * line counts whole points.
 */
export function progressText(p: Progress): string {
  const eta = p.etaMs === null ? '' : `  ETA ${fmtS(p.etaMs)}`;
  return `[${Math.floor(p.done)}/${p.total}] ${p.workload ? `${p.workload}: ` : ''}${p.label}  elapsed ${fmtS(p.elapsedMs)}${eta}`;
}

/**
 * For a terminal every update redraws one line; piped output (CI logs, a file) gets one line per
 * step instead: an update that changes only the clocks of the step already printed prints nothing.
 */
export function pipedProgress(): (p: Progress) => string | null {
  let last = '';
  return (p) => {
    const step = `${Math.floor(p.done)}/${p.total} ${p.workload ?? ''} ${p.label}`;
    if (step === last) return null;
    last = step;
    return progressText(p);
  };
}
