import { z } from 'zod';
import { SpecError } from '../errors.ts';
import { GEMV_LIMITS, MAX_DECODE_BATCH } from '../kernels/limits.ts';
import { PAGE_SIZES } from '../kv/cache.ts';
import { type ModelConfig, PRESETS, presetConfig } from '../model/config.ts';
import { ModelSourceSchema } from '../model/source.ts';
import { WEIGHT_FORMATS } from '../weight-format.ts';
import { DrafterTextSchema, MAX_DRAFT, parseDrafterSpec } from './drafter.ts';
import {
  BATCH_SIZES,
  SERVE_DEFAULTS,
  ServeWorkloadSchema,
  SloSchema,
  TraceRequestSchema,
  traceContext,
} from './serve.ts';

/**
 * What to measure: a model, the engine settings every workload shares (KV layout, kernel search),
 * and a list of workloads, each with its own settings. Built by the CLI from flags and by the page
 * from its form (both through `specFromOptions`, so the defaults live here only), validated by this
 * one schema on both sides, and recorded in the result.
 *
 * A workload's settings are its section below; its runner is one file in src/workloads/. This file
 * imports no engine code, so the CLI can validate a spec in Node.
 */

/** Most passes the profiler can time in one measurement: a query set holds at most 4096 timestamps. */
export const MAX_TIMED_PASSES = 2048;

const length = z
  .number()
  .int()
  .positive()
  .max(1 << 17);
const depth = z
  .number()
  .int()
  .nonnegative()
  .max(1 << 17);

/** Tokens per KV page: one of the sizes the paged cache supports. */
const pageSize = z.number().refine((v) => (PAGE_SIZES as readonly number[]).includes(v), {
  message: `must be one of ${PAGE_SIZES.join(', ')}`,
});

/** Repetitions every timed workload shares: discarded warm-ups, then measured samples. */
const repetitions = {
  /** Measured repetitions per point, after the warm-up. Three at the least, so spread can be judged. */
  reps: z.number().int().min(3).max(1000),
  /** Discarded warm-up repetitions per point (compiles pipelines and builds the pass's calls). */
  warmup: z.number().int().min(1).max(100),
};

// ---------------------------------------------------------------------------------------------
// Workload sections

/** Prefill over prompt lengths: one sample is one whole prefill of L tokens (its TTFT, no queue). */
export const PrefillWorkloadSchema = z
  .object({
    kind: z.literal('prefill'),
    /** Prompt lengths L. */
    lengths: z.array(length).min(1).max(64),
    ...repetitions,
    /** Time every kernel of every repetition (one pass per kernel), not just one profiled run per point. */
    profile: z.boolean(),
  })
  .strict();

/**
 * Decode at context depths: a repetition fills `batch` caches to `depth` with a prompt (its TTFT),
 * then generates `gen` tokens; one sample is that repetition's TPOT, (last − first token) / (gen − 1).
 */
export const DecodeWorkloadSchema = z
  .object({
    kind: z.literal('decode'),
    /** Context tokens before generation starts; depth 0 is a one-token prompt. */
    depths: z.array(depth).min(1).max(64),
    /** Tokens generated per repetition, the first from the prompt's prefill. */
    gen: z
      .number()
      .int()
      .min(2)
      .max(MAX_TIMED_PASSES + 1),
    /** Sequences decoded together in each step. */
    batch: z.number().int().min(1).max(MAX_DECODE_BATCH),
    ...repetitions,
    profile: z.boolean(),
  })
  .strict();

/** Each kernel alone at the model's own shapes, checked against the CPU reference, then timed. */
export const KernelsWorkloadSchema = z
  .object({
    kind: z.literal('kernels'),
    ...repetitions,
  })
  .strict();

/**
 * The capacity probe: builds the largest paged KV pool the device's buffer limits allow within
 * `poolMiB`, admits seeded sequences until allocation fails, once paged and once contiguous
 * (each sequence reserving maxSeqLen), and checks the reached counts against the calculator's.
 */
export const CapacityWorkloadSchema = z
  .object({
    kind: z.literal('capacity'),
    /** KV pool to build, all layers together, MiB (the device's buffer limits may allow less). */
    poolMiB: z
      .number()
      .int()
      .min(1)
      .max(1 << 20),
    pageSize: pageSize,
    /** Mean context tokens of a sequence; null: the model's maxSeqLen ÷ 8. */
    meanTokens: z
      .number()
      .int()
      .positive()
      .max(1 << 17)
      .nullable(),
    /** Share of long sequences. */
    longShare: z.number().min(0).max(1),
    /** A long sequence holds this many times the mean (capped at maxSeqLen). */
    longFactor: z.number().min(1).max(64),
    seed: z.number().int().nonnegative(),
  })
  .strict();

/** Prompt classes of the speculative runs: code-like repeated patterns, and text that never repeats. */
export const SPEC_PROMPT_CLASSES = ['repetitive', 'random'] as const;

