import { z } from 'zod';
import { KV_DTYPES } from '../../kv/format.ts';
import { escapeMarkdown, fixed, formatMs, MISSING, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { PRESETS } from '../../model/config.ts';
import { type RunWeightFormat, WEIGHT_FORMATS } from '../../weight-format.ts';
import { nonNegative } from '../fields.ts';
import {
  type CommonOptions,
  depth,
  length,
  MAX_TIMED_PASSES,
  pointNeeds,
  pointUnfit,
  repetitions,
  type WorkloadDescriptor,
} from '../workload.ts';

/** Quality slices of the format sweep: where quantization error is measured against f32. */
export const QUALITY_SLICES = ['short', 'long', 'repeated', 'rare', 'long-decode'] as const;
export type QualitySlice = (typeof QUALITY_SLICES)[number];

/**
 * One format's error on one slice of inputs, against the f32 model on the same inputs: over the
 * slice's next-token distributions (each prompt's prefill, then its decode steps fed f32's greedy
 * tokens, so both models always see the same context).
 */
export const QualitySchema = z
  .object({
    format: z.enum(WEIGHT_FORMATS),
    slice: z.enum(QUALITY_SLICES),
    /** Normwise relative error of the logits, ‖format − f32‖₂ / ‖f32‖₂ over every distribution of the slice. */
    relErr: nonNegative,
    /** Share of the distributions whose argmax is f32's. */
    top1Agreement: z.number().min(0).max(1),
    /** Mean KL(f32 ‖ format) of the next-token distributions, nats. */
    klDiv: nonNegative,
    /** First generated token (0-based, over the slice's prompts in order) where greedy output leaves f32's; null: none within `steps`. */
    divergenceStep: z.number().int().nonnegative().nullable(),
    prompts: z.number().int().positive(),
    /** Distributions compared per prompt. */
    steps: z.number().int().positive(),
    /** Prompt lengths of the slice, tokens. */
    promptTokens: z.array(z.number().int().positive()).max(64),
  })
  .strict();

export type Quality = z.infer<typeof QualitySchema>;

/** KL(f32 ‖ format) over the positions a slice scores, as llama-perplexity --kl-divergence prints it. */
export const KldSchema = z
  .object({
    positions: z.number().int().nonnegative(),
    mean: nonNegative,
    median: nonNegative,
    /** 99th percentile, linear between ranks. */
    p99: nonNegative,
    max: nonNegative,
    /** Share of positions whose argmax is f32's ("Same top p"). */
    sameTop: z.number().min(0).max(1),
  })
  .strict();

/**
 * One format's task quality on one slice of a trained model's held-out set (train/corpus.py), the
 * seed's §05 way: the share right with its 95% Wilson interval, its change against f32 in points
 * ("degraded" past 5), and the KL divergence against f32 on the same positions.
 */
export const TaskQualitySchema = z
  .object({
    format: z.enum(WEIGHT_FORMATS),
    /**
     * The KV cache the variant ran with (`--suite kv`: its element type and window); absent: f32 KV,
     * full attention (the format sweep). The reference is f32 weights with that KV.
     */
    kv: z
      .object({ dtype: z.enum(KV_DTYPES), window: z.number().int().positive().nullable() })
      .strict()
      .optional(),
    slice: z.string().min(1).max(64),
    /** How the slice is scored: exact (the answer, token by token), recall (the same, a passkey), json (validity of a free greedy completion), text (next-token accuracy). */
    kind: z.enum(['exact', 'recall', 'json', 'text']),
    metric: z.enum(['exact match', 'valid JSON', 'next-token accuracy']),
    /** Cases scored (task slices), or tokens (text slices). */
    cases: z.number().int().positive(),
    score: z.number().min(0).max(1),
    /** 95% Wilson interval of the score. */
    score95: z.tuple([z.number().min(0).max(1), z.number().min(0).max(1)]),
    /** The JSON slice's exact match too (its answers are random keys and values: low by design). */
    exactMatch: z.number().min(0).max(1).optional(),
    /** Text slices: exp(mean negative log-likelihood) of the next token. */
    perplexity: nonNegative.optional(),
    /** score − the reference's score (f32; with `kv`, f32 KV and full attention), in points; null for the reference. */
    deltaPoints: z.number().nullable(),
    /** "degraded" when the score fell more than 5 points below the reference's; null for the reference. */
    verdict: z.enum(['degraded', 'acceptable']).nullable(),
    /** null for the reference. */
    kld: KldSchema.nullable(),
  })
  .strict();

export type TaskQuality = z.infer<typeof TaskQualitySchema>;

/** The format sweep's summary: one row per format, from its prefill and decode points in the same run. */
export const FormatSummarySchema = z
  .object({
    format: z.enum(WEIGHT_FORMATS),
    /** Bytes of the linear weights and LM head on the GPU (quants, scales, padding). */
    linearBytes: z.number().int().nonnegative(),
    /** Compulsory bytes of one decode step at the sweep's depth (cost model, scales included). */
    decodeBytesPerToken: nonNegative,
    tpotMs: nonNegative,
    tokensPerSec: nonNegative,
    /** TPOT over f32's TPOT in the same run; null without an f32 point. */
    tpotRatio: nonNegative.nullable(),
    prefillMs: nonNegative,
    prefillRatio: nonNegative.nullable(),
  })
  .strict();

export type FormatSummary = z.infer<typeof FormatSummarySchema>;

/** On a trained model: the held-out slices to score (`--task-slices`), by name; absent, every slice. */
export const TaskSlicesSchema = z
  .array(z.string().min(1).max(64))
  .min(1)
  .max(64)
  .refine((s) => new Set(s).size === s.length, { message: 'a slice is listed twice' });

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
    /**
     * On a trained model: the prompt tokens of each held-out slice a format is scored on, cases
     * taken in order until the next would pass it (at least one; a JSON case's free completion
     * counts its tokens too); 0 scores every case. Absent in files before the trained model.
     */
    taskTokens: z.number().int().min(0).max(1_000_000).optional(),
    taskSlices: TaskSlicesSchema.optional(),
    ...repetitions,
  })
  .strict();

