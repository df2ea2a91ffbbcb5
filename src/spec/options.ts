import { z } from 'zod';
import { SpecError } from '../errors.ts';
import { KV_DTYPES } from '../kv/format.ts';
import { PRESETS } from '../model/config.ts';
import { WEIGHT_FORMATS } from '../weight-format.ts';
import { GenerateSettingsSchema, PromptTextSchema } from './prompt.ts';
import { type BenchSpec, BenchSpecSchema } from './schema.ts';
import { ownSuite, SPEC_DEFAULTS, SUITE_NAMES, SUITES, type SuiteName } from './suites.ts';
import { depth, kvWindow, length, repetitions } from './workload.ts';
import { CapacityWorkloadSchema } from './workloads/capacity.ts';
import { DecodeWorkloadSchema } from './workloads/decode.ts';
import { FormatsWorkloadSchema, TASK_TOKENS_DEFAULT } from './workloads/formats.ts';
import { fusion } from './workloads/fusion.ts';
import { WORKLOADS, type Workload } from './workloads/index.ts';
import { KvWorkloadSchema } from './workloads/kv.ts';
import {
  SERVE_DEFAULTS,
  ServeWorkloadSchema,
  SloSchema,
  TraceRequestSchema,
} from './workloads/serve-settings.ts';
import { SpecWorkloadSchema } from './workloads/speculative.ts';
import { SUSTAINED_DEFAULTS, SustainedWorkloadSchema } from './workloads/sustained.ts';
import { TASKS_QUICK_TOKENS } from './workloads/tasks.ts';

/**
 * The suite where --kv-dtype and --window take lists (the KV matrix); the run's own model is then
 * f32 without a window, and each cell carries its own.
 */
const KV_SUITE = 'kv';

/**
 * The suites whose workloads take their prompts from a prompt text (see promptUnfit: the sweeps,
 * and the fused-against-unfused pair); the other workloads make their own prompts.
 */
const PROMPT_SUITES: readonly string[] = ['quick', 'full', 'custom', 'fusion'];

