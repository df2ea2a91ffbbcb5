import { z } from 'zod';
import { length, NO_NEEDS, NO_SECTION, repetitions, type WorkloadDescriptor } from '../workload.ts';

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
type PrefillWorkload = z.infer<typeof PrefillWorkloadSchema>;

/** The prefill sweep: its points are the run's generic points, so it writes no section of its own. */
export const prefill = {
  kind: 'prefill',
  settings: PrefillWorkloadSchema,
  unitName: 'points',
  units: (w) => w.lengths.length,
  label: (w) => `prefill sweep (L = ${w.lengths.join(', ')})`,
  unfit: (w, maxSeqLen) =>
    w.lengths
      .filter((L) => L > maxSeqLen)
      .map((L) => ({
        kind: w.kind,
        option: 'prefill',
        value: L,
        message: `prompt length ${L} exceeds the model's maxSeqLen of ${maxSeqLen}`,
      })),
  fit: (w, maxSeqLen) => {
    const lengths = w.lengths.filter((L) => L <= maxSeqLen);
    return lengths.length > 0 ? { ...w, lengths } : null;
  },
  modelErrors: () => [],
  needs: (w) => ({
    ...NO_NEEDS,
    model: true,
    kernels: true,
    maxPrompt: Math.max(...w.lengths),
    maxSequences: 1,
    maxContextTokens: Math.max(...w.lengths),
    maxBatch: 1,
  }),
  section: NO_SECTION,
  suite: null,
  report: () => [],
} satisfies WorkloadDescriptor<PrefillWorkload, typeof NO_SECTION>;
