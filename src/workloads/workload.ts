import { InternalError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import type { KernelVariants } from '../kernels/variants.ts';
import type { Cost, Graph, PassCost } from '../measure/cost.ts';
import type { Roofs } from '../measure/roofline.ts';
import type { ClockSamples, KernelTimeRecord } from '../measure/samples.ts';
import type { ModelConfig } from '../model/config.ts';
import type { Model } from '../model/forward.ts';
import type { ValidationCheck } from '../model/verify.ts';
import type { ModelWeights } from '../model/weights.ts';
import type { BenchSpec } from '../spec/schema.ts';
import type { CapacityResult } from '../spec/workloads/capacity.ts';
import type { Quality } from '../spec/workloads/formats.ts';
import type { Workload, WorkloadKind, WorkloadOf } from '../spec/workloads/index.ts';
import type { ServeRun } from '../spec/workloads/serve-result.ts';
import type { SpecRun } from '../spec/workloads/speculative-result.ts';
import type { WeightFormat, WeightFormats } from '../weight-format.ts';

/**
 * The seam every workload plugs into. A workload gets the engine (device, model, kernels, the
 * run's roofs), its own settings from the spec, and a signal; it measures, and hands each finished
 * measurement to `emit` as a record. It never places anything on the roofline and never builds the
 * result: the assembler does both, once, for every record of every workload.
 */
export interface WorkloadContext {
  readonly gpu: Gpu;
  readonly config: ModelConfig;
  /** The model's weights on the CPU, in the run's format (a truncated draft model is built from them). */
  readonly weights: ModelWeights;
  /** The weights as loaded, before the run's format was applied (the format sweep quantizes these). */
  readonly loadedWeights: ModelWeights;
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
  /** The run's KV cache settings (models a workload builds itself follow them). */
  readonly kv: BenchSpec['kv'];
  /** The roofs measured before the workloads ran. */
  readonly roofs: Roofs;
  /** Aborted on cancel; a workload checks it between repetitions (`signal.throwIfAborted()`). */
  readonly signal: AbortSignal;
  /** Hands a finished measurement to the assembler. */
  emit(record: WorkloadRecord): void;
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

/** The capacity probe's one record: admission counts and pool bytes, nothing timed. */
export interface CapacityRecord {
  type: 'capacity';
  result: CapacityResult;
}

/** One point of the verify-K curve: verify passes of k tokens and decode steps at one depth, interleaved. */
export interface VerifyRecord {
  type: 'verify';
  k: number;
  depth: number;
  reps: number;
  chunks: number;
  verify: ClockSamples;
  decode: ClockSamples;
  /** The verify pass's FLOPs and bytes (it is what goes on the roofline). */
  cost: PassCost;
}

/** One drafter on one prompt class, against plain decode of the same prompts; nothing to place. */
export interface SpecRunRecord {
  type: 'specRun';
  run: SpecRun;
}

/** One format's error on one slice against f32 (the format sweep); nothing to place. */
export interface QualityRecord {
  type: 'quality';
  quality: Quality;
}

/**
 * One graph of the fusion workload: the graph asked for, the one the model ran, its layers, and the
 * dispatches by role the engine recorded in the last prefill and the last decode step it timed.
 */
export interface FusionRecord {
  type: 'fusion';
  graph: Graph;
  fused: boolean;
  layers: number;
  prefill: { tokens: number; dispatches: Record<string, number> };
  decode: { depth: number; dispatches: Record<string, number> };
}

/** One arm of the load test: every request's timeline and the aggregates; nothing to place. */
export interface ServeRunRecord {
  type: 'serveRun';
  run: ServeRun;
}

export type WorkloadRecord =
  | PassRecord
  | KernelRecord
  | CapacityRecord
  | VerifyRecord
  | SpecRunRecord
  | ServeRunRecord
  | QualityRecord
  | FusionRecord;

/** Runs one workload. One file in src/workloads/ per kind; see index.ts for the registry. */
export type WorkloadRunner<K extends WorkloadKind> = (
  ctx: WorkloadContext,
  settings: WorkloadOf<K>,
) => Promise<void>;

export type { Workload };

/** The model, for workloads that run whole passes; the engine builds it whenever one is in the spec. */
export function requireModel(ctx: WorkloadContext): Model {
  if (!ctx.model) throw new InternalError('this workload needs the model, and the engine built none');
  return ctx.model;
}