/**
 * Speculative decoding. First the verify-K curve: at each depth, one decode step and verify passes
 * of k tokens, each timed alone (`reps` samples), so the ratio says what verifying k tokens costs
 * in decode steps. Then, for each prompt class, plain greedy decode of `gen` tokens from each
 * prompt (the baseline and the reference output), and the same prompts decoded speculatively with
 * each drafter at draft length `k`: acceptance, TPOT, speedup, and whether the output is identical.
 */
export const SpecWorkloadSchema = z
  .object({
    kind: z.literal('spec'),
    /** Tokens per verify pass on the curve (k = 1 is a decode step's work through the verify path). */
    verifyKs: z
      .array(
        z
          .number()
          .int()
          .min(1)
          .max(MAX_DRAFT + 1),
      )
      .min(1)
      .max(17),
    /** Context depths of the curve. */
    depths: z.array(depth).min(1).max(8),
    /** Drafters of the speculative runs (none: the curve alone). */
    drafters: z.array(DrafterTextSchema).max(8),
    /** Draft length K: tokens proposed per step (the verify pass holds K + 1). */
    k: z.number().int().min(1).max(MAX_DRAFT),
    /** Shrink K after a rejection and grow it back after a full acceptance, within 1…k. */
    adaptiveK: z.boolean(),
    /** Tokens generated per prompt, the first from the prompt's prefill. */
    gen: z.number().int().min(2).max(1024),
    /** Prompt tokens of each speculative run. */
    promptTokens: length,
    /** Prompts per class. */
    prompts: z.number().int().min(1).max(16),
    classes: z.array(z.enum(SPEC_PROMPT_CLASSES)).min(1).max(SPEC_PROMPT_CLASSES.length),
    ...repetitions,
    /** Seeds the oracle's corruption and the prompts. */
    seed: z.number().int().nonnegative(),
  })
  .strict();

/** Quality slices of the format sweep: where quantization error is measured against f32. */
export const QUALITY_SLICES = ['short', 'long', 'repeated', 'rare', 'long-decode'] as const;
export type QualitySlice = (typeof QUALITY_SLICES)[number];

/**
 * The format sweep: for each weight format, the same model quantized on load, a prefill at one L
 * and a decode at one depth (timed as the prefill and decode sweeps time them), then, with
 * `quality`, the error of each format's next-token distributions against f32 on every slice.
 */
export const FormatsWorkloadSchema = z
  .object({
    kind: z.literal('formats'),
    formats: z
      .array(z.enum(WEIGHT_FORMATS))
      .min(1)
      .max(WEIGHT_FORMATS.length)
      .refine((f) => new Set(f).size === f.length, { message: 'a format is listed twice' }),
    length,
    depth,
    gen: z.number().int().min(2).max(MAX_TIMED_PASSES),
    /** Error by slice against f32 (f32 is added to the list when missing: it is the reference). */
    quality: z.boolean(),
    ...repetitions,
  })
  .strict();

/**
 * The fused graph against the unfused one in the same run: for each graph (fused first), a model
 * built from the run's weights and kernel families, checked against the CPU forward, then a prefill
 * at one L and a decode at one depth (timed as the prefill and decode sweeps time them; their points
 * carry the graph), and the dispatches the engine recorded in each pass.
 */
export const FusionWorkloadSchema = z
  .object({
    kind: z.literal('fusion'),
    length,
    depth,
    gen: z.number().int().min(2).max(MAX_TIMED_PASSES),
    ...repetitions,
  })
  .strict();

export const WorkloadSchema = z.discriminatedUnion('kind', [
  PrefillWorkloadSchema,
  DecodeWorkloadSchema,
  KernelsWorkloadSchema,
  CapacityWorkloadSchema,
  SpecWorkloadSchema,
  ServeWorkloadSchema,
  FormatsWorkloadSchema,
  FusionWorkloadSchema,
]);
export type Workload = z.infer<typeof WorkloadSchema>;
export type WorkloadKind = Workload['kind'];
export type WorkloadOf<K extends WorkloadKind> = Extract<Workload, { kind: K }>;

// ---------------------------------------------------------------------------------------------
// The spec

export const SUITE_NAMES = [
  'quick',
  'full',
  'kernels',
  'capacity',
  'spec',
  'serve',
  'batch',
  'formats',
  'fusion',
  'custom',
] as const;
export type SuiteName = (typeof SUITE_NAMES)[number];

