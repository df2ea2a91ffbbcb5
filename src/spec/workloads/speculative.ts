import { z } from 'zod';
import { GEMV_LIMITS } from '../../kernels/limits.ts';
import { type ModelConfig, PRESETS, presetConfig } from '../../model/config.ts';
import { DrafterTextSchema, MAX_DRAFT, parseDrafterSpec } from '../drafter.ts';
import {
  type CommonOptions,
  decodePrompt,
  depth,
  length,
  NO_NEEDS,
  repetitions,
  type Unfit,
  type WorkloadDescriptor,
} from '../workload.ts';
import { speculativeTables } from './speculative-report.ts';
import { SpecResultSchema } from './speculative-result.ts';

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
    /** Seeds the oracle's corruption and the prompts, and the draws under sampling. */
    seed: z.number().int().nonnegative(),
    /**
     * Speculative sampling at this temperature (top-k and top-p off): the baseline samples too,
     * and the check is no longer "identical to greedy" (a sampled text is one draw) but the
     * acceptance rule itself (src/speculative/accept.ts, tested over many seeds). Absent: greedy.
     */
    temperature: z.number().gt(0).max(10).optional(),
  })
  .strict();

/** The speculative suite's own defaults: a curve up to the largest draft, and one drafter of each real kind plus the calibration one. */
export const SPECULATIVE_DEFAULTS = {
  verifyKs: [1, 2, 4, 8, 16],
  drafters: ['ngram', 'oracle:0.8', 'truncated:1'],
  draftK: 4,
  promptTokens: 64,
  prompts: 1,
} as const;

/** The verify-K curve at depth 64, then the drafters over 64 tokens per prompt. */
const SPEC_SUITE = { prefill: [], depths: [64], gen: 64, reps: 5 } as const;

type SpecWorkload = z.infer<typeof SpecWorkloadSchema>;

/** Context a verify-curve point reaches: the depth (at least one token), then the largest verify. */
export function specCurveContext(w: SpecWorkload, depth: number): number {
  return decodePrompt(depth) + Math.max(...w.verifyKs);
}

/** Context a speculative run reaches at most: prompt, generated tokens, and one verify's overshoot. */
export function specRunContext(w: SpecWorkload): number {
  return w.promptTokens + w.gen + w.k + 1;
}

/**
 * Drafters a model cannot use, each with the cause: a draft preset whose vocabulary differs from the
 * target's, an unknown preset, or a truncation that keeps all of the target's layers or more.
 */
function modelErrors(w: SpecWorkload, config: ModelConfig): string[] {
  const out: string[] = [];
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
  return out;
}

function unfit(w: SpecWorkload, maxSeqLen: number): Unfit[] {
  return [
    ...w.depths
      .filter((d) => specCurveContext(w, d) > maxSeqLen)
      .map(
        (d): Unfit => ({
          kind: w.kind,
          option: 'depths',
          value: d,
          message: `depth ${d} + a verify of ${Math.max(...w.verifyKs)} tokens exceeds the model's maxSeqLen of ${maxSeqLen}`,
        }),
      ),
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
}

const section = {
  /**
   * Speculative decoding. The issue called these fields spec.verifyCurve and spec.runs, but
   * `spec` has been the run's own spec since schema v2, so they live here.
   */
  speculative: SpecResultSchema.optional(),
};

/** Speculative decoding: one sequence at a time (the curve's, then each prompt's), prompts through prefill. */
export const speculative = {
  kind: 'spec',
  settings: SpecWorkloadSchema,
  unitName: 'runs',
  // The curve's depths, then one run per prompt class for the baseline and each drafter.
  units: (w) => w.depths.length + w.classes.length * (1 + w.drafters.length),
  label: (w) =>
    `speculative ${w.temperature ? `sampling at temperature ${w.temperature}` : 'decoding'} (verify k = ${w.verifyKs.join(', ')}; ${w.drafters.length > 0 ? `${w.drafters.join(', ')} at K = ${w.k}${w.adaptiveK ? ' (adaptive)' : ''}` : 'no drafters'})`,
  unfit,
  fit: (w, maxSeqLen) => {
    const depths = w.depths.filter((d) => specCurveContext(w, d) <= maxSeqLen);
    return depths.length > 0 && specRunContext(w) <= maxSeqLen ? { ...w, depths } : null;
  },
  modelErrors: modelErrors,
  needs: (w) => ({
    ...NO_NEEDS,
    model: true,
    kernels: true,
    // Plain decode is one row; a verify of K drafts is K+1 rows, in chunks of at most GEMV_LIMITS.maxBatch.
    gemvBatches: w.drafters.length > 0 ? [Math.min(GEMV_LIMITS.maxBatch, w.k + 1)] : [],
    maxPrompt: Math.max(w.promptTokens, ...w.depths.map(decodePrompt)),
    maxSequences: 1,
    maxBatch: 1,
    maxContextTokens: Math.max(specRunContext(w), ...w.depths.map((d) => specCurveContext(w, d))),
  }),
  section,
  suite: {
    name: 'spec' as const,
    help: `speculative decoding: the verify-K curve (k=${SPECULATIVE_DEFAULTS.verifyKs.join(',')}) at depth ${SPEC_SUITE.depths.join(',')}, then each drafter at K=${SPECULATIVE_DEFAULTS.draftK} on repetitive and random prompts of ${SPECULATIVE_DEFAULTS.promptTokens} tokens, ${SPEC_SUITE.gen} tokens each, against plain greedy decode of the same prompts (--depth: the curve's depths, --gen: tokens per prompt, --prefill N: prompt tokens). On a trained model (trained-4m) the prompts are its held-out slices' cases, one class per slice: acceptance by slice`,
    /** The verify-K curve at depth 64, then three drafters at K = 4 over 64 tokens per prompt. */
    defaults: SPEC_SUITE,
    weightList: false,
    // --depth and --gen mean the curve's depths and the tokens per prompt here.
    build: (
      o: CommonOptions & {
        verifyKs?: number[];
        drafters?: string[];
        k: number;
        adaptiveK: boolean;
        temperature?: number;
      },
    ): SpecWorkload[] => [
      {
        kind: 'spec',
        verifyKs: o.verifyKs ?? [...SPECULATIVE_DEFAULTS.verifyKs],
        depths: o.depths ?? [...SPEC_SUITE.depths],
        drafters: o.drafters ?? [...SPECULATIVE_DEFAULTS.drafters],
        k: o.k,
        adaptiveK: o.adaptiveK,
        gen: o.gen ?? SPEC_SUITE.gen,
        // --prefill N: the speculative runs' prompt length (a trained model's recall slices need
        // their whole passkey question in it).
        promptTokens: o.prefill?.[0] ?? SPECULATIVE_DEFAULTS.promptTokens,
        prompts: SPECULATIVE_DEFAULTS.prompts,
        classes: [...SPEC_PROMPT_CLASSES],
        reps: o.reps,
        warmup: o.warmup,
        seed: 0,
        ...(o.temperature ? { temperature: o.temperature } : {}),
      },
    ],
  },
  report: (s) => (s.speculative ? [speculativeTables(s.speculative)] : []),
} satisfies WorkloadDescriptor<SpecWorkload, typeof section>;