/**
 * Prompt tokens per held-out slice a format is scored on by default: about a minute per format on
 * SwiftShader (13 slices; docs/trained-model.md), so the sample is small there; --task-tokens 0
 * scores all 200 cases of every slice.
 */
export const TASK_TOKENS_DEFAULT = 768;

/** Every format, a prefill of 64 and a decode at depth 64 of 16 tokens. */
export const FORMATS_SUITE = { prefill: [64], depths: [64], gen: 16, reps: 3 } as const;

type FormatsWorkload = z.infer<typeof FormatsWorkloadSchema>;

const section = {
  /** The format sweep (`--suite formats`): per format, bytes per decode token, TPOT and ratios to f32. */
  formats: z.array(FormatSummarySchema).optional(),
  /** Error by slice of each format against f32 on the same inputs (the format sweep). */
  quality: z.array(QualitySchema).optional(),
  /** A trained model's task quality by slice for each format (the format sweep on a preset with an evaluation set). */
  taskQuality: z.array(TaskQualitySchema).optional(),
};

/** The format sweep: each format builds its own model (one sequence at a time); the run's model validates. */
export const formats = {
  kind: 'formats',
  settings: FormatsWorkloadSchema,
  unitName: 'points',
  // A prefill and a decode point per format, and its quality slices.
  units: (w) => w.formats.length * 2 + (w.quality ? w.formats.length : 0),
  label: (w) =>
    `weight formats (${w.formats.join(', ')}: prefill L = ${w.length}, decode at depth ${w.depth}${w.quality ? ', error by slice' : ''})`,
  unfit: pointUnfit,
  fit: (w, maxSeqLen) => (pointUnfit(w, maxSeqLen).length === 0 ? w : null),
  modelErrors: () => [],
  needs: pointNeeds,
  section,
  suite: {
    name: 'formats' as const,
    help: `the format sweep: for f32, f16, int8 and int4 (or --weights LIST), a prefill of L=${FORMATS_SUITE.prefill[0]} and ${FORMATS_SUITE.gen} tokens at depth ${FORMATS_SUITE.depths[0]}, each format's TPOT against f32's, and its error against f32 by slice (--prefill, --depth: the one L and depth; --no-quality: time the formats only, no error by slice). On a trained model (trained-4m) the error by slice is its task quality on the held-out set, ${TASK_TOKENS_DEFAULT} prompt tokens per slice (--task-tokens N; 0: every case; --task-slices A,B: only those slices)`,
    /** Every format, a prefill of 64 and a decode at depth 64 of 16 tokens, and the error by slice. */
    defaults: FORMATS_SUITE,
    weightList: true,
    // --prefill and --depth name the one L and the one depth each format is timed at.
    build: (
      o: CommonOptions & {
        weights?: RunWeightFormat[];
        quality: boolean;
        taskTokens?: number;
        taskSlices?: string[];
      },
    ): FormatsWorkload[] => [
      {
        kind: 'formats',
        formats: o.weights ?? [...WEIGHT_FORMATS],
        length: o.prefill?.[0] ?? FORMATS_SUITE.prefill[0],
        depth: o.depths?.[0] ?? FORMATS_SUITE.depths[0],
        gen: o.gen ?? FORMATS_SUITE.gen,
        quality: o.quality,
        taskTokens: o.taskTokens ?? TASK_TOKENS_DEFAULT,
        ...(o.taskSlices && { taskSlices: o.taskSlices }),
        reps: o.reps,
        warmup: o.warmup,
      },
    ],
  },
  report: (s, run) => formatSections(s, run.preset),
} satisfies WorkloadDescriptor<FormatsWorkload, typeof section>;

