import type { z } from 'zod';
import { InternalError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import type { KernelVariants } from '../kernels/variants.ts';
import type { Cost, Graph, PassCost } from '../measure/cost.ts';
import type { Roofs } from '../measure/roofline.ts';
import type { ClockInfo, ClockSamples, KernelTimeRecord } from '../measure/samples.ts';
import type { ModelConfig } from '../model/config.ts';
import type { Model } from '../model/forward.ts';
import type { TaskSlice } from '../model/task-set.ts';
import type { Tokenizer } from '../model/tokenizer/index.ts';
import type { ValidationCheck } from '../model/verify.ts';
import type { ModelWeights } from '../model/weights.ts';
import type { BenchResult, PeaksRecord, Point, Target } from '../results/schema.ts';
import type { BenchSpec } from '../spec/schema.ts';
import type { WORKLOADS, Workload, WorkloadKind, WorkloadOf } from '../spec/workloads/index.ts';
import type { WeightFormat, WeightFormats } from '../weight-format.ts';

/**
 * The seam every workload plugs into. A workload gets the engine (device, model, kernels, the
 * run's roofs), its own settings from the spec, and a signal; it measures, and hands each finished
 * measurement to `emit` as a record. It never places anything on the roofline and never builds the
 * result: the assembler does both, once, for every record of every workload.
 */
export interface WorkloadContext<R = never> {
  readonly gpu: Gpu;
  readonly config: ModelConfig;
  /** The model's name as loaded (a preset's, or the file's). */
  readonly modelName: string;
  /** The model's weights on the CPU, in the run's format (a truncated draft model is built from them). */
  readonly weights: ModelWeights;
  /** The weights as loaded, before the run's format was applied (the format sweep quantizes these). */
  readonly loadedWeights: ModelWeights;
  /** The model's tokenizer, where it has one (a GGUF's, a preset's vocabulary). */
  readonly tokenizer?: Tokenizer;
  /** A trained preset's held-out evaluation set: the format sweep scores each format on it by slice. */
  readonly taskSet?: readonly TaskSlice[];
  /** The format of the model's linear layers, as every point records it. */
  readonly weightFormat: WeightFormat | 'mixed';
  /** The format of each linear weight, for the cost model. */
  readonly weightFormats: WeightFormats;
  /** The model on the GPU; null when no workload of the run needs it (the kernel suite alone). */
  readonly model: Model | null;
  readonly pipelines: PipelineCache;
  /** The kernel families chosen for this device. */
  readonly variants: KernelVariants;
  /**
   * The kernel families for a model in `format` (the format sweep builds one per format): the
   * run's own choice for its format, the packed ops searched once per other format and kept.
   */
  variantsFor(format: WeightFormat): Promise<KernelVariants>;
  /**
   * The graph the sweeps' points are tagged with: set only by the fusion workload, which times both
   * graphs in one run (the points of every other workload carry none).
   */
  readonly graph?: Graph;
  /**
   * The prompt of `n` tokens a sweep feeds: the first n tokens of the run's prompt text (`--prompt`,
   * `--prompt-file`) when it has one, else the stand-in tokens for `salt` (prompts.ts).
   */
  promptTokens(n: number, salt: number): number[];
  /** The run's KV cache settings (models a workload builds itself follow them). */
  readonly kv: BenchSpec['kv'];
  /** The roofs measured before the workloads ran. */
  readonly roofs: Roofs;
  /** Aborted on cancel; a workload checks it between repetitions (`signal.throwIfAborted()`). */
  readonly signal: AbortSignal;
  /**
   * Hands a finished measurement to the assembler: a pass or a kernel (placed on the roofline as it
   * lands, and streamed), or one of the workload's own records (kept for its collector).
   */
  emit(record: PassRecord | KernelRecord | R): void;
  /** Says how far the workload has got, in its own units (points), and what it does now. */
  progress(done: number, total: number, label: string): void;
  /** Something the reader of the result should know. */
  warn(message: string): void;
  /** Records a check against the CPU reference in the result's validation. */
  check(c: ValidationCheck): void;
}

/** A whole forward pass measured at one point of a sweep. */
export interface PassRecord {
  type: 'pass';
  pass: 'prefill' | 'decode';
  /** Prefill: the prompt length L. Decode: 1 (new tokens per sequence per step). */
  tokens: number;
  /** Prefill: 0. Decode: the context depth before generation. */
  depth: number;
  batch: number;
  reps: number;
  /** One sample per repetition: a whole prefill, or one generation's TPOT. */
  samples: ClockSamples;
  /** Latency samples in the wall clock, per point: TTFT (prefill), TPOT and ITL (decode). */
  latency: { ttftMs?: number[]; tpotMs?: number[]; itlMs?: number[] };
  /** FLOPs and bytes of the pass the sample stands for (decode: the mean step of the generation). */
  cost: PassCost;
  /** Per-kernel GPU time over the same steps as the cost; empty without timestamps. */
  kernels: KernelTimeRecord[];
  /** The model's weight format at this point. */
  weightFormat: WeightFormat | 'mixed';
  /** The graph, on the fusion workload's points only (WorkloadContext.graph). */
  graph?: Graph;
}

/** One kernel timed alone at one shape (the kernel suite). */
export interface KernelRecord {
  type: 'kernel';
  name: string;
  variant: string;
  shape: Record<string, number>;
  samples: ClockSamples;
  cost: Cost;
}

/** What a collector may read beside its own records: the run's placed points and what they were placed against. */
export interface CollectContext<K extends WorkloadKind> {
  /** Every workload of this kind in the run, as fitted. */
  readonly workloads: readonly WorkloadOf<K>[];
  /** Every pass point of the run, placed (the workload's own among them). */
  readonly points: readonly Point[];
  readonly config: ModelConfig;
  /** The roofs the points were placed against (measured before the workloads). */
  readonly peaks: PeaksRecord;
  /** What the run knows about its GPU clock. */
  readonly clock: ClockInfo;
}

/** A workload's own section of the result, as its descriptor (spec/workloads/) declares it. */
export type SectionOf<K extends WorkloadKind> = Partial<
  z.infer<z.ZodObject<Extract<(typeof WORKLOADS)[number], { kind: K }>['section']>>
>;

/**
 * The engine side of a workload: its runner, and the collector that turns its own records into its
 * section of the result. One file in src/workloads/ per kind, one entry in its table (index.ts),
 * whose type names every kind of the registry (spec/workloads/index.ts).
 */
export interface WorkloadEngine<K extends WorkloadKind, R extends { type: string } = never> {
  run(ctx: WorkloadContext<R>, settings: WorkloadOf<K>): Promise<void>;
  /** What the progress line says when one of its own records lands. */
  describe(record: R): string;
  /** Its section, once every workload has run, from its own records (all workloads of this kind together). */
  collect(records: readonly R[], run: CollectContext<K>): SectionOf<K>;
  /**
   * Its performance targets, judged on its own section against this run's figures (the targets on
   * the run's generic points are run/targets.ts's); none where it sets none.
   */
  targets(result: Omit<BenchResult, 'targets'>): Target[];
}

/** A workload's runner, as its engine holds it. */
export type WorkloadRunner<K extends WorkloadKind, R extends { type: string } = never> = WorkloadEngine<
  K,
  R
>['run'];

export type { Workload };

/** The model, for workloads that run whole passes; the engine builds it whenever one is in the spec. */
export function requireModel<R>(ctx: WorkloadContext<R>): Model {
  if (!ctx.model) throw new InternalError('this workload needs the model, and the engine built none');
  return ctx.model;
}
