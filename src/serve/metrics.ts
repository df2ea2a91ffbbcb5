import { SpecError } from '../errors.ts';
import { mean, percentile } from '../stats.ts';
import { KV_BUDGET_ERROR } from './kv-budget.ts';

/**
 * Per-request records of a serve run reduced to the numbers vLLM's benchmark_serving reports, with
 * its names and definitions, so results can be read side by side with vLLM's:
 * - queue = admittedMs − arrivalMs (the first admission; a preempted request's later waits are in
 *   its TTFT or ITL, not here);
 * - TTFT = tokenTimesMs[0] − arrivalMs;
 * - E2E (vLLM's e2el) = finishMs − arrivalMs;
 * - TPOT = (E2E − TTFT) / (outputTokens − 1), per request, for requests with ≥ 2 output tokens
 *   (the others have no TPOT sample);
 * - ITL = every gap between consecutive token times, pooled over all requests (so long outputs
 *   weigh more than in TPOT, which is one sample per request).
 * Latencies are over finished requests only; failed and cancelled ones are counted, not timed.
 * Percentiles are `percentile` of measure/stats.ts: linear interpolation between closest ranks
 * (rank p/100 · (n − 1)), numpy's default and so what vLLM's np.percentile reports.
 */

export interface RequestRecord {
  id: number;
  class: string;
  priority: number;
  promptTokens: number;
  /** Tokens generated. */
  outputTokens: number;
  /** Prompt tokens whose KV came from the prefix cache (first admission). */
  prefixHitTokens: number;
  preemptions: number;
  /** Tokens prefilled again after preemptions (recompute), on top of promptTokens − prefixHitTokens. */
  recomputedTokens?: number;
  /** Prompt tokens a per-request KV budget cut (kv-budget.ts); promptTokens is what ran. */
  truncatedTokens?: number;
  status: 'finished' | 'failed' | 'cancelled';
  error?: string;
  /** Times in ms from the run's start. */
  arrivalMs: number;
  admittedMs: number | null;
  /**
   * One time per generated token, the first token first. Tokens produced in the same step (a
   * speculative step's accepted draft) share a time and so add gaps of 0 to ITL; vLLM's client,
   * which sees streamed chunks, would count one gap per chunk instead.
   */
  tokenTimesMs: number[];
  finishMs: number | null;
  /** The same request's TTFT and E2E run alone, for slowdown. */
  soloTtftMs?: number;
  soloE2eMs?: number;
}

/** Mean and percentiles of a latency in ms; a Summary holds null instead when there is no sample. */
export interface Dist {
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
}

/** Service-level objectives, each a bound a request must meet (≤, as vLLM's goodput) to count. */
export interface Slo {
  ttftMs?: number;
  tpotMs?: number;
  e2elMs?: number;
}

export interface SummaryOptions {
  /** The run's length, which every rate divides by (vLLM: start to last completion). */
  durationMs: number;
  slo?: Slo;
}

export interface Summary {
  completed: number;
  failed: number;
  cancelled: number;
  requestsPerSec: number;
  outputTokensPerSec: number;
  /** Prompt + output tokens of finished requests per second. */
  totalTokensPerSec: number;
  /** Finished requests meeting every SLO given, per second; requestsPerSec when no SLO is given. */
  goodputRps: number;
  /** Σ prefixHitTokens / Σ promptTokens over finished requests; 0 when there are none. */
  prefixHitRate: number;
  /** Σ (promptTokens − prefixHitTokens + recomputedTokens) over finished requests: prefill work done. */
  prefillTokensComputed: number;
  /** Over every record, finished or not: the scheduler preempted them either way. */
  preemptions: number;
  /** Requests the per-request KV budget refused, and those it truncated (kv-budget.ts). */
  kvBudgetRejected: number;
  kvBudgetTruncated: number;
  ttftMs: Dist | null;
  tpotMs: Dist | null;
  itlMs: Dist | null;
  e2eMs: Dist | null;
  queueMs: Dist | null;
}

/** The latencies of one finished request. */
interface Latencies {
  queue: number;
  ttft: number;
  /** null with fewer than 2 output tokens. */
  tpot: number | null;
  e2e: number;
  itls: number[];
}

function latencies(r: RequestRecord): Latencies {
  if (r.admittedMs === null || r.finishMs === null || r.tokenTimesMs.length === 0) {
    const missing = r.admittedMs === null ? 'admittedMs' : r.finishMs === null ? 'finishMs' : 'tokenTimesMs';
    throw new SpecError(`request ${r.id}: finished but ${missing} is empty`);
  }
  const ttft = r.tokenTimesMs[0] - r.arrivalMs;
  const e2e = r.finishMs - r.arrivalMs;
  const itls: number[] = [];
  for (let i = 1; i < r.tokenTimesMs.length; i++) itls.push(r.tokenTimesMs[i] - r.tokenTimesMs[i - 1]);
  return {
    queue: r.admittedMs - r.arrivalMs,
    ttft,
    tpot: r.outputTokens >= 2 ? (e2e - ttft) / (r.outputTokens - 1) : null,
    e2e,
    itls,
  };
}

/** Whether a finished request meets every SLO given; one token has TPOT 0 here, as in vLLM's goodput. */
function meetsSlo(l: Latencies, slo: Slo): boolean {
  return (
    (slo.ttftMs === undefined || l.ttft <= slo.ttftMs) &&
    (slo.tpotMs === undefined || (l.tpot ?? 0) <= slo.tpotMs) &&
    (slo.e2elMs === undefined || l.e2e <= slo.e2elMs)
  );
}