/** Said wherever the error table is shown: what seeded weights can and cannot tell. */
export const QUALITY_CAVEAT =
  'Seeded random weights measure numerical error, not task quality; a loaded real model measures both.';

/** What each error column means, in the words the report and the page use. */
export const QUALITY_DEFINITIONS =
  'Each slice compares next-token distributions with f32 on the same inputs: every prompt’s prefill, then decode steps fed f32’s greedy tokens. rel err = ‖logits − f32‖₂ ÷ ‖f32‖₂ over the slice; top-1 = share of distributions with f32’s argmax; KL = mean KL(f32 ‖ format), nats; diverges at = the first generated token (0-based) where greedy output leaves f32’s, – if none.';

const MiB = 2 ** 20;

export function formatsTable(rows: readonly FormatSummary[]): string[] {
  return [
    '**Weight formats** (same preset, same run; TPOT and prefill are wall-clock medians; bytes per token from the cost model, scales included)',
    '',
    markdownRow([
      'format',
      'linear weights MiB',
      'bytes / decode token',
      'TPOT ms',
      'tokens/s',
      'TPOT ÷ f32',
      'prefill ms',
      'prefill ÷ f32',
    ]),
    markdownDelimiter('lrrrrrrr'),
    ...rows.map((f) =>
      markdownRow([
        f.format,
        fixed(f.linearBytes / MiB, 2),
        `${fixed(f.decodeBytesPerToken / MiB, 2)} MiB`,
        formatMs(f.tpotMs),
        fixed(f.tokensPerSec, 1),
        f.tpotRatio === null ? MISSING : fixed(f.tpotRatio, 2),
        formatMs(f.prefillMs),
        f.prefillRatio === null ? MISSING : fixed(f.prefillRatio, 2),
      ]),
    ),
  ];
}

/** Whether the run's weights were seeded random ones (a preset) or a loaded model's. */
export function qualitySource(preset: string): string {
  return preset in PRESETS ? 'this run: seeded random weights' : 'this run: a loaded model';
}

export function qualityTable(rows: readonly Quality[], preset: string): string[] {
  return [
    `**Error against f32, by slice** (${qualitySource(preset)}). ${QUALITY_CAVEAT}`,
    '',
    markdownRow([
      'format',
      'slice',
      'prompts × steps',
      'prompt tokens',
      'rel err',
      'top-1',
      'KL',
      'diverges at',
    ]),
    markdownDelimiter('llrrrrrr'),
    ...rows.map((q) =>
      markdownRow([
        q.format,
        q.slice,
        `${q.prompts} × ${q.steps}`,
        q.promptTokens.join(', '),
        q.relErr.toExponential(2),
        `${fixed(q.top1Agreement * 100, 1)}%`,
        q.klDiv.toExponential(2),
        q.divergenceStep === null ? MISSING : String(q.divergenceStep),
      ]),
    ),
    '',
    escapeMarkdown(QUALITY_DEFINITIONS),
  ];
}