export const BenchSpecSchema = z
  .object({
    model: ModelSourceSchema,
    /** The preset the workload list came from ('custom' when sweep values were given). */
    suite: z.enum(SUITE_NAMES),
    kv: z
      .object({
        /** 'paged' (pages of pageSize tokens) or 'contiguous' (maxSeqLen per sequence, the A/B baseline). */
        mode: z.enum(['paged', 'contiguous']),
        pageSize,
      })
      .strict(),
    /** Search the kernel families for this device before measuring (false: the GPU-oriented defaults). */
    autotune: z.boolean(),
    /**
     * The format of the linear layers and LM head, quantized on load (`--weights`). A quantized GGUF
     * keeps its own tensors' types whatever this says.
     */
    weights: z.enum(WEIGHT_FORMATS).default('f32'),
    /**
     * Build the run's model on the fused graph where the chosen kernel families take it (false,
     * `--no-fuse`: the unfused graph, the reference). The fusion workload measures both whatever this says.
     */
    fuse: z.boolean().default(true),
    workloads: z.array(WorkloadSchema).min(1, 'nothing to measure: the workload list is empty').max(16),
  })
  .strict();
export type BenchSpec = z.infer<typeof BenchSpecSchema>;

export function parseBenchSpec(input: unknown): BenchSpec {
  const r = BenchSpecSchema.safeParse(input);
  if (r.success) return r.data;
  throw new SpecError(`Invalid benchmark spec: ${issuesText(r.error.issues)}`);
}