export function dist(samples: number[]): Dist | null {
  if (samples.length === 0) return null;
  // Sorted once here: percentile copies and sorts again, which is linear on sorted input.
  const s = [...samples].sort((a, b) => a - b);
  return {
    mean: mean(s),
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p95: percentile(s, 95),
    p99: percentile(s, 99),
  };
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

export function summarize(records: readonly RequestRecord[], opts: SummaryOptions): Summary {
  if (!(Number.isFinite(opts.durationMs) && opts.durationMs > 0)) {
    throw new SpecError(`durationMs must be a number > 0, got ${opts.durationMs}`);
  }
  const seconds = opts.durationMs / 1000;
  const finished = records.filter((r) => r.status === 'finished');
  const lat = finished.map(latencies);
  const slo = opts.slo ?? {};
  const promptTokens = sum(finished.map((r) => r.promptTokens));
  const outputTokens = sum(finished.map((r) => r.outputTokens));
  const hits = sum(finished.map((r) => r.prefixHitTokens));
  return {
    completed: finished.length,
    failed: records.filter((r) => r.status === 'failed').length,
    cancelled: records.filter((r) => r.status === 'cancelled').length,
    requestsPerSec: finished.length / seconds,
    outputTokensPerSec: outputTokens / seconds,
    totalTokensPerSec: (promptTokens + outputTokens) / seconds,
    goodputRps: lat.filter((l) => meetsSlo(l, slo)).length / seconds,
    prefixHitRate: promptTokens > 0 ? hits / promptTokens : 0,
    prefillTokensComputed: promptTokens - hits + sum(finished.map((r) => r.recomputedTokens ?? 0)),
    preemptions: sum(records.map((r) => r.preemptions)),
    kvBudgetRejected: records.filter(
      (r) => r.status === 'failed' && r.error?.includes(`${KV_BUDGET_ERROR}:`) === true,
    ).length,
    kvBudgetTruncated: records.filter((r) => (r.truncatedTokens ?? 0) > 0).length,
    ttftMs: dist(lat.map((l) => l.ttft)),
    tpotMs: dist(lat.flatMap((l) => (l.tpot === null ? [] : [l.tpot]))),
    itlMs: dist(lat.flatMap((l) => l.itls)),
    e2eMs: dist(lat.map((l) => l.e2e)),
    queueMs: dist(lat.map((l) => l.queue)),
  };
}

/** A Summary per class, in the order classes first appear; rates over the whole run's duration. */
export function byClass(records: readonly RequestRecord[], opts: SummaryOptions): Record<string, Summary> {
  const groups = new Map<string, RequestRecord[]>();
  for (const r of records) {
    const g = groups.get(r.class);
    if (g) g.push(r);
    else groups.set(r.class, [r]);
  }
  const out: Record<string, Summary> = {};
  for (const [name, g] of groups) out[name] = summarize(g, opts);
  return out;
}

export interface Slowdown {
  /** Finished requests with both solo baselines. */
  n: number;
  /** TTFT under load / TTFT alone. */
  ttft: { p50: number; p95: number };
  /** E2E under load / E2E alone. */
  e2e: { p50: number; p95: number };
}

/**
 * How much slower each request was under load than alone, over finished requests with both solo
 * baselines (positive); null when there are none.
 */
export function slowdown(records: readonly RequestRecord[]): Slowdown | null {
  const ttft: number[] = [];
  const e2e: number[] = [];
  for (const r of records) {
    if (r.status !== 'finished' || !(r.soloTtftMs && r.soloTtftMs > 0) || !(r.soloE2eMs && r.soloE2eMs > 0))
      continue;
    const l = latencies(r);
    ttft.push(l.ttft / r.soloTtftMs);
    e2e.push(l.e2e / r.soloE2eMs);
  }
  if (ttft.length === 0) return null;
  return {
    n: ttft.length,
    ttft: { p50: percentile(ttft, 50), p95: percentile(ttft, 95) },
    e2e: { p50: percentile(e2e, 50), p95: percentile(e2e, 95) },
  };
}

const SLO_KEYS = { ttft: 'ttftMs', tpot: 'tpotMs', e2el: 'e2elMs' } as const;
const POSITIVE = /^(\d+\.?\d*|\.\d+)$/;

/** `ttft:MS,tpot:MS,e2el:MS`, any non-empty subset, as vLLM's `--goodput ttft:MS …` spells it. */
export function parseSlo(text: string): Slo {
  const slo: Slo = {};
  if (text.trim() === '') throw new SpecError('SLO is empty: give ttft:MS, tpot:MS and/or e2el:MS');
  for (const raw of text.split(',')) {
    const part = raw.trim();
    const colon = part.indexOf(':');
    const key = (colon < 0 ? part : part.slice(0, colon)).trim();
    const value = colon < 0 ? '' : part.slice(colon + 1).trim();
    if (!Object.hasOwn(SLO_KEYS, key)) {
      throw new SpecError(`SLO "${part}": unknown metric "${key}" (known: ttft, tpot, e2el)`);
    }
    const field = SLO_KEYS[key as keyof typeof SLO_KEYS];
    if (slo[field] !== undefined) throw new SpecError(`SLO "${part}": ${key} is given twice`);
    const ms = Number(value);
    if (!POSITIVE.test(value) || !(ms > 0)) {
      throw new SpecError(`SLO "${part}": ${key} needs a number of milliseconds > 0, as ${key}:200`);
    }
    slo[field] = ms;
  }
  return slo;
}
