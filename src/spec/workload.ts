import { z } from 'zod';
import { PAGE_SIZES } from '../kv/cache.ts';
import type { ModelConfig } from '../model/config.ts';

/**
 * A workload's descriptor: everything about it that is data, not engine. Its settings (the spec
 * section it reads), how it counts progress and names itself, how it fits a model and what it asks
 * of the engine, and the result section it writes with that section's report. One file per workload
 * in spec/workloads/, one line in its registry (spec/workloads/index.ts). Nothing here imports engine
 * code, so the CLI validates a spec in Node; the runner and collector live in src/workloads/, the
 * page view in src/ui/views/, each in a table whose type names every kind.
 */
export interface WorkloadDescriptor<W extends { kind: string }, S extends z.ZodRawShape = z.ZodRawShape> {
  readonly kind: W['kind'];
  /** Its settings: the spec section it reads, validated with the rest of the spec. */
  readonly settings: z.ZodType<W>;
  /** What its progress counts, in words (points, requests, kernels). */
  readonly unitName: string;
  /** How many units a run of these settings has; 0 when the workload counts its own once it knows. */
  units(w: W): number;
  /** A short human name of these settings, for progress lines and reports. */
  label(w: W): string;
  /** Sweep values a model of `maxSeqLen` cannot hold. */
  unfit(w: W, maxSeqLen: number): Unfit[];
  /** For a named suite: the settings without the unfit values; null when nothing of it is left. */
  fit(w: W, maxSeqLen: number): W | null;
  /**
   * Problems with this model that no dropping of values mends (a draft with another vocabulary, a
   * KV head count that does not divide the heads), given the run's KV page size.
   */
  modelErrors(w: W, config: ModelConfig, kv: { pageSize: number }): string[];
  /** What it asks of the engine. */
  needs(w: W): WorkloadNeeds;
  /** The BenchResult fields it alone writes (each optional in the result), or none. */
  readonly section: S;
  /** The suite of this workload alone (`--suite NAME`), or null when it runs only inside other suites. */
  readonly suite: OwnSuite<W> | null;
  /** Its report: Markdown blocks (each a list of lines) from its section, none when it has none. */
  report(section: Partial<z.infer<z.ZodObject<S>>>, run: ReportContext): string[][];
}

/** The sweep values a suite fixes when the person gives none. */
export interface SuiteDefaults {
  readonly prefill: readonly number[];
  readonly depths: readonly number[];
  readonly gen: number;
  readonly reps: number;
}

/**
 * A workload's own suite: its name on the CLI and the page, its line of help, its defaults, and how
 * its settings are built from the flat options (`O` names the options it reads; the options
 * schema must provide them, which the compiler checks where the registry calls `build`).
 */
export interface OwnSuite<W, O = never> {
  readonly name: string;
  /** What the suite measures, for `--help` and the page, in one or a few sentences. */
  readonly help: string;
  readonly defaults: SuiteDefaults;
  /** `--weights` takes a list of formats to sweep (the run's own model is then f32); else one format. */
  readonly weightList: boolean;
  /** The suite's workload list (most suites are one workload; the batch suite is one per batch size). */
  build(options: O): W[];
}

/** Options every suite builder may read: the repetitions, already resolved against the suite's defaults. */
export interface CommonOptions {
  prefill?: number[];
  depths?: number[];
  gen?: number;
  reps: number;
  warmup: number;
}

/** What a report section may say about the run beside its own section. */
export interface ReportContext {
  /** The model's name: a preset's, or the file or folder it was loaded from. */
  preset: string;
}

/** A sweep value the model cannot hold, and why. */
export interface Unfit {
  kind: string;
  option: 'prefill' | 'depths' | 'gen' | 'trace';
  value: number;
  message: string;
}

/** What one workload asks of the engine. Every field is required: a new workload says what it needs. */
export interface WorkloadNeeds {
  /** Whether it runs the whole model (the kernel suite needs only its shapes). */
  model: boolean;
  /** Whether it runs the kernel families the autotuner picks (the capacity probe runs only kv-write). */
  kernels: boolean;
  /** Longest prompt it prefills at once (0: none). */
  maxPrompt: number;
  /** Most sequences it keeps alive at once in the run's model (0: it builds its own models). */
  maxSequences: number;
  /** Most context tokens alive at once in the run's model, summed over those sequences. */
  maxContextTokens: number;
  /** Largest decode batch on the run's model. */
  maxBatch: number;
  /** Row counts it calls the GEMV with (decode batches, speculative verifies). */
  gemvBatches: number[];
  /** Longest context a decode step of it attends to (0 without one): where the autotuner times decode attention. */
  decodeContext: number;
}

