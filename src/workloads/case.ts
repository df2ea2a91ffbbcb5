import type { Target } from '../results/schema.ts';
import { caseArms, caseFigures } from '../spec/workloads/serve-case-report.ts';
import type { ServeWorkload } from '../spec/workloads/serve-settings.ts';
import { serveLoad } from './serve.ts';
import { type ServeRunRecord, serveResult } from './serve-section.ts';
import type { WorkloadEngine } from './workload.ts';

/**
 * The case study on the real engine: the load test's arms with the case's traffic and remedies
 * (serve.ts, mix 'case'), its records those of the load test, its section their result.
 */
export const caseEngine: WorkloadEngine<'case', ServeRunRecord> = {
  run: (ctx, c) => {
    const w: ServeWorkload = {
      kind: 'serve',
      arrival: { kind: 'poisson', rateRps: null, burstiness: 1 },
      requests: c.requests,
      durationS: null,
      mix: 'case',
      prefixTokens: 0,
      prefixShare: 0,
      priorityShare: 0,
      policy: 'fcfs',
      slo: c.slo,
      batching: ['continuous'],
      prefixCache: [false],
      tokenBudget: c.tokenBudget,
      maxBatch: c.maxBatch,
      pageSize: c.pageSize,
      kvTokens: null,
      sweep: 0,
      solo: c.solo,
      seed: c.seed,
      trace: null,
      sessions: null,
      kvBudget: null,
      pools: null,
    };
    return serveLoad(ctx, w);
  },
  describe: (r) => `case study: ${r.run.label} done`,
  collect: (records) => (records.length > 0 ? { caseStudy: serveResult(records.map((r) => r.run)) } : {}),
  targets: caseTargets,
};

/** The targets on the case: the incident's factor, each remedy's direction, the combination. */
function caseTargets(result: {
  caseStudy?: { runs: import('../spec/workloads/serve-result.ts').ServeRun[] };
}): Target[] {
  const runs = caseArms(result.caseStudy?.runs ?? []);
  const by = (role: string) => runs.find((r) => r.caseRole === role);
  const base = by('baseline');
  const inc = by('incident');
  if (!base || !inc) return [];
  const b = caseFigures(base).shortTtftP99;
  const i = caseFigures(inc).shortTtftP99;
  if (b === null || i === null || b <= 0) return [];
  const out: Target[] = [
    {
      name: 'case study: the incident multiplies the short requests’ TTFT p99',
      target: '≥ 2× the baseline’s',
      reached: `×${(i / b).toFixed(2)} (${i.toFixed(0)} against ${b.toFixed(0)} ms)`,
      met: i >= 2 * b,
    },
  ];
  for (const role of ['routing', 'prefix-cache', 'capacity', 'kv-budget'] as const) {
    const r = by(role);
    const v = r ? caseFigures(r).shortTtftP99 : null;
    if (!r || v === null) continue;
    out.push({
      name: `case study: ${r.label}, short TTFT p99`,
      target: 'lower than the incident’s (the direction the seed reports)',
      reached: `${v.toFixed(0)} against ${i.toFixed(0)} ms`,
      met: v < i,
    });
  }
  const all = by('all');
  const a = all ? caseFigures(all).shortTtftP99 : null;
  if (all && a !== null) {
    out.push({
      name: 'case study: all four remedies, short TTFT p99 against the baseline',
      target: '≤ 1.5× the baseline’s',
      reached: `×${(a / b).toFixed(2)} (${a.toFixed(0)} against ${b.toFixed(0)} ms)`,
      met: a <= 1.5 * b,
    });
  }
  return out;
}