/** The suites where --weights takes a list, for the message that says where to go. */
const WEIGHT_LIST_SUITES = WORKLOADS.flatMap((d) => (d.suite?.weightList ? [d.suite.name] : [])).join(' or ');

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
    /** --kv-dtype: the KV element type, or (with --suite kv) the types to sweep. */
    kvDtype: z
      .array(z.enum(KV_DTYPES))
      .min(1)
      .max(KV_DTYPES.length)
      .refine((t) => new Set(t).size === t.length, { message: 'a KV type is listed twice' })
      .optional(),
    /** --window: the sliding window in tokens (null: full attention), or (with --suite kv) the windows to sweep. */
    window: z
      .array(kvWindow.nullable())
      .min(1)
      .max(16)
      .refine((w) => new Set(w).size === w.length, { message: 'a window is listed twice' })
      .optional(),
    /** --suite kv: the KV head counts of the variants. */
    kvHeads: KvWorkloadSchema.shape.kvHeads,
    batch: DecodeWorkloadSchema.shape.batch.default(SPEC_DEFAULTS.batch),
    profile: z.boolean().default(SPEC_DEFAULTS.profile),
    autotune: z.boolean().default(SPEC_DEFAULTS.autotune),
    /** --no-fuse: build the run's model on the unfused graph. */
    fuse: z.boolean().default(SPEC_DEFAULTS.fuse),
    /** --suite formats: measure the error by slice (--no-quality: time the formats only). */
    quality: z.boolean().default(true),
    /**
     * On a trained model: prompt tokens per slice of the held-out set each variant is scored on (0:
     * every case); absent, each suite's own default (the formats and kv suites' TASK_TOKENS_DEFAULT,
     * the quick suite's smaller sample).
     */
    taskTokens: FormatsWorkloadSchema.shape.taskTokens,
    /** On a trained model: the held-out slices to score, by name (absent: every slice). */
    taskSlices: FormatsWorkloadSchema.shape.taskSlices,
    /** --weights: one format, or (with --suite formats) the formats to sweep. */
    weights: z
      .array(z.enum(WEIGHT_FORMATS))
      .min(1)
      .max(WEIGHT_FORMATS.length)
      .refine((f) => new Set(f).size === f.length, { message: 'a format is listed twice' })
      .optional(),
    poolMiB: CapacityWorkloadSchema.shape.poolMiB.optional(),
    /** --suite spec: the drafters, the draft length K, adaptive K, and the curve's verify sizes. */
    drafters: SpecWorkloadSchema.shape.drafters.optional(),
    k: SpecWorkloadSchema.shape.k.default(SPEC_DEFAULTS.draftK),
    adaptiveK: z.boolean().default(false),
    verifyKs: SpecWorkloadSchema.shape.verifyKs.optional(),
    /** --temperature: speculative sampling at this temperature (absent or 0: greedy). */
    temperature: SpecWorkloadSchema.shape.temperature,
    /** --suite serve: traffic (rate in requests/s, Infinity: all at t = 0), scheduler and experiment. */
    rate: z.union([z.number().positive(), z.literal(Number.POSITIVE_INFINITY)]).optional(),
    concurrency: z.number().int().min(1).max(1024).optional(),
    burstiness: z.number().positive().max(1000).default(SERVE_DEFAULTS.burstiness),
    requests: ServeWorkloadSchema.shape.requests.default(SERVE_DEFAULTS.requests),
    /** --duration: the load test's arrival window, or the sustained suite's length. */
    durationS: z.number().positive().max(86_400).optional(),
    /** --suite sustained: --interval (the tok/s window) and --roofs-every, seconds. */
    windowS: SustainedWorkloadSchema.shape.windowS.optional(),
    roofEveryS: SustainedWorkloadSchema.shape.roofEveryS.optional(),
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
    /** --sessions N --turns A..B --tool-wait DIST: agent sessions instead of single requests. */
    sessions: ServeWorkloadSchema.shape.sessions.unwrap().optional(),
    /** --kv-budget TOKENS|P% --kv-budget-policy reject|truncate: the most KV one request may hold. */
    kvBudget: ServeWorkloadSchema.shape.kvBudget.unwrap().optional(),
    /** --pools NAME:SHARE,NAME:SHARE --route RULE: two pools on the one engine. */
    pools: ServeWorkloadSchema.shape.pools.unwrap().optional(),
    /** --prompt, --prompt-file: the text the sweeps' prompt tokens are cut from. */
    prompt: PromptTextSchema.optional(),
    /** The page's Prompt box: text generated on the run's model after its workloads. */
    generate: GenerateSettingsSchema.optional(),
  })
  .strict()
  .refine((o) => ownSuite(o.suite)?.weightList || (o.weights?.length ?? 1) === 1, {
    message: `several weight formats make a format sweep: add --suite ${WEIGHT_LIST_SUITES}, or give one format`,
    path: ['weights'],
  })
  .refine((o) => o.suite === KV_SUITE || (o.kvDtype?.length ?? 1) === 1, {
    message: `several KV types (--kv-dtype) make a sweep: add --suite ${KV_SUITE}, or give one type`,
    path: ['kvDtype'],
  })
  .refine((o) => o.suite === KV_SUITE || (o.window?.length ?? 1) === 1, {
    message: `several windows (--window) make a sweep: add --suite ${KV_SUITE}, or give one`,
    path: ['window'],
  })
  .refine((o) => o.suite === KV_SUITE || o.kvHeads === undefined, {
    message: '--kv-heads applies to --suite kv (the run itself keeps the model’s KV heads)',
    path: ['kvHeads'],
  })
  .refine((o) => o.suite !== KV_SUITE || (o.prefill?.length ?? 1) === 1, {
    message: 'the kv suite times one prefill length (--prefill L)',
    path: ['prefill'],
  })
  .refine(
    (o) =>
      o.suite !== 'sustained' ||
      (o.windowS ?? SUSTAINED_DEFAULTS.windowS) <= (o.durationS ?? SUSTAINED_DEFAULTS.durationS),
    {
      message: 'the tok/s window (--interval) must not be longer than the duration (--duration)',
      path: ['windowS'],
    },
  )
  .refine((o) => o.prompt === undefined || PROMPT_SUITES.includes(o.suite), {
    message: `a prompt text (--prompt, --prompt-file) feeds the prefill and decode sweeps: suites ${PROMPT_SUITES.join(', ')}`,
    path: ['prompt'],
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
  const own = ownSuite(o.suite);
  const custom = o.prefill !== undefined || o.depths !== undefined;
  const suite: SuiteName = own ? o.suite : custom ? 'custom' : o.suite;
  const base = SUITES[o.suite === 'custom' ? 'quick' : o.suite];
  const resolved = { ...o, reps: o.reps ?? base.reps };
  const workloads: Workload[] = own
    ? own.build(resolved)
    : combinedSuite(suite, resolved, hasHeldOutSet(model));
  const spec = BenchSpecSchema.safeParse({
    model,
    suite,
    kv: {
      mode: o.kvMode,
      pageSize: o.pageSize,
      dtype: o.suite === KV_SUITE ? 'f32' : (o.kvDtype?.[0] ?? SPEC_DEFAULTS.kvDtype),
      window: o.suite === KV_SUITE ? null : (o.window?.[0] ?? null),
    },
    autotune: o.autotune,
    fuse: o.fuse,
    weights: own?.weightList ? 'f32' : (o.weights?.[0] ?? 'f32'),
    workloads,
    ...(o.prompt ? { prompt: o.prompt } : {}),
    ...(o.generate ? { generate: o.generate } : {}),
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

type ResolvedOptions = z.output<typeof SpecOptionsSchema> & { reps: number };

/**
 * The suites of several workloads: the prefill sweep and the decode sweep over the suite's (or the
 * person's) values; the quick suite ends with the fused graph against the unfused one, at its
 * largest L and first depth.
 */
function combinedSuite(suite: SuiteName, o: ResolvedOptions, heldOut: boolean): Workload[] {
  const base = SUITES[suite === 'custom' ? 'quick' : (suite as 'quick' | 'full')];
  const lengths = o.prefill ?? [...base.prefill];
  const depths = o.depths ?? [...base.depths];
  const common = { reps: o.reps, warmup: o.warmup, profile: o.profile };
  const workloads: Workload[] = [];
  if (lengths.length > 0) workloads.push({ kind: 'prefill', lengths, ...common });
  if (depths.length > 0) {
    workloads.push({ kind: 'decode', depths, gen: o.gen ?? base.gen, batch: o.batch, ...common });
  }
  if (suite === 'quick') {
    const q = SUITES.quick;
    workloads.push(
      ...fusion.suite.build({
        prefill: [Math.max(...q.prefill)],
        depths: [q.depths[0]],
        gen: o.gen ?? q.gen,
        reps: o.reps,
        warmup: o.warmup,
      }),
    );
  }
  // A trained preset ends the suite with what it gets right on its held-out set: a small sample in
  // the quick suite (the page's first run) and a quick suite with typed values, the formats suite's
  // default sample in the full one.
  if (heldOut) {
    const sample = suite === 'full' ? TASK_TOKENS_DEFAULT : TASKS_QUICK_TOKENS;
    workloads.push({
      kind: 'tasks',
      taskTokens: o.taskTokens ?? sample,
      ...(o.taskSlices && { taskSlices: o.taskSlices }),
    });
  }
  return workloads;
}

/** Whether the model is a preset shipped with a held-out evaluation set (a model trained here). */
function hasHeldOutSet(model: unknown): boolean {
  if (typeof model !== 'object' || model === null) return false;
  const m = model as { kind?: unknown; preset?: unknown };
  if (m.kind !== 'preset' || typeof m.preset !== 'string' || !(m.preset in PRESETS)) return false;
  return 'evalFile' in PRESETS[m.preset as keyof typeof PRESETS];
}
