import { z } from 'zod';
import { GEMV_LIMITS, MAX_DECODE_BATCH } from '../../kernels/limits.ts';
import { NO_NEEDS, type WorkloadDescriptor } from '../workload.ts';
import { CASE_DEFAULTS } from './serve-case.ts';
import { caseHttpTables, caseTables } from './serve-case-report.ts';
import { serveTables } from './serve-report.ts';
import { ServeResultSchema } from './serve-result.ts';
import { SERVE_DEFAULTS, SloSchema } from './serve-settings.ts';

/**
 * The case study (`--suite case`): the seed's case 8.1 replayed on the run's model
 * (serve-case.ts), each arm a load test on the real engine. Its section holds the arms as the load
 * test writes them, so every figure can be recomputed from their requests.
 */
export const CaseWorkloadSchema = z
  .object({
    kind: z.literal('case'),
    /** Requests per arm. */
    requests: z.number().int().min(8).max(1000),
    /** Goodput's SLOs; none given: a short request within twice the baseline's short TTFT p99. */
    slo: SloSchema,
    tokenBudget: z.number().int().min(2).max(8192),
    maxBatch: z.number().int().min(2).max(MAX_DECODE_BATCH),
    pageSize: z
      .number()
      .int()
      .refine((v) => [8, 16, 32].includes(v), { message: 'must be 8, 16 or 32' }),
    solo: z.boolean(),
    seed: z.number().int().nonnegative(),
  })
  .strict();
export type CaseWorkload = z.infer<typeof CaseWorkloadSchema>;

interface CaseOptions {
  requests: number;
  slo: CaseWorkload['slo'];
  tokenBudget: number;
  maxBatch: number;
  pageSize: number;
  solo: boolean;
}

const section = {
  /** The case study's arms (`--suite case`), in the load test's shape. */
  caseStudy: ServeResultSchema.optional(),
};

export const caseStudy = {
  kind: 'case',
  settings: CaseWorkloadSchema,
  unitName: 'requests',
  units: () => 0,
  label: (w) =>
    `case study (the seed's §8.1: baseline, incident, four remedies and all together; ${w.requests} requests an arm)`,
  unfit: () => [],
  fit: (w) => w,
  modelErrors: () => [],
  needs: (w) => ({
    ...NO_NEEDS,
    model: true,
    kernels: true,
    gemvBatches: [Math.min(GEMV_LIMITS.maxBatch, w.maxBatch)],
  }),
  section,
  suite: {
    name: 'case' as const,
    help: `the seed's case 8.1 on the run's model: short Q&A with a shared system prompt, then document summaries of most of the context (${CASE_DEFAULTS.longShare * 100}% of requests), the diagnosis from the incident's own figures, then each remedy (routing to a pool, the prefix cache, more capacity, a KV budget) alone and all together`,
    defaults: { prefill: [], depths: [], gen: 16, reps: 3 },
    weightList: false,
    build: (o: CaseOptions): CaseWorkload[] => [
      {
        kind: 'case',
        requests: o.requests,
        slo: o.slo,
        tokenBudget: o.tokenBudget,
        maxBatch: o.maxBatch,
        pageSize: o.pageSize,
        solo: o.solo,
        seed: 0,
      },
    ],
  },
  report: (s) =>
    s.caseStudy
      ? [
          [
            ...caseTables(s.caseStudy.runs),
            ...caseHttpTables(s.caseStudy.runs),
            '',
            ...serveTables(s.caseStudy),
          ],
        ]
      : [],
} satisfies WorkloadDescriptor<CaseWorkload, typeof section>;

/** The load test's defaults the case keeps. */
export const CASE_SERVE = { policy: SERVE_DEFAULTS.policy } as const;