function issuesText(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

// ---------------------------------------------------------------------------------------------
// Presets and defaults: the one place the CLI and the page take them from

/** The built-in suites, as workload lists. `quick` finishes in a couple of minutes on a software adapter with ci-tiny. */
export const SUITES = {
  /** The prefill and decode sweeps, then the fused graph against the unfused one at L = 256 and depth 16. */
  quick: { prefill: [16, 32, 64, 128, 256], depths: [16, 128, 512], gen: 16, reps: 3 },
  full: { prefill: [16, 32, 64, 128, 256, 512, 1024], depths: [0, 256, 1024], gen: 32, reps: 5 },
  kernels: { prefill: [], depths: [], gen: 16, reps: 3 },
  capacity: { prefill: [], depths: [], gen: 16, reps: 3 },
  /** The verify-K curve at depth 64, then three drafters at K = 4 over 64 tokens per prompt. */
  spec: { prefill: [], depths: [64], gen: 64, reps: 5 },
  /** The load test: continuous against static batching on the default mix, near saturation. */
  serve: { prefill: [], depths: [], gen: 16, reps: 3 },
  /** The B-scaling sweep: a decode step of B = 1…32 sequences, 8-token prompts, 8 tokens each. */
  batch: { prefill: [], depths: [8], gen: 8, reps: 3 },
  /** The format sweep: every format, a prefill of 64 and a decode at depth 64 of 16 tokens, and the error by slice. */
  formats: { prefill: [64], depths: [64], gen: 16, reps: 3 },
  /** Fused against unfused graph: a prefill of 256 and 16 tokens at depth 16, per graph. */
  fusion: { prefill: [256], depths: [16], gen: 16, reps: 3 },
} as const satisfies Record<Exclude<SuiteName, 'custom'>, unknown>;

/** Defaults of every setting a suite does not fix. */
export const SPEC_DEFAULTS = {
  preset: 'ci-tiny',
  seed: 0,
  suite: 'quick',
  warmup: 1,
  pageSize: 16,
  kvMode: 'paged',
  batch: 1,
  profile: false,
  autotune: true,
  fuse: true,
  /** The capacity probe's pool, MiB: enough for a few hundred ci-tiny sequences, quick to verify on a CPU. */
  poolMiB: 32,
  longShare: 0.2,
  longFactor: 4,
  /** The speculative suite: a curve up to the largest draft, and one drafter of each real kind plus the calibration one. */
  verifyKs: [1, 2, 4, 8, 16],
  drafters: ['ngram', 'oracle:0.8', 'truncated:1'],
  draftK: 4,
  specPromptTokens: 64,
  specPrompts: 1,
} as const;

/**
 * The flat settings the CLI's flags and the page's form fill in; every one optional. Named by
 * the flag/field, so a validation issue points at what the person typed.
 */
export const SpecOptionsSchema = z
  .object({
    suite: z.enum(SUITE_NAMES).default(SPEC_DEFAULTS.suite),
    prefill: z.array(length).max(64).optional(),
    depths: z.array(depth).max(64).optional(),
    gen: DecodeWorkloadSchema.shape.gen.optional(),
    reps: repetitions.reps.optional(),
    warmup: repetitions.warmup.default(SPEC_DEFAULTS.warmup),
    pageSize: BenchSpecSchema.shape.kv.shape.pageSize.default(SPEC_DEFAULTS.pageSize),
    kvMode: BenchSpecSchema.shape.kv.shape.mode.default(SPEC_DEFAULTS.kvMode),
    batch: DecodeWorkloadSchema.shape.batch.default(SPEC_DEFAULTS.batch),
    profile: z.boolean().default(SPEC_DEFAULTS.profile),
    autotune: z.boolean().default(SPEC_DEFAULTS.autotune),
    /** --no-fuse: build the run's model on the unfused graph. */
    fuse: z.boolean().default(SPEC_DEFAULTS.fuse),
    /** --suite formats: measure the error by slice (--no-quality: time the formats only). */
    quality: z.boolean().default(true),
    /** --weights: one format, or (with --suite formats) the formats to sweep. */
    weights: z
      .array(z.enum(WEIGHT_FORMATS))
      .min(1)
      .max(WEIGHT_FORMATS.length)
      .refine((f) => new Set(f).size === f.length, { message: 'a format is listed twice' })
      .optional(),
    poolMiB: CapacityWorkloadSchema.shape.poolMiB.default(SPEC_DEFAULTS.poolMiB),
    /** --suite spec: the drafters, the draft length K, adaptive K, and the curve's verify sizes. */
    drafters: SpecWorkloadSchema.shape.drafters.optional(),
    k: SpecWorkloadSchema.shape.k.default(SPEC_DEFAULTS.draftK),
    adaptiveK: z.boolean().default(false),
    verifyKs: SpecWorkloadSchema.shape.verifyKs.optional(),
    /** --suite serve: traffic (rate in requests/s, Infinity: all at t = 0), scheduler and experiment. */
    rate: z.union([z.number().positive(), z.literal(Number.POSITIVE_INFINITY)]).optional(),
    concurrency: z.number().int().min(1).max(1024).optional(),
    burstiness: z.number().positive().max(1000).default(SERVE_DEFAULTS.burstiness),
    requests: ServeWorkloadSchema.shape.requests.default(SERVE_DEFAULTS.requests),
    durationS: z.number().positive().max(86_400).optional(),
    mix: ServeWorkloadSchema.shape.mix.default('default'),
    prefixTokens: ServeWorkloadSchema.shape.prefixTokens.default(0),
    prefixShare: ServeWorkloadSchema.shape.prefixShare.default(SERVE_DEFAULTS.prefixShare),
    priorityShare: ServeWorkloadSchema.shape.priorityShare.default(SERVE_DEFAULTS.priorityShare),
    policy: ServeWorkloadSchema.shape.policy.default(SERVE_DEFAULTS.policy),
    slo: SloSchema.default({}),
    batching: z.enum(['continuous', 'static', 'both']).default('both'),
    prefixCache: z.enum(['on', 'off', 'both']).default('off'),
    tokenBudget: ServeWorkloadSchema.shape.tokenBudget.default(SERVE_DEFAULTS.tokenBudget),
    maxBatch: ServeWorkloadSchema.shape.maxBatch.default(SERVE_DEFAULTS.maxBatch),
    kvTokens: z
      .number()
      .int()
      .min(1)
      .max(1 << 24)
      .optional(),
    sweep: ServeWorkloadSchema.shape.sweep.default(0),
    solo: z.boolean().default(true),
    trace: z.array(TraceRequestSchema).min(1).max(5000).optional(),
  })
  .strict()
  .refine((o) => o.suite === 'formats' || (o.weights?.length ?? 1) === 1, {
    message: 'several weight formats make a format sweep: add --suite formats, or give one format',
    path: ['weights'],
  })
  .refine((o) => o.rate === undefined || o.concurrency === undefined, {
    message: 'give --rate or --concurrency, not both',
    path: ['concurrency'],
  })
  .refine((o) => o.trace === undefined || (o.sweep === 0 && o.mix === 'default'), {
    message:
      'an imported trace sets its own arrivals and classes: it cannot be swept or split into the matrix',
    path: ['trace'],
  });
export type SpecOptions = z.input<typeof SpecOptionsSchema>;

/** Validation problems of a set of options, each with the option it belongs to. */
export interface SpecIssue {
  /** The option (flag or form field) at fault, or null for the spec as a whole. */
  option: keyof SpecOptions | 'model' | null;
  /** Position in a list option, counting from 0. */
  index?: number;
  message: string;
}

export type SpecBuild = { ok: true; spec: BenchSpec } | { ok: false; issues: SpecIssue[] };

/**
 * Builds the workload list from flat options: a named suite gives the sweep values, explicit
 * prefill/depths make it custom, and the other settings fill every workload. `--suite kernels`
 * is the kernel suite alone. Never throws; see `specFromOptions` for the throwing form.
 */
export function buildSpec(model: unknown, options: SpecOptions): SpecBuild {
  const parsed = SpecOptionsSchema.safeParse(options);
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => {
        const [head, index] = i.path;
        return {
          option: typeof head === 'string' ? (head as keyof SpecOptions) : null,
          index: typeof index === 'number' ? index : undefined,
          message: i.message,
        };
      }),
    };
  }
  const o = parsed.data;
  const custom = o.prefill !== undefined || o.depths !== undefined;
  const alone =
    o.suite === 'kernels' ||
    o.suite === 'capacity' ||
    o.suite === 'spec' ||
    o.suite === 'serve' ||
    o.suite === 'batch' ||
    o.suite === 'formats' ||
    o.suite === 'fusion';
  const suite: SuiteName = alone ? o.suite : custom ? 'custom' : o.suite;
  const base = SUITES[o.suite === 'custom' ? 'quick' : o.suite];
  const reps = o.reps ?? base.reps;
  const workloads: Workload[] = [];
  if (suite === 'kernels') {
    workloads.push({ kind: 'kernels', reps, warmup: o.warmup });
  } else if (suite === 'capacity') {
    workloads.push({
      kind: 'capacity',
      poolMiB: o.poolMiB,
      pageSize: o.pageSize,
      meanTokens: null,
      longShare: SPEC_DEFAULTS.longShare,
      longFactor: SPEC_DEFAULTS.longFactor,
      seed: 0,
    });
  } else if (suite === 'serve') {
    workloads.push({
      kind: 'serve',
      arrival:
        o.concurrency !== undefined
          ? { kind: 'concurrency', concurrency: o.concurrency }
          : o.rate === Number.POSITIVE_INFINITY
            ? { kind: 'all-at-once' }
            : { kind: 'poisson', rateRps: o.rate ?? null, burstiness: o.burstiness },
      requests: o.trace?.length ?? o.requests,
      durationS: o.durationS ?? null,
      mix: o.mix,
      prefixTokens: o.prefixTokens,
      prefixShare: o.prefixTokens > 0 ? o.prefixShare : 0,
      priorityShare: o.priorityShare,
      policy: o.policy,
      slo: o.slo,
      batching: o.batching === 'both' ? ['continuous', 'static'] : [o.batching],
      prefixCache: o.prefixCache === 'both' ? [false, true] : [o.prefixCache === 'on'],
      tokenBudget: o.tokenBudget,
      maxBatch: o.maxBatch,
      pageSize: o.pageSize,
      kvTokens: o.kvTokens ?? null,
      sweep: o.sweep,
      solo: o.solo,
      seed: 0,
      trace: o.trace ?? null,
    });
  } else if (suite === 'batch') {
    // One decode workload per batch size, at one shallow depth: the step cost against B.
    const common = { reps, warmup: o.warmup, profile: o.profile };
    for (const batch of BATCH_SIZES) {
      workloads.push({
        kind: 'decode',
        depths: o.depths ?? [...base.depths],
        gen: o.gen ?? base.gen,
        batch,
        ...common,
      });
    }
  } else if (suite === 'formats') {
    // --prefill and --depth name the one L and the one depth each format is timed at.
    workloads.push({
      kind: 'formats',
      formats: o.weights ?? [...WEIGHT_FORMATS],
      length: o.prefill?.[0] ?? SUITES.formats.prefill[0],
      depth: o.depths?.[0] ?? SUITES.formats.depths[0],
      gen: o.gen ?? base.gen,
      quality: o.quality,
      reps,
      warmup: o.warmup,
    });
  } else if (suite === 'fusion') {
    // --prefill and --depth name the one L and the one depth each graph is timed at.
    const f = SUITES.fusion;
    workloads.push(
      fusionWorkload(
        o.prefill?.[0] ?? f.prefill[0],
        o.depths?.[0] ?? f.depths[0],
        o.gen ?? f.gen,
        reps,
        o.warmup,
      ),
    );
  } else if (suite === 'spec') {
    // --depth and --gen mean the curve's depths and the tokens per prompt here.
    workloads.push({
      kind: 'spec',
      verifyKs: o.verifyKs ?? [...SPEC_DEFAULTS.verifyKs],
      depths: o.depths ?? [...base.depths],
      drafters: o.drafters ?? [...SPEC_DEFAULTS.drafters],
      k: o.k,
      adaptiveK: o.adaptiveK,
      gen: o.gen ?? base.gen,
      promptTokens: SPEC_DEFAULTS.specPromptTokens,
      prompts: SPEC_DEFAULTS.specPrompts,
      classes: [...SPEC_PROMPT_CLASSES],
      reps,
      warmup: o.warmup,
      seed: 0,
    });
  } else {
    const lengths = o.prefill ?? [...base.prefill];
    const depths = o.depths ?? [...base.depths];
    const common = { reps, warmup: o.warmup, profile: o.profile };
    if (lengths.length > 0) workloads.push({ kind: 'prefill', lengths, ...common });
    if (depths.length > 0) {
      workloads.push({ kind: 'decode', depths, gen: o.gen ?? base.gen, batch: o.batch, ...common });
    }
    // The quick suite ends with the fused graph against the unfused one, at its largest L and first depth.
    if (suite === 'quick') {
      const q = SUITES.quick;
      workloads.push(fusionWorkload(Math.max(...q.prefill), q.depths[0], o.gen ?? q.gen, reps, o.warmup));
    }
  }
  const spec = BenchSpecSchema.safeParse({
    model,
    suite,
    kv: { mode: o.kvMode, pageSize: o.pageSize },
    autotune: o.autotune,
    fuse: o.fuse,
    weights: suite === 'formats' ? 'f32' : (o.weights?.[0] ?? 'f32'),
    workloads,
  });
  if (spec.success) return { ok: true, spec: spec.data };
  // The options were validated above with the same field schemas, so what remains is the model
  // source or an empty workload list.
  return {
    ok: false,
    issues: spec.error.issues.map((i) =>
      i.path[0] === 'model'
        ? { option: 'model', message: `${i.path.slice(1).join('.') || 'model'}: ${i.message}` }
        : { option: null, message: i.message },
    ),
  };
}