/** What the task table's columns mean. */
export const TASK_QUALITY_DEFINITIONS =
  'score: exact match (every answer token and the newline after it are the greedy choice), valid JSON (a free greedy completion closes the object), or next-token accuracy (text), with its 95% Wilson interval; Δ = score − the reference’s (f32; in the kv suite, f32 KV with full attention), points, degraded past −5; KLD = KL(reference ‖ variant) over the positions the slice scores (the answer’s tokens, or every text token), nats, mean, median and 99th percentile; same top = share of those positions with the reference’s argmax.';

const pct = (x: number) => `${fixed(x * 100, 1)}%`;

/** A task row's variant in words: its weight format, or (the kv suite) its KV type and window. */
export function taskVariant(q: TaskQuality): string {
  if (!q.kv) return q.format;
  const kv = `KV ${q.kv.dtype}, ${q.kv.window === null ? 'full attention' : `window ${q.kv.window}`}`;
  return q.format === 'f32' ? kv : `${q.format}, ${kv}`;
}

/** The task table's variant column, reference and Δ heading: formats against f32, or KV caches against f32 KV. */
export function taskTableTerms(rows: readonly TaskQuality[]) {
  const kv = rows.some((r) => r.kv);
  return {
    variant: kv ? 'KV cache' : 'format',
    reference: kv ? 'f32 KV with full attention' : 'f32',
    delta: kv ? 'Δ ref' : 'Δ f32',
  };
}

export function taskQualityTable(rows: readonly TaskQuality[], preset: string): string[] {
  const order = [...new Set(rows.map((r) => r.slice))];
  const sorted = [...rows].sort((a, b) => order.indexOf(a.slice) - order.indexOf(b.slice));
  const terms = taskTableTerms(rows);
  return [
    `**Task quality by slice** (${preset}: a model trained here, scored on its held-out set, split off before training; ${terms.reference} is the reference)`,
    '',
    markdownRow([
      'slice',
      'metric',
      terms.variant,
      'cases',
      'score',
      '95% interval',
      terms.delta,
      'verdict',
      'ppl',
      'KLD mean',
      'KLD median',
      'KLD 99%',
      'same top',
    ]),
    markdownDelimiter('lllrrrrlrrrrr'),
    ...sorted.map((q) =>
      markdownRow([
        q.slice,
        q.metric + (q.exactMatch !== undefined ? ` (exact ${pct(q.exactMatch)})` : ''),
        taskVariant(q),
        String(q.cases) + (q.kind === 'text' ? ' tokens' : ''),
        pct(q.score),
        `${pct(q.score95[0])}–${pct(q.score95[1])}`,
        q.deltaPoints === null ? MISSING : `${q.deltaPoints >= 0 ? '+' : ''}${fixed(q.deltaPoints, 1)}`,
        q.verdict ?? MISSING,
        q.perplexity === undefined ? MISSING : fixed(q.perplexity, 2),
        q.kld ? q.kld.mean.toExponential(2) : MISSING,
        q.kld ? q.kld.median.toExponential(2) : MISSING,
        q.kld ? q.kld.p99.toExponential(2) : MISSING,
        q.kld ? pct(q.kld.sameTop) : MISSING,
      ]),
    ),
    '',
    escapeMarkdown(TASK_QUALITY_DEFINITIONS),
  ];
}

/** The format sweep's sections of the Markdown report. */
export function formatSections(
  s: {
    formats?: readonly FormatSummary[];
    quality?: readonly Quality[];
    taskQuality?: readonly TaskQuality[];
  },
  preset: string,
): string[][] {
  const out: string[][] = [];
  if (s.formats && s.formats.length > 0) out.push(formatsTable(s.formats));
  if (s.quality && s.quality.length > 0) out.push(qualityTable(s.quality, preset));
  if (s.taskQuality && s.taskQuality.length > 0) out.push(taskQualityTable(s.taskQuality, preset));
  return out;
}
