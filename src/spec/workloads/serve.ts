import { GEMV_LIMITS } from '../../kernels/limits.ts';
import { NO_NEEDS, type WorkloadDescriptor } from '../workload.ts';
import { resolveKvBudget } from './serve-kv-budget.ts';
import { splitCapacity } from './serve-pools.ts';
import { serveTables } from './serve-report.ts';
import { ServeResultSchema } from './serve-result.ts';
import { describeToolWait, sessionContextError, sessionShape } from './serve-sessions.ts';
import {
  SERVE_DEFAULTS,
  type ServeArrival,
  type ServeWorkload,
  ServeWorkloadSchema,
  type TraceRequest,
  traceContext,
} from './serve-settings.ts';

/** The flat options the load test reads (the CLI's flags and the page's fields). */
interface ServeOptions {
  rate?: number;
  concurrency?: number;
  burstiness: number;
  requests: number;
  durationS?: number;
  mix: ServeWorkload['mix'];
  prefixTokens: number;
  prefixShare: number;
  priorityShare: number;
  policy: ServeWorkload['policy'];
  slo: ServeWorkload['slo'];
  batching: 'continuous' | 'static' | 'both';
  prefixCache: 'on' | 'off' | 'both';
  tokenBudget: number;
  maxBatch: number;
  pageSize: number;
  kvTokens?: number;
  sweep: number;
  solo: boolean;
  trace?: TraceRequest[];
  sessions?: ServeWorkload['sessions'];
  kvBudget?: ServeWorkload['kvBudget'];
  pools?: ServeWorkload['pools'];
}

/** What sessions cannot run with, and a session the model's context cannot hold. */
function sessionErrors(w: ServeWorkload, maxSeqLen: number): string[] {
  const s = w.sessions;
  if (!s) return [];
  const errors: string[] = [];
  if (s.turns.max < s.turns.min) errors.push(`--turns ${s.turns.min}..${s.turns.max}: B must be ≥ A`);
  if (w.arrival.kind === 'concurrency')
    errors.push(
      '--sessions runs open loop (sessions start at --rate, or all at once): not with --concurrency',
    );
  if (w.trace)
    errors.push('--sessions generates its own trace: not with --trace (a trace file carries its sessions)');
  if (w.sweep > 0 || w.mix === 'matrix')
    errors.push('--sessions is its own traffic: not with --sweep or --mix matrix');
  const shape = sessionShape(maxSeqLen, s.count, s.turns, s.toolWait);
  const tooLong = sessionContextError(shape, w.prefixShare > 0 ? w.prefixTokens : 0, maxSeqLen);
  if (tooLong) errors.push(tooLong);
  return errors;
}

/** A per-request KV budget below one page of the pool the arms will have. */
function budgetErrors(w: ServeWorkload, maxSeqLen: number): string[] {
  if (!w.kvBudget) return [];
  const r = resolveKvBudget(w.kvBudget, w.kvTokens ?? w.maxBatch * maxSeqLen, w.pageSize);
  return typeof r === 'string' ? [r] : [];
}

/** Pools whose share of the pages, slots or step budget would be nothing. */
function poolErrors(w: ServeWorkload, maxSeqLen: number): string[] {
  if (!w.pools) return [];
  if (w.sweep > 0 || w.mix === 'matrix')
    return ['--pools splits one arm’s engine: not with --sweep or --mix matrix'];
  try {
    splitCapacity(w.pools, {
      pages: Math.floor((w.kvTokens ?? w.maxBatch * maxSeqLen) / w.pageSize),
      slots: w.maxBatch,
      tokenBudget: w.tokenBudget,
    });
    return [];
  } catch (e) {
    return [(e as Error).message];
  }
}

function arrival(o: ServeOptions): ServeArrival {
  if (o.concurrency !== undefined) return { kind: 'concurrency', concurrency: o.concurrency };
  if (o.rate === Number.POSITIVE_INFINITY) return { kind: 'all-at-once' };
  return { kind: 'poisson', rateRps: o.rate ?? null, burstiness: o.burstiness };
}

const section = {
  /** The load test (`--suite serve`): one run per experiment arm, every request's timeline kept. */
  serve: ServeResultSchema.optional(),
};

/**
 * The load test. Its arms build their own models (their own KV pools), so the run's model only
 * validates; its traffic's context is known before the model only for an imported trace.
 */
export const serve = {
  kind: 'serve',
  settings: ServeWorkloadSchema,
  unitName: 'requests',
  // Requests, summed over the arms: the workload reports its own count once it knows it.
  units: () => 0,
  label: (w) =>
    w.sessions
      ? `load test of agent sessions (${w.sessions.count} sessions of ${w.sessions.turns.min}…${w.sessions.turns.max} turns, tool wait ${describeToolWait(w.sessions.toolWait)}${w.prefixCache.length > 1 ? '; prefix cache off vs on' : w.prefixCache[0] ? '; prefix cache' : ''})`
      : `load test (${w.sweep > 0 ? `rate sweep of ${w.sweep}` : w.mix === 'matrix' ? 'request-type matrix' : `${w.batching.join(' vs ')} batching${w.prefixCache.length > 1 ? ', prefix cache off vs on' : w.prefixCache[0] ? ', prefix cache' : ''}`}; ${w.trace ? `an imported trace of ${w.trace.length}` : w.requests} requests)`,
  unfit: (w, maxSeqLen) => {
    const need = traceContext(w);
    return need > maxSeqLen
      ? [
          {
            kind: w.kind,
            option: 'trace',
            value: need,
            message: `a request of the trace needs ${need} tokens of context (prompt + output), past the model's maxSeqLen of ${maxSeqLen}`,
          },
        ]
      : [];
  },
  fit: (w) => w,
  modelErrors: (w, config) => [
    ...sessionErrors(w, config.maxSeqLen),
    ...budgetErrors(w, config.maxSeqLen),
    ...poolErrors(w, config.maxSeqLen),
  ],
  needs: (w) => ({
    ...NO_NEEDS,
    model: true,
    kernels: true,
    gemvBatches: [Math.min(GEMV_LIMITS.maxBatch, w.maxBatch)],
  }),
  section,
  suite: {
    name: 'serve' as const,
    help: `a load test: ${SERVE_DEFAULTS.requests} requests of the default mix (60% short Q&A, 25% long RAG prompts, 15% long generations) at 90% of the measured saturation rate, continuous against static batching, then each request alone`,
    /** Continuous against static batching on the default mix, near saturation. */
    defaults: { prefill: [], depths: [], gen: 16, reps: 3 },
    weightList: false,
    build: (o: ServeOptions): ServeWorkload[] => [
      {
        kind: 'serve',
        arrival: arrival(o),
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
        sessions: o.sessions ?? null,
        kvBudget: o.kvBudget ?? null,
        pools: o.pools ?? null,
      },
    ],
  },
  report: (s) => (s.serve ? [serveTables(s.serve)] : []),
} satisfies WorkloadDescriptor<ServeWorkload, typeof section>;