function fusionWorkload(length: number, depth: number, gen: number, reps: number, warmup: number): Workload {
  return { kind: 'fusion', length, depth, gen, reps, warmup };
}

/** `buildSpec` that throws a SpecError naming every problem. */
export function specFromOptions(model: unknown, options: SpecOptions): BenchSpec {
  const r = buildSpec(model, options);
  if (r.ok) return r.spec;
  throw new SpecError(
    `Invalid benchmark spec: ${r.issues
      .map((i) => `${i.option ?? '(spec)'}${i.index === undefined ? '' : `[${i.index}]`}: ${i.message}`)
      .join('; ')}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Fitting a spec to a model: the one maxSeqLen rule

/** A sweep value the model cannot hold, and why. */
export interface Unfit {
  kind: WorkloadKind;
  option: 'prefill' | 'depths' | 'gen' | 'trace';
  value: number;
  message: string;
}

/**
 * The prompt a decode point at `depth` starts from: `depth` tokens, or one at depth 0 (the first
 * token must come from a real prefill of something).
 */
export function decodePrompt(depth: number): number {
  return Math.max(depth, 1);
}

/** Context tokens a decode point reaches at its deepest: its prompt, then gen − 1 decode steps. */
export function decodeContext(w: WorkloadOf<'decode'>, depth: number): number {
  return decodePrompt(depth) + w.gen - 1;
}

/** Context tokens a workload point needs at its longest: L for a prompt, prompt + generated for a generation. */
function unfitValues(w: Workload, maxSeqLen: number): Unfit[] {
  switch (w.kind) {
    case 'prefill':
      return w.lengths
        .filter((L) => L > maxSeqLen)
        .map((L) => ({
          kind: w.kind,
          option: 'prefill' as const,
          value: L,
          message: `prompt length ${L} exceeds the model's maxSeqLen of ${maxSeqLen}`,
        }));
    case 'decode':
      return w.depths
        .filter((d) => decodeContext(w, d) > maxSeqLen)
        .map((d) => ({
          kind: w.kind,
          option: 'depths' as const,
          value: d,
          message: `depth ${d} + ${w.gen} generated tokens exceeds the model's maxSeqLen of ${maxSeqLen}`,
        }));
    case 'spec':
      return [
        ...w.depths
          .filter((d) => specCurveContext(w, d) > maxSeqLen)
          .map((d) => ({
            kind: w.kind,
            option: 'depths' as const,
            value: d,
            message: `depth ${d} + a verify of ${Math.max(...w.verifyKs)} tokens exceeds the model's maxSeqLen of ${maxSeqLen}`,
          })),
        ...(specRunContext(w) > maxSeqLen
          ? [
              {
                kind: w.kind,
                option: 'gen' as const,
                value: w.gen,
                message: `a ${w.promptTokens}-token prompt + ${w.gen} generated + ${w.k + 1} verified tokens exceeds the model's maxSeqLen of ${maxSeqLen}`,
              },
            ]
          : []),
      ];
    case 'serve': {
      const need = traceContext(w);
      return need > maxSeqLen
        ? [
            {
              kind: w.kind,
              option: 'trace' as const,
              value: need,
              message: `a request of the trace needs ${need} tokens of context (prompt + output), past the model's maxSeqLen of ${maxSeqLen}`,
            },
          ]
        : [];
    }
    case 'formats':
    case 'fusion': {
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
    case 'kernels':
    case 'capacity':
      return [];
  }
}

