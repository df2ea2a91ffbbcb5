import { z } from 'zod';
import { GEMV_LIMITS, MAX_DECODE_BATCH } from '../../kernels/limits.ts';
import { fixed, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { count, nonNegative } from '../fields.ts';
import {
  type CommonOptions,
  decodePrompt,
  depth,
  MAX_TIMED_PASSES,
  NO_NEEDS,
  repetitions,
  type WorkloadDescriptor,
} from '../workload.ts';

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

export const BatchScalingPointSchema = z
  .object({
    batch: count,
    /** Median decode step, ms (the point's placing clock). */
    stepMs: nonNegative,
    tokensPerSec: nonNegative,
    /** max(FLOPs ÷ FMA peak, bytes ÷ copy bandwidth) + the measured submit overhead, ms. */
    boundMs: nonNegative,
    ratio: nonNegative,
  })
  .strict();

export type BatchScalingPoint = z.infer<typeof BatchScalingPointSchema>;

export function batchScalingTable(points: readonly BatchScalingPoint[]): string[] {
  return [
    '**B-scaling** (one decode step of B sequences; bound = max(FLOPs ÷ FMA peak, bytes ÷ copy bandwidth) + submit overhead)',
    '',
    markdownRow(['B', 'step ms', 'tokens/s', 'bound ms', 'step ÷ bound']),
    markdownDelimiter('rrrrr'),
    ...points.map((p) =>
      markdownRow([
        String(p.batch),
        fixed(p.stepMs, 2),
        fixed(p.tokensPerSec, 1),
        fixed(p.boundMs, 2),
        fixed(p.ratio, 2),
      ]),
    ),
  ];
}

type DecodeWorkload = z.infer<typeof DecodeWorkloadSchema>;

/** The B-scaling sweep (`--suite batch`): one decode step of B sequences, for each B. */
export const BATCH_SIZES = [1, 2, 4, 8, 16, 32] as const;

const BATCH_SUITE = { prefill: [], depths: [8], gen: 8, reps: 3 } as const;

/** Context tokens a decode point reaches at its deepest: its prompt, then gen − 1 decode steps. */
export function decodeContext(w: DecodeWorkload, depth: number): number {
  return decodePrompt(depth) + w.gen - 1;
}

const section = {
  /** The B-scaling sweep (`--suite batch`): one decode step of B sequences against its roofline bound. */
  batchScaling: z.array(BatchScalingPointSchema).optional(),
};

/** The decode sweep: its points are the run's generic points; the batch suite's several batch sizes make the B-scaling section. */
export const decode = {
  kind: 'decode',
  settings: DecodeWorkloadSchema,
  unitName: 'points',
  units: (w) => w.depths.length,
  label: (w) => `decode sweep (depth = ${w.depths.join(', ')}${w.batch > 1 ? `, batch ${w.batch}` : ''})`,
  unfit: (w, maxSeqLen) =>
    w.depths
      .filter((d) => decodeContext(w, d) > maxSeqLen)
      .map((d) => ({
        kind: w.kind,
        option: 'depths',
        value: d,
        message: `depth ${d} + ${w.gen} generated tokens exceeds the model's maxSeqLen of ${maxSeqLen}`,
      })),
  fit: (w, maxSeqLen) => {
    const depths = w.depths.filter((d) => decodeContext(w, d) <= maxSeqLen);
    return depths.length > 0 ? { ...w, depths } : null;
  },
  modelErrors: () => [],
  needs: (w) => {
    const deepest = Math.max(...w.depths.map((d) => decodeContext(w, d)));
    return {
      ...NO_NEEDS,
      model: true,
      kernels: true,
      maxPrompt: Math.max(...w.depths.map(decodePrompt)),
      maxSequences: w.batch,
      maxBatch: w.batch,
      gemvBatches: [Math.min(GEMV_LIMITS.maxBatch, w.batch)],
      maxContextTokens: w.batch * deepest,
      decodeContext: deepest,
    };
  },
  section,
  suite: {
    name: 'batch' as const,
    help: `the B-scaling sweep: one decode step of B = ${BATCH_SIZES.join(', ')} sequences against its roofline bound`,
    /** A decode step of B = 1…32 sequences, 8-token prompts, 8 tokens each. */
    defaults: BATCH_SUITE,
    weightList: false,
    // One decode workload per batch size, at one shallow depth: the step cost against B.
    build: (o: CommonOptions & { profile: boolean }): DecodeWorkload[] =>
      BATCH_SIZES.map((batch) => ({
        kind: 'decode',
        depths: o.depths ?? [...BATCH_SUITE.depths],
        gen: o.gen ?? BATCH_SUITE.gen,
        batch,
        reps: o.reps,
        warmup: o.warmup,
        profile: o.profile,
      })),
  },
  report: (s) => (s.batchScaling && s.batchScaling.length > 0 ? [batchScalingTable(s.batchScaling)] : []),
} satisfies WorkloadDescriptor<DecodeWorkload, typeof section>;
