import { escapeMarkdown, fixed, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { percentile } from '../../stats.ts';
import { CASE_LONG, CASE_SHORT, type CaseRole } from './serve-case.ts';
import type { ServeRun } from './serve-result.ts';

/**
 * The case study's report: the diagnosis, step by step as the seed tells it, computed from the
 * incident arm's own figures against the baseline's, then every arm side by side. Pure: the page
 * draws the same text beside its charts.
 */

type Req = ServeRun['requests'][number];

const finished = (r: ServeRun, cls?: string) =>
  r.requests.filter((q) => q.status === 'finished' && (cls === undefined || q.class === cls));

function ttfts(qs: readonly Req[]): number[] {
  return qs.map((q) => (q.tokenTimesMs[0] ?? q.arrivalMs) - q.arrivalMs);
}

function queues(qs: readonly Req[]): number[] {
  return qs.map((q) => (q.admittedMs ?? q.arrivalMs) - q.arrivalMs);
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const p = (xs: readonly number[], q: number) => (xs.length > 0 ? percentile(xs, q) : null);

/** One arm's figures for the table (ms, shares in 0…1); nulls where the arm has no sample. */
export interface CaseFigures {
  role: CaseRole;
  label: string;
  n: number;
  nShort: number;
  ttftP99: number | null;
  shortTtftP99: number | null;
  queueP99: number | null;
  /** Σ queue ÷ Σ TTFT over the short requests: how much of their wait is the queue. */
  queueShare: number | null;
  /** Peak KV pages in use ÷ the pool, over the steps. */
  kvPeak: number | null;
  /** Mean running requests ÷ batch slots, over the steps. */
  slotUse: number | null;
  /** Mean tokens per step ÷ the step's token budget. */
  budgetUse: number | null;
  goodputRps: number;
  requestsPerSec: number;
  failed: number;
}

export function caseFigures(r: ServeRun): CaseFigures {
  const all = finished(r);
  const short = finished(r, CASE_SHORT);
  const tl = r.timeline;
  const steps = Math.max(1, tl.length);
  const tShort = ttfts(short);
  return {
    role: r.caseRole ?? 'incident',
    label: r.label,
    n: all.length,
    nShort: short.length,
    ttftP99: p(ttfts(all), 99),
    shortTtftP99: p(tShort, 99),
    queueP99: p(queues(all), 99),
    queueShare: tShort.length > 0 && sum(tShort) > 0 ? sum(queues(short)) / sum(tShort) : null,
    kvPeak: tl.length > 0 ? Math.max(...tl.map((x) => x.kvUsedPages / Math.max(1, x.kvTotalPages))) : null,
    slotUse: tl.length > 0 ? sum(tl.map((x) => x.running)) / steps / r.maxBatch : null,
    budgetUse:
      tl.length > 0 ? sum(tl.map((x) => x.decodeRows + x.prefillTokens)) / steps / r.tokenBudget : null,
    goodputRps: r.summary.goodputRps,
    requestsPerSec: r.summary.requestsPerSec,
    failed: r.summary.failed,
  };
}

const ms = (x: number | null) => (x === null ? '–' : fixed(x, x < 100 ? 1 : 0));
const pct = (x: number | null) => (x === null ? '–' : `${fixed(x * 100, 0)}%`);
const times = (a: number | null, b: number | null) =>
  a === null || b === null || b <= 0 ? '–' : `×${fixed(a / b, 2)}`;

/** Prompt lengths of a class: n, p50 and p99, over every request of the arm. */
function lengths(r: ServeRun, cls: string) {
  const xs = r.requests.filter((q) => q.class === cls).map((q) => q.promptTokens + (q.truncatedTokens ?? 0));
  return { n: xs.length, p50: p(xs, 50), p99: p(xs, 99), tokens: sum(xs) };
}

/** The diagnosis as the seed walks it, from the incident's figures against the baseline's. */
export function caseDiagnosis(baseline: ServeRun, incident: ServeRun): string[] {
  const b = caseFigures(baseline);
  const i = caseFigures(incident);
  const tl = incident.timeline;
  const running = tl.length > 0 ? sum(tl.map((x) => x.running)) / tl.length : 0;
  const waiting = tl.length > 0 ? sum(tl.map((x) => x.waiting)) / tl.length : 0;
  const maxWaiting = tl.length > 0 ? Math.max(...tl.map((x) => x.waiting)) : 0;
  const bRunning =
    baseline.timeline.length > 0
      ? sum(baseline.timeline.map((x) => x.running)) / baseline.timeline.length
      : 0;
  const shortLen = lengths(incident, CASE_SHORT);
  const longLen = lengths(incident, CASE_LONG);
  const longShareOfTokens = longLen.tokens / Math.max(1, shortLen.tokens + longLen.tokens);
  const factor = i.shortTtftP99 !== null && b.shortTtftP99 ? i.shortTtftP99 / b.shortTtftP99 : null;
  return [
    `**The symptom.** Short requests' TTFT p99 went from ${ms(b.shortTtftP99)} ms (baseline, n = ${b.nShort}) to ${ms(i.shortTtftP99)} ms (incident, n = ${i.nShort}): ${factor === null ? '–' : `×${fixed(factor, 2)}`}.`,
    `1. **Queue share of TTFT.** The queue is ${pct(i.queueShare)} of the short requests' TTFT in the incident, against ${pct(b.queueShare)} in the baseline: ${
      (i.queueShare ?? 0) > 0.5
        ? 'they wait to be admitted more than they compute'
        : 'most of the wait is not the queue'
    }.`,
    `2. **Concurrency.** On average ${fixed(running, 1)} requests run and ${fixed(waiting, 1)} wait (at most ${maxWaiting}) in ${incident.maxBatch} batch slots, against ${fixed(bRunning, 1)} running in the baseline; the engine's steps use ${pct(i.budgetUse)} of their token budget.`,
    `3. **KV usage at its peak.** ${pct(i.kvPeak)} of the ${incident.kvTokens}-token pool (baseline ${pct(b.kvPeak)}).`,
    `4. **Length distribution by class.** ${CASE_SHORT}: ${shortLen.n} requests, prompt p50 ${ms(shortLen.p50)} / p99 ${ms(shortLen.p99)} tokens; ${CASE_LONG}: ${longLen.n} requests, p50 ${ms(longLen.p50)} / p99 ${ms(longLen.p99)} tokens, ${pct(longShareOfTokens)} of all prompt tokens from ${pct(longLen.n / Math.max(1, shortLen.n + longLen.n))} of the requests.`,
    `5. **Root cause.** ${
      longShareOfTokens > 0.5 && (i.queueShare ?? 0) > (b.queueShare ?? 0)
        ? `The summaries' long prompts take the step's token budget and the KV pages while they prefill, so short requests queue behind them (head-of-line blocking): short TTFT grows by the queue, not by their own work.`
        : `The figures do not single out the long prompts here: the short requests' queue share did not grow, or the summaries are not most of the prompt tokens.`
    }`,
  ];
}

/** The case's arms run in-process (the HTTP replays of them are caseHttpTable's). */
export function caseArms(runs: readonly ServeRun[]): ServeRun[] {
  return runs.filter((r) => r.caseRole !== undefined && r.target?.kind !== 'http');
}

/**
 * The case's arms replayed over HTTP (`--target`), one table per server, each against that
 * server's own baseline; nothing without them.
 */
export function caseHttpTables(runs: readonly ServeRun[]): string[] {
  const http = runs.filter((r) => r.caseRole !== undefined && r.target?.kind === 'http');
  // By target as the arm's label names it ("HTTP, loopback" for every loopback server the arms needed).
  const where = (r: ServeRun) => r.label.split(' · ').slice(1).join(' · ');
  const servers = [...new Set(http.map(where))];
  return servers.flatMap((server) => {
    const arms = http.filter((r) => where(r) === server);
    const p99 = (role: string) => {
      const r = arms.find((x) => x.caseRole === role);
      return r ? caseFigures(r).shortTtftP99 : null;
    };
    const scale = arms.find((r) => r.target?.timeScale !== undefined)?.target?.timeScale;
    const rate = arms.find((r) => r.caseRole === 'baseline')?.arrival.rateRps;
    const calibrated =
      scale === undefined
        ? 'the same traces'
        : `the same requests, calibrated on this server: its throughput on the calibration burst set the arrivals × ${scale.toPrecision(3)}${rate ? `, the baseline at ${rate.toPrecision(3)} req/s` : ''}`;
    return [
      '',
      `**The case over ${escapeMarkdown(server)}** (${calibrated}, on the client's clock; the queue where the server returns its timeline; KV and slots are the server's, not seen here; × against the baseline over the same target)`,
      '',
      ...caseMarkdownTable(arms, p99('baseline'), p99('incident')),
    ];
  });
}

/** The arms table's columns, in the report and on the page. */
export const CASE_COLUMNS = [
  'arm',
  'n (short)',
  'TTFT p99 ms',
  'short TTFT p99 ms',
  '× baseline',
  'vs incident',
  'queue p99 ms',
  'queue share of short TTFT',
  'KV peak',
  'slots used',
  'budget used',
  'goodput / req/s',
];

/** The arms under CASE_COLUMNS as Markdown, against the baseline's and the incident's short TTFT p99. */
function caseMarkdownTable(
  arms: readonly ServeRun[],
  baselineP99: number | null,
  incidentP99: number | null,
): string[] {
  return [
    markdownRow(CASE_COLUMNS),
    markdownDelimiter('lrrrrrrrrrrr'),
    ...arms.map((r) =>
      markdownRow(caseRow(r, baselineP99, incidentP99).map((c, k) => (k === 0 ? escapeMarkdown(c) : c))),
    ),
  ];
}

/** One arm's cells under CASE_COLUMNS, against the baseline's and the incident's short TTFT p99. */
export function caseRow(r: ServeRun, baselineP99: number | null, incidentP99: number | null): string[] {
  const f = caseFigures(r);
  const remedy = r.caseRole !== 'baseline' && r.caseRole !== 'incident';
  return [
    r.label,
    `${f.n} (${f.nShort})${f.failed > 0 ? ` +${f.failed} failed` : ''}`,
    ms(f.ttftP99),
    ms(f.shortTtftP99),
    times(f.shortTtftP99, baselineP99),
    remedy ? times(f.shortTtftP99, incidentP99) : '–',
    ms(f.queueP99),
    pct(f.queueShare),
    pct(f.kvPeak),
    pct(f.slotUse),
    pct(f.budgetUse),
    `${fixed(f.goodputRps, 2)} / ${fixed(f.requestsPerSec, 2)}`,
  ];
}

/** The diagnosis and the arms side by side; nothing when the runs hold no case study. */
export function caseTables(runs: readonly ServeRun[]): string[] {
  const arms = caseArms(runs);
  const baseline = arms.find((r) => r.caseRole === 'baseline');
  const incident = arms.find((r) => r.caseRole === 'incident');
  if (!baseline || !incident) return [];
  const b = caseFigures(baseline);
  const i = caseFigures(incident);
  const slo = baseline.slo.ttftMs;
  return [
    `**The case study** (the seed's §8.1 on this model: a shared ${baseline.requests[0]?.prefixTokens ?? 0}-token system prompt; short Q&A at ${fixed(baseline.arrival.rateRps ?? 0, 2)} req/s; the incident adds document summaries on top at ${fixed((incident.arrival.rateRps ?? 0) - (baseline.arrival.rateRps ?? 0), 2)} req/s)`,
    '',
    '**Diagnosis** (from the incident arm’s own figures):',
    '',
    ...caseDiagnosis(baseline, incident),
    '',
    `**Remedies** (each alone on the incident's trace, then all four; short = ${CASE_SHORT}; × = against the baseline's short TTFT p99; goodput: ${slo === undefined ? 'SLOs as given' : `TTFT ≤ ${fixed(slo, 0)} ms`})`,
    '',
    ...caseMarkdownTable(arms, b.shortTtftP99, i.shortTtftP99),
    '',
    `- more capacity: the KV pool and the step's token budget doubled (${arms.find((r) => r.caseRole === 'capacity')?.kvTokens ?? '–'} tokens, ${arms.find((r) => r.caseRole === 'capacity')?.tokenBudget ?? '–'} a step); the batch slots stay the model's (${incident.maxBatch}).`,
    `- routing: the short requests keep ${arms.find((r) => r.caseRole === 'routing')?.pools?.[0]?.slots ?? '–'} slots, ${arms.find((r) => r.caseRole === 'routing')?.pools?.[0]?.pages ?? '–'} pages and ${arms.find((r) => r.caseRole === 'routing')?.pools?.[0]?.tokenBudget ?? '–'} tokens a step; the summaries get the rest. On one device routing fences the long prompts in; it cannot add the hardware the seed's separate cluster adds.`,
    `- KV budget: ${arms.find((r) => r.caseRole === 'kv-budget')?.kvBudget?.tokens ?? '–'} tokens a request, the longest prompts cut to their newest tokens (${arms.find((r) => r.caseRole === 'kv-budget')?.summary.kvBudgetTruncated ?? 0} cut).`,
  ];
}