/** Context a verify-curve point reaches: the depth (at least one token), then the largest verify. */
export function specCurveContext(w: WorkloadOf<'spec'>, depth: number): number {
  return decodePrompt(depth) + Math.max(...w.verifyKs);
}

/** Context a speculative run reaches at most: prompt, generated tokens, and one verify's overshoot. */
export function specRunContext(w: WorkloadOf<'spec'>): number {
  return w.promptTokens + w.gen + w.k + 1;
}

/**
 * Drafters a model cannot use, each with the cause, found before anything is measured: a draft
 * preset whose vocabulary differs from the target's, an unknown preset, or a truncation that keeps
 * all of the target's layers or more.
 */
export function drafterErrors(spec: BenchSpec, config: ModelConfig): string[] {
  const out: string[] = [];
  for (const w of spec.workloads) {
    if (w.kind !== 'spec') continue;
    for (const text of w.drafters) {
      const d = parseDrafterSpec(text);
      if (typeof d === 'string') {
        out.push(d);
      } else if (d.kind === 'model') {
        if (!(d.preset in PRESETS)) {
          out.push(`draft model "${d.preset}" is not a preset (${Object.keys(PRESETS).join(', ')})`);
          continue;
        }
        const draft = presetConfig(d.preset as keyof typeof PRESETS);
        if (draft.vocabSize !== config.vocabSize) {
          out.push(
            `draft model ${d.preset} has a vocabulary of ${draft.vocabSize} tokens and the target ${config.vocabSize}: a draft must share the target's vocabulary`,
          );
        }
      } else if (d.kind === 'truncated' && d.layers >= config.numLayers) {
        out.push(
          `truncated:${d.layers} keeps ${d.layers} layers of a ${config.numLayers}-layer target: a truncated draft needs fewer layers than the target`,
        );
      }
    }
  }
  return out;
}

