import type { BenchResult, Target } from '../results/schema.ts';
import type { ServeResult, ServeRun } from '../spec/workloads/serve-result.ts';
import { SERVE_DEFAULTS } from '../spec/workloads/serve-settings.ts';

/** What every serve figure is timed with. */
export const SERVE_CLOCK =
  'wall: performance.now() in the engine worker; a token is stamped when the readback of the step that produced it returns (each step is one submit of decode rows and prompt chunks)';

export const SERVE_DEFINITIONS =
  "vLLM's: queue = admission − arrival; TTFT = first token − arrival; TPOT = (E2E − TTFT) ÷ (output tokens − 1); ITL = every gap between consecutive tokens; E2E = finish − arrival; goodput = finished requests meeting every SLO given ÷ duration; percentiles by linear interpolation between closest ranks (numpy's default). Only finished requests count in latencies.";

/** The serve section: the arms as the workload emitted them, and the rate sweep read off the swept arms. */
export function serveResult(runs: readonly ServeRun[]): ServeResult {
  const swept = runs.filter((r) => r.experiment === 'sweep');
  const attainment = SERVE_DEFAULTS.sloAttainment;
  const points = swept.map((r) => {
    const s = r.summary;
    const offered =
      r.arrival.kind === 'poisson' && r.arrival.rateRps !== undefined ? r.arrival.rateRps : s.requestsPerSec;
    return {
      label: r.label,
      rateRps: offered,
      requestsPerSec: s.requestsPerSec,
      goodputRps: s.goodputRps,
      p95TtftMs: s.ttftMs?.p95 ?? null,
      // Without an SLO every finished request would count as meeting it: no rate is said to meet one.
      meetsSlo: hasSlo(r) && s.completed > 0 && s.goodputRps >= attainment * s.requestsPerSec,
    };
  });
  const meeting = points.filter((p) => p.meetsSlo).map((p) => p.rateRps);
  return {
    runs: [...runs],
    sweep:
      points.length > 0
        ? { points, attainment, maxRateMeetingSlo: meeting.length > 0 ? Math.max(...meeting) : null }
        : null,
    clock: SERVE_CLOCK,
    definitions: SERVE_DEFINITIONS,
  };
}

function hasSlo(r: ServeRun): boolean {
  return r.slo.ttftMs !== undefined || r.slo.tpotMs !== undefined || r.slo.e2elMs !== undefined;
}

/** One arm of the load test: every request's timeline and the aggregates; nothing to place. */
export interface ServeRunRecord {
  type: 'serveRun';
  run: ServeRun;
}

/** Targets on the load test section, judged against this run's own figures. */
export function serveTargets(r: Omit<BenchResult, 'targets'>): Target[] {
  const out: Target[] = [];
  const ab = r.serve?.runs.filter((x) => x.experiment === 'ab') ?? [];
  const cont = ab.find((x) => x.batching === 'continuous' && !x.prefixCache);
  const stat = ab.find((x) => x.batching === 'static' && !x.prefixCache);
  if (cont && stat) {
    const ratio =
      stat.summary.outputTokensPerSec > 0
        ? cont.summary.outputTokensPerSec / stat.summary.outputTokensPerSec
        : 0;
    out.push({
      name: 'continuous against static batching, output tokens/s',
      target: '≥ 2× (the issue sets it on ci-tiny, default mix near saturation)',
      reached: `${ratio.toFixed(2)}× (${cont.summary.outputTokensPerSec.toFixed(1)} against ${stat.summary.outputTokensPerSec.toFixed(1)})`,
      met: ratio >= 2,
    });
    const c = cont.byClass.short?.ttftMs?.p95;
    const st = stat.byClass.short?.ttftMs?.p95;
    if (c !== undefined && st !== undefined) {
      out.push({
        name: 'continuous against static batching, short requests’ p95 TTFT',
        target: 'lower under continuous batching',
        reached: `${c.toFixed(0)} against ${st.toFixed(0)} ms`,
        met: c < st,
      });
    }
  }
  for (const batching of ['continuous', 'static'] as const) {
    const on = ab.find((x) => x.batching === batching && x.prefixCache);
    const off = ab.find((x) => x.batching === batching && !x.prefixCache);
    if (!on || !off || off.summary.prefillTokensComputed === 0) continue;
    // The share of prompt tokens that are a shared prefix, from the trace's own records.
    const prompt = off.requests.reduce((n, q) => n + q.promptTokens, 0);
    const shared = off.requests.reduce((n, q) => n + (q.prefixTokens ?? 0), 0) / Math.max(1, prompt);
    if (shared === 0) continue;
    const drop = 1 - on.summary.prefillTokensComputed / off.summary.prefillTokensComputed;
    const tOn = on.summary.ttftMs?.mean ?? 0;
    const tOff = off.summary.ttftMs?.mean ?? 0;
    out.push({
      name: `prefix cache on against off (${batching}), prefill tokens computed and mean TTFT`,
      target:
        '≥ 80% fewer prefill tokens, and a lower mean TTFT (the issue sets it on prompts 90% a shared prefix)',
      reached: `prompts ${(shared * 100).toFixed(1)}% shared prefix: ${(drop * 100).toFixed(1)}% fewer (${on.summary.prefillTokensComputed} against ${off.summary.prefillTokensComputed}); mean TTFT ${tOn.toFixed(0)} against ${tOff.toFixed(0)} ms`,
      met: drop >= 0.8 && tOn < tOff,
    });
  }
  return out;
}
