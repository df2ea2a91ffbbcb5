import { z } from 'zod';
import {
  type CommonOptions,
  NO_NEEDS,
  NO_SECTION,
  repetitions,
  type WorkloadDescriptor,
} from '../workload.ts';

/** Each kernel alone at the model's own shapes, checked against the CPU reference, then timed. */
export const KernelsWorkloadSchema = z
  .object({
    kind: z.literal('kernels'),
    ...repetitions,
  })
  .strict();

type KernelsWorkload = z.infer<typeof KernelsWorkloadSchema>;

/**
 * The kernel suite: needs the model's shapes, not the model. Its kernel points are the run's generic
 * `kernelPoints` (placed as they land, so the page draws them live), so it writes no section of its own.
 */
export const kernels = {
  kind: 'kernels',
  settings: KernelsWorkloadSchema,
  unitName: 'kernels',
  // The suite counts its cases once it has built them.
  units: () => 0,
  label: () => 'kernel suite',
  unfit: () => [],
  fit: (w) => w,
  modelErrors: () => [],
  needs: () => ({ ...NO_NEEDS, kernels: true }),
  section: NO_SECTION,
  suite: {
    name: 'kernels' as const,
    help: "the kernel suite, each kernel alone at the model's shapes (matmul, GEMV, attention, element-wise), validated then timed",
    defaults: { prefill: [], depths: [], gen: 16, reps: 3 },
    weightList: false,
    build: (o: CommonOptions): KernelsWorkload[] => [{ kind: 'kernels', reps: o.reps, warmup: o.warmup }],
  },
  report: () => [],
} satisfies WorkloadDescriptor<KernelsWorkload, typeof NO_SECTION>;