/**
 * Drops the sweep values a model of `maxSeqLen` cannot hold. For a named suite that is a warning
 * (the suite was not written for this model); for values a person typed it is an error. A
 * workload left with no values is dropped.
 */
export function fitToModel(
  spec: BenchSpec,
  maxSeqLen: number,
): { spec: BenchSpec; dropped: Unfit[]; errors: Unfit[] } {
  const unfit = spec.workloads.flatMap((w) => unfitValues(w, maxSeqLen));
  if (spec.suite === 'custom') return { spec, dropped: [], errors: unfit };
  // An imported trace is what a person gave: a request it holds that the model cannot is an error.
  const traced = unfit.filter((u) => u.option === 'trace');
  if (traced.length > 0) return { spec, dropped: [], errors: traced };
  const workloads = spec.workloads.flatMap((w): Workload[] => {
    if (w.kind === 'prefill') {
      const lengths = w.lengths.filter((L) => L <= maxSeqLen);
      return lengths.length > 0 ? [{ ...w, lengths }] : [];
    }
    if (w.kind === 'decode') {
      const depths = w.depths.filter((d) => decodeContext(w, d) <= maxSeqLen);
      return depths.length > 0 ? [{ ...w, depths }] : [];
    }
    if (w.kind === 'spec') {
      const depths = w.depths.filter((d) => specCurveContext(w, d) <= maxSeqLen);
      return depths.length > 0 && specRunContext(w) <= maxSeqLen ? [{ ...w, depths }] : [];
    }
    if (w.kind === 'formats' || w.kind === 'fusion') return unfitValues(w, maxSeqLen).length === 0 ? [w] : [];
    return [w];
  });
  return { spec: { ...spec, workloads }, dropped: unfit, errors: [] };
}

/** Throws a SpecError for values a person asked for that the model cannot hold. */
export function assertFits(errors: readonly Unfit[]): void {
  if (errors.length > 0) throw new SpecError(errors.map((e) => e.message).join('; '));
}

// ---------------------------------------------------------------------------------------------
// What the engine must size for

/** The most a spec's workloads ask of the engine at once. */
export interface EngineNeeds {
  /** Longest prompt in one prefill. */
  maxPrompt: number;
  /** Most sequences alive at once. */
  maxSequences: number;
  /** Most context tokens alive at once, summed over those sequences. */
  maxContextTokens: number;
  /** Largest decode batch. */
  maxBatch: number;
  /** Row counts the GEMV is called with (decode batches, speculative verifies), ascending; the autotuner times each. */
  gemvBatches: number[];
  /** Longest context a decode step of a decode workload attends to (0 without one): where the autotuner times decode attention. */
  decodeContext: number;
  /** Whether any workload runs the whole model (the kernel suite needs only its shapes). */
  model: boolean;
  /** Whether any workload runs the kernel families the autotuner picks (the capacity probe runs only kv-write). */
  kernels: boolean;
}

/**
 * Sizes the engine for a fitted spec. The validation pass (5 tokens, one sequence) is counted too,
 * so a spec of only short points still validates.
 */
