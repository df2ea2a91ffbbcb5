import { type Span, spanValid } from '../gpu/profiler.ts';
import type { Timebase } from '../spec/fields.ts';
import { percentile } from '../stats.ts';
import type { PassCost } from './cost.ts';

/**
 * Collects one point's samples in both clocks. A GPU sample is the sum of one repetition's pass
 * spans; a zero or negative span is not a sample: it marks the point's GPU time unreliable, and the
 * assembler places the point by wall time instead.
 */
export class PointSamples {
  readonly wallMs: number[] = [];
  private readonly gpu: number[] = [];
  private issue: string | undefined;
  private sawSpans = false;

  constructor(private readonly timestamps: boolean) {}

  /** One repetition: its wall time, and the GPU spans it covers (`perSample` passes averaged, e.g. decode steps). */
  add(wallMs: number, spans: readonly Span[], perSample = 1): void {
    this.wallMs.push(wallMs);
    if (spans.length === 0) return;
    this.sawSpans = true;
    const bad = spans.find((s) => !spanValid(s));
    if (bad) {
      this.issue ??= `a GPU span of ${bad.ns} ns (pass "${bad.label}"): timestamps here cannot be trusted`;
      return;
    }
    this.gpu.push(spans.reduce((a, s) => a + s.ms, 0) / perSample);
  }

  /** The samples for the record: GPU samples only when every repetition gave valid spans. */
  result(): { wallMs: number[]; gpuMs: number[] | null; gpuIssue?: string } {
    if (!this.timestamps || !this.sawSpans) return { wallMs: this.wallMs, gpuMs: null };
    if (this.issue || this.gpu.length !== this.wallMs.length) {
      return {
        wallMs: this.wallMs,
        gpuMs: null,
        gpuIssue: this.issue ?? 'some repetitions had no GPU spans',
      };
    }
    return { wallMs: this.wallMs, gpuMs: this.gpu };
  }
}

/**
 * Per-role GPU time from profiled runs, each a list of passes (one pass per kernel call, labelled
 * by role). A run's role time is summed over its passes and divided by `stepsPerRun` (a profiled
 * generation of several decode steps gives the mean step, as the point's cost does); the median
 * over runs is reported. `calls` is what the engine recorded, not what the cost model assumes.
 */
export function kernelBreakdown(
  runs: readonly Span[][],
  stepsPerRun: number,
  recorded: Record<string, number>,
  cost: PassCost,
): KernelTimeRecord[] {
  if (runs.length === 0 || runs.every((r) => r.length === 0)) return [];
  return cost.kernels.map((k) => ({
    role: k.role,
    medianMs: percentile(
      runs.map(
        (spans) => spans.filter((s) => s.label === k.role).reduce((a, s) => a + s.ms, 0) / stepsPerRun,
      ),
      50,
    ),
    calls: recorded[k.role] ?? 0,
  }));
}

/** Samples of one measured quantity in both clocks, one per repetition. */
export interface ClockSamples {
  /** Wall clock in the engine worker (`performance.now()`): what a user waits for. */
  wallMs: number[];
  /** GPU timestamps (`timestamp-query`); null when the adapter has none. */
  gpuMs: number[] | null;
  /** Why the GPU samples cannot be used although they exist (a zero or negative span), if so. */
  gpuIssue?: string;
}

/** Per-role GPU time of a pass from profiled runs (one pass per kernel), with the calls recorded. */
export interface KernelTimeRecord {
  role: string;
  /** Median over profiled runs of the role's GPU time per pass, ms. */
  medianMs: number;
  /** Dispatches of this role the engine actually recorded in one pass. */
  calls: number;
}

/** What the run knows about its GPU clock, decided once before any workload runs. */
export interface ClockInfo {
  /** The adapter has `timestamp-query`. */
  timestamps: boolean;
  /** The tick spans are quantized to, or null when they are not. */
  quantumNs: number | null;
}

/**
 * Which clock places a point: GPU time where the adapter has timestamps, they are not quantized and
 * every span of the point was positive; wall time otherwise, with the reason. Returns the samples
 * of that clock.
 */
export function chooseTimebase(
  s: ClockSamples,
  clock: ClockInfo,
): { timebase: Timebase; samplesMs: number[]; note?: string } {
  if (s.gpuMs && clock.quantumNs === null) return { timebase: 'gpu', samplesMs: s.gpuMs };
  const note =
    s.gpuIssue ??
    (s.gpuMs && clock.quantumNs !== null
      ? `GPU timestamps are quantized to ${clock.quantumNs / 1000} µs`
      : undefined);
  return { timebase: 'wall', samplesMs: s.wallMs, ...(note ? { note } : {}) };
}
