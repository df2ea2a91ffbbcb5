import type { Peaks } from '../measure/peaks.ts';
import type { KernelPoint, Point } from '../results/schema.ts';
import type { WorkloadKind } from '../spec/workloads/index.ts';
import type { GenerateEvent } from './generate.ts';

/** Sent as the run goes, so a UI or CLI can show progress and draw records as they land. */
export interface Progress {
  /** The workload running ('prefill', 'decode', 'kernels', …), or null while the engine sets up or finishes. */
  workload: WorkloadKind | null;
  /** What is happening now, in words. */
  label: string;
  /** Points finished, over every workload, of `total` (which grows once the kernel suite counts its cases). */
  done: number;
  total: number;
  elapsedMs: number;
  /** Estimated time left, from the points measured so far; null before the first. */
  etaMs: number | null;
  /** A point that just landed: the very object the result will hold. */
  point?: Point;
  kernelPoint?: KernelPoint;
  /** The roofs, once measured, so a live roofline can draw them before the run ends. */
  peaks?: Peaks;
  /** A token of the text generated after the workloads (`spec.generate`), as it is read back. */
  generated?: GenerateEvent;
}

/**
 * Counts the run's progress units (each workload's points; the kernel suite and the load test add
 * theirs once they know them) and sends each update with the elapsed time and an ETA from the
 * units finished so far.
 */
export class ProgressReporter {
  private readonly t0 = performance.now();
  private done = 0;
  private total = 0;
  private firstUnitAt: number | undefined;
  /** The roofs, sent with every update once measured. */
  peaks: Peaks | undefined;

  constructor(private readonly onProgress?: (p: Progress) => void) {}

  /** Sets the units of the fitted workloads, before any runs. */
  expect(total: number): void {
    this.total = total;
  }

  send(workload: WorkloadKind | null, label: string, extra: Partial<Progress> = {}): void {
    const now = performance.now();
    const etaMs =
      this.done > 0 && this.firstUnitAt !== undefined
        ? ((now - this.firstUnitAt) / this.done) * Math.max(0, this.total - this.done)
        : null;
    this.onProgress?.({
      workload,
      label,
      done: this.done,
      total: this.total,
      elapsedMs: now - this.t0,
      etaMs,
      ...(this.peaks ? { peaks: this.peaks } : {}),
      ...extra,
    });
  }

  /**
   * A workload's own progress: `done` of its `total` units, counted from `before` (the units
   * finished before it started); its total replaces the one it was expected to have.
   */
  workload(before: number, expected: number): (done: number, total: number) => void {
    let own = expected;
    return (done, total) => {
      this.firstUnitAt ??= performance.now();
      this.total += total - own;
      own = total;
      this.done = before + done;
    };
  }

  get unitsDone(): number {
    return this.done;
  }
}