export function engineNeeds(spec: BenchSpec): EngineNeeds {
  const needs: EngineNeeds = {
    maxPrompt: VALIDATION_TOKENS,
    maxSequences: 1,
    maxContextTokens: VALIDATION_TOKENS,
    maxBatch: 1,
    gemvBatches: [1],
    decodeContext: 0,
    model: false,
    kernels: spec.workloads.some((w) => w.kind !== 'capacity'),
  };
  for (const w of spec.workloads) {
    if (w.kind === 'prefill') {
      needs.model = true;
      needs.maxPrompt = Math.max(needs.maxPrompt, ...w.lengths);
      needs.maxContextTokens = Math.max(needs.maxContextTokens, ...w.lengths);
    } else if (w.kind === 'decode') {
      needs.model = true;
      const deepest = Math.max(...w.depths.map((d) => decodeContext(w, d)));
      needs.maxPrompt = Math.max(needs.maxPrompt, ...w.depths.map(decodePrompt));
      needs.maxSequences = Math.max(needs.maxSequences, w.batch);
      needs.maxBatch = Math.max(needs.maxBatch, w.batch);
      needs.gemvBatches.push(Math.min(GEMV_LIMITS.maxBatch, w.batch));
      needs.maxContextTokens = Math.max(needs.maxContextTokens, w.batch * deepest);
      needs.decodeContext = Math.max(needs.decodeContext, deepest);
    } else if (w.kind === 'serve') {
      // The arms build their own models (their own KV pools); the run's model only validates.
      needs.model = true;
      needs.gemvBatches.push(Math.min(GEMV_LIMITS.maxBatch, w.maxBatch));
    } else if (w.kind === 'formats' || w.kind === 'fusion') {
      // Each format (each graph) builds its own model (one sequence at a time); the run's model validates.
      needs.model = true;
      needs.maxPrompt = Math.max(needs.maxPrompt, w.length, decodePrompt(w.depth));
      needs.maxContextTokens = Math.max(needs.maxContextTokens, w.length, decodePrompt(w.depth) + w.gen - 1);
    } else if (w.kind === 'spec') {
      // One sequence at a time (the curve's, then each prompt's); prompts go through prefill.
      needs.model = true;
      // Plain decode is one row; a verify of K drafts is K+1 rows, in chunks of at most GEMV_LIMITS.maxBatch.
      if (w.drafters.length > 0) needs.gemvBatches.push(Math.min(GEMV_LIMITS.maxBatch, w.k + 1));
      needs.maxPrompt = Math.max(needs.maxPrompt, w.promptTokens, ...w.depths.map(decodePrompt));
      needs.maxContextTokens = Math.max(
        needs.maxContextTokens,
        specRunContext(w),
        ...w.depths.map((d) => specCurveContext(w, d)),
      );
    }
  }
  needs.gemvBatches = [...new Set(needs.gemvBatches)].sort((a, b) => a - b);
  return needs;
}

/** Tokens of the validation prompt: four through prefill, the fifth through one decode step. */
export const VALIDATION_TOKENS = 5;

/** Progress units of a workload: its points. The kernel suite reports its own count once it knows it. */
export function workloadUnits(w: Workload): number {
  switch (w.kind) {
    case 'prefill':
      return w.lengths.length;
    case 'decode':
      return w.depths.length;
    case 'kernels':
      return 0;
    case 'capacity':
      // Paged, then contiguous.
      return 2;
    case 'spec':
      // The curve's depths, then one run per prompt class for the baseline and each drafter.
      return w.depths.length + w.classes.length * (1 + w.drafters.length);
    case 'serve':
      // Requests, summed over the arms (the workload reports its own count once it knows it).
      return 0;
    case 'formats':
      // A prefill and a decode point per format, and its quality slices.
      return w.formats.length * 2 + (w.quality ? w.formats.length : 0);
    case 'fusion':
      // A prefill and a decode point per graph.
      return 4;
  }
}

/** A short human name of a workload, for progress lines and reports. */
export function workloadLabel(w: Workload): string {
  switch (w.kind) {
    case 'prefill':
      return `prefill sweep (L = ${w.lengths.join(', ')})`;
    case 'decode':
      return `decode sweep (depth = ${w.depths.join(', ')}${w.batch > 1 ? `, batch ${w.batch}` : ''})`;
    case 'kernels':
      return 'kernel suite';
    case 'capacity':
      return `capacity probe (${w.poolMiB} MiB KV pool, pages of ${w.pageSize})`;
    case 'spec':
      return `speculative decoding (verify k = ${w.verifyKs.join(', ')}; ${w.drafters.length > 0 ? `${w.drafters.join(', ')} at K = ${w.k}${w.adaptiveK ? ' (adaptive)' : ''}` : 'no drafters'})`;
    case 'formats':
      return `weight formats (${w.formats.join(', ')}: prefill L = ${w.length}, decode at depth ${w.depth}${w.quality ? ', error by slice' : ''})`;
    case 'fusion':
      return `fused against unfused graph (prefill L = ${w.length}, decode at depth ${w.depth})`;
    case 'serve':
      return `load test (${w.sweep > 0 ? `rate sweep of ${w.sweep}` : w.mix === 'matrix' ? 'request-type matrix' : `${w.batching.join(' vs ')} batching${w.prefixCache.length > 1 ? ', prefix cache off vs on' : w.prefixCache[0] ? ', prefix cache' : ''}`}; ${w.trace ? `an imported trace of ${w.trace.length}` : w.requests} requests)`;
  }
}