/** The section of a workload that writes none of its own (its points are the run's generic ones). */
export const NO_SECTION: Record<never, never> = {};

/** Needs of a workload that asks nothing of the engine beyond the validation pass. */
export const NO_NEEDS: WorkloadNeeds = {
  model: false,
  kernels: false,
  maxPrompt: 0,
  maxSequences: 0,
  maxContextTokens: 0,
  maxBatch: 0,
  gemvBatches: [],
  decodeContext: 0,
};

/** Most passes the profiler can time in one measurement: a query set holds at most 4096 timestamps. */
export const MAX_TIMED_PASSES = 2048;

/** Tokens of the validation prompt: four through prefill, the fifth through one decode step. */
export const VALIDATION_TOKENS = 5;

export const length = z
  .number()
  .int()
  .positive()
  .max(1 << 17);
export const depth = z
  .number()
  .int()
  .nonnegative()
  .max(1 << 17);

/** Tokens per KV page: one of the sizes the paged cache supports. */
export const pageSize = z.number().refine((v) => (PAGE_SIZES as readonly number[]).includes(v), {
  message: `must be one of ${PAGE_SIZES.join(', ')}`,
});

/**
 * A sliding window, tokens (`--window`): attention at position p sees positions max(0, p − W + 1)…p.
 * Whether it fits the model (longer than one KV page, shorter than maxSeqLen) is `windowErrors`'.
 */
export const kvWindow = z
  .number()
  .int()
  .positive()
  .max(1 << 17);

/**
 * What a window must be against the model: longer than one KV page (pages that fall out of it
 * return to the pool, so a window within one page would hold a page that is never whole) and
 * shorter than maxSeqLen (else it never slides). Messages name `name` (the flag, or the page's field).
 */
export function windowErrors(
  window: number | null,
  pageSize: number,
  maxSeqLen: number,
  name = '--window',
): string[] {
  if (window === null) return [];
  if (window < pageSize) return [`${name} ${window} is shorter than one KV page of ${pageSize} tokens`];
  if (window >= maxSeqLen)
    return [
      `${name} ${window} is not shorter than the model's maxSeqLen of ${maxSeqLen}: it would never slide`,
    ];
  return [];
}

/** Repetitions every timed workload shares: discarded warm-ups, then measured samples. */
export const repetitions = {
  /** Measured repetitions per point, after the warm-up. Three at the least, so spread can be judged. */
  reps: z.number().int().min(3).max(1000),
  /** Discarded warm-up repetitions per point (compiles pipelines and builds the pass's calls). */
  warmup: z.number().int().min(1).max(100),
};

/**
 * The prompt a decode point at `depth` starts from: `depth` tokens, or one at depth 0 (the first
 * token must come from a real prefill of something).
 */
export function decodePrompt(depth: number): number {
  return Math.max(depth, 1);
}

/** Unfit values of a one-L, one-depth workload (a prefill of `length`, then `gen` tokens at `depth`). */
export function pointUnfit(
  w: { kind: string; length: number; depth: number; gen: number },
  maxSeqLen: number,
): Unfit[] {
  const out: Unfit[] = [];
  if (w.length > maxSeqLen)
    out.push({
      kind: w.kind,
      option: 'prefill',
      value: w.length,
      message: `prompt length ${w.length} exceeds the model's maxSeqLen of ${maxSeqLen}`,
    });
  if (decodePrompt(w.depth) + w.gen - 1 > maxSeqLen)
    out.push({
      kind: w.kind,
      option: 'depths',
      value: w.depth,
      message: `depth ${w.depth} + ${w.gen} generated tokens exceeds the model's maxSeqLen of ${maxSeqLen}`,
    });
  return out;
}

/** Needs of a one-L, one-depth workload that builds its own models (one sequence at a time); the run's model validates. */
export function pointNeeds(w: { length: number; depth: number; gen: number }): WorkloadNeeds {
  return {
    ...NO_NEEDS,
    model: true,
    kernels: true,
    maxPrompt: Math.max(w.length, decodePrompt(w.depth)),
    maxContextTokens: Math.max(w.length, decodePrompt(w.depth) + w.gen - 1),
  };
}
