import { escapeMarkdown, fixed, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { percentile } from '../../stats.ts';
import { poolTables } from './serve-pools-report.ts';
import type { ServeResult, ServeRun, ServeSummary } from './serve-result.ts';
import { sessionTables } from './serve-sessions-report.ts';

/**
 * The load test's Markdown: the arms side by side, latency by class, the A/B deltas, the goodput
 * line, the rate sweep, and the B-scaling table.
 */

type Dist = ServeSummary['ttftMs'];

const ms = (d: Dist, q: 'p50' | 'p90' | 'p95' | 'p99' | 'mean') =>
  d ? fixed(d[q], d[q] < 100 ? 1 : 0) : '–';
const pair = (d: Dist) => `${ms(d, 'p50')} / ${ms(d, 'p95')}`;

function arrivalText(r: ServeRun): string {
  const a = r.arrival;
  if (a.kind === 'poisson') {
    // Sessions arrive at the rate; their later turns follow their tool waits.
    return `Poisson ${fixed(a.rateRps ?? 0, 2)} ${r.sessions ? 'sessions' : 'req'}/s${a.burstiness !== undefined && a.burstiness !== 1 ? `, burstiness ${a.burstiness}` : ''}`;
  }
  if (a.kind === 'trace') return 'imported trace';
  if (a.kind === 'concurrency') return `concurrency ${a.concurrency}`;
  return r.sessions ? 'sessions all at t = 0' : 'all at t = 0';
}

function runsTable(runs: readonly ServeRun[]): string[] {
  return [
    markdownRow([
      'run',
      'arrival',
      's',
      'req/s',
      'out tok/s',
      'goodput req/s',
      'TTFT p50 / p95 ms',
      'TPOT p50 / p95 ms',
      'E2E p50 / p95 ms',
      'queue p95 ms',
      'preempted',
      'prefix hit',
      'prefill tokens',
      'identical to solo',
    ]),
    markdownDelimiter('llrrrrrrrrrrrl'),
    ...runs.map((r) => {
      const s = r.summary;
      return markdownRow([
        escapeMarkdown(r.label),
        arrivalText(r),
        fixed(r.durationMs / 1000, 1),
        fixed(s.requestsPerSec, 2),
        fixed(s.outputTokensPerSec, 1),
        fixed(s.goodputRps, 2),
        pair(s.ttftMs),
        pair(s.tpotMs),
        pair(s.e2eMs),
        ms(s.queueMs, 'p95'),
        String(s.preemptions),
        `${fixed(s.prefixHitRate * 100, 1)}%`,
        String(s.prefillTokensComputed),
        r.identical
          ? r.identical.mismatches === 0 && r.replayMismatches === 0
            ? `yes (${r.identical.checked})`
            : `**no**: ${r.identical.mismatches} of ${r.identical.checked}`
          : '–',
      ]);
    }),
  ];
}

function classTable(runs: readonly ServeRun[]): string[] {
  return [
    '**Latency by class** (ms; finished requests)',
    '',
    markdownRow([
      'run',
      'class',
      'done',
      'TTFT p50 / p95 / p99',
      'TPOT p50 / p95',
      'E2E p50 / p95',
      'queue p50 / p95',
    ]),
    markdownDelimiter('llrrrrr'),
    ...runs.flatMap((r) =>
      Object.entries(r.byClass)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, s]) =>
          markdownRow([
            escapeMarkdown(r.label),
            escapeMarkdown(name),
            `${s.completed}${s.failed > 0 ? ` (+${s.failed} failed)` : ''}`,
            `${pair(s.ttftMs)} / ${ms(s.ttftMs, 'p99')}`,
            pair(s.tpotMs),
            pair(s.e2eMs),
            pair(s.queueMs),
          ]),
        ),
    ),
  ];
}

/** Short requests' p95 TTFT (the "short" class of the default mix), or null. */
export function shortP95Ttft(r: ServeRun): number | null {
  return r.byClass.short?.ttftMs?.p95 ?? null;
}

/** The A/B comparisons the arms allow: continuous against static, prefix cache on against off. */
export function abDeltas(runs: readonly ServeRun[]): string[] {
  const ab = runs.filter((r) => r.experiment === 'ab');
  const lines: string[] = [];
  for (const cache of [false, true]) {
    const c = ab.find((r) => r.batching === 'continuous' && r.prefixCache === cache);
    const s = ab.find((r) => r.batching === 'static' && r.prefixCache === cache);
    if (!c || !s) continue;
    const ratio =
      s.summary.outputTokensPerSec > 0 ? c.summary.outputTokensPerSec / s.summary.outputTokensPerSec : 0;
    const cs = shortP95Ttft(c);
    const ss = shortP95Ttft(s);
    lines.push(
      `- continuous against static${ab.some((r) => r.prefixCache) ? ` (prefix cache ${cache ? 'on' : 'off'})` : ''}: ${fixed(ratio, 2)}× the output tokens/s (${fixed(c.summary.outputTokensPerSec, 1)} against ${fixed(s.summary.outputTokensPerSec, 1)}); short requests' p95 TTFT ${cs === null ? '–' : fixed(cs, 0)} against ${ss === null ? '–' : fixed(ss, 0)} ms`,
    );
  }
  for (const batching of ['continuous', 'static'] as const) {
    const on = ab.find((r) => r.batching === batching && r.prefixCache);
    const off = ab.find((r) => r.batching === batching && !r.prefixCache);
    if (!on || !off) continue;
    const drop =
      off.summary.prefillTokensComputed > 0
        ? 1 - on.summary.prefillTokensComputed / off.summary.prefillTokensComputed
        : 0;
    const ttft = (r: ServeRun) => r.summary.ttftMs?.mean ?? 0;
    lines.push(
      `- prefix cache on against off (${batching}): prefill tokens computed ${on.summary.prefillTokensComputed} against ${off.summary.prefillTokensComputed} (${fixed(drop * 100, 1)}% fewer; hit rate ${fixed(on.summary.prefixHitRate * 100, 1)}%); mean TTFT ${fixed(ttft(on), 0)} against ${fixed(ttft(off), 0)} ms`,
    );
  }
  return lines;
}

function sloText(r: ServeRun): string {
  const parts = [
    r.slo.ttftMs !== undefined ? `TTFT ≤ ${r.slo.ttftMs} ms` : null,
    r.slo.tpotMs !== undefined ? `TPOT ≤ ${r.slo.tpotMs} ms` : null,
    r.slo.e2elMs !== undefined ? `E2E ≤ ${r.slo.e2elMs} ms` : null,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'none given (goodput = request throughput)';
}

const p50 = (xs: number[]) => (xs.length > 0 ? fixed(percentile(xs, 50), 1) : '–');

/**
 * Whether an HTTP arm's tokens equal the in-process arm's: only where the server returned token ids
 * can they be compared; "yes (0)" would read as a pass where nothing was checked.
 */
function tokensCell(r: ServeRun): string {
  const m = r.matchesInProcess;
  if (m && m.checked > 0)
    return m.mismatches === 0 ? `yes (${m.checked})` : `no: ${m.mismatches} of ${m.checked}`;
  if (
    r.target?.kind === 'http' &&
    r.target.tokenCounting !== undefined &&
    r.target.tokenCounting !== 'token_ids'
  )
    return 'not comparable (the server returns no token ids)';
  return m ? 'none checked (no finished request on both sides)' : '–';
}

/** The in-process arm an HTTP arm replays: its label is the arm's, then " · " and the target. */
function twinOf(r: ServeRun, runs: readonly ServeRun[]): ServeRun | undefined {
  const base = r.label.split(' · ')[0];
  return runs.find((x) => x.label === base && (x.target === undefined || x.target.kind === 'in-process'));
}

/** The interface-against-inference table, as cells: the Markdown report and the page draw the same. */
export interface HttpComparison {
  title: string;
  caption: string;
  header: string[];
  rows: { cells: string[]; tokensDiffer: boolean }[];
  /** The /metrics cross-check, one line per arm whose server exposes queue and prefill. */
  notes: string[];
}

export const HTTP_HEADER = [
  'run',
  'done',
  'errors',
  'TTFT p50 / p90 / p99 ms',
  'Δ TTFT p50 vs in-process',
  'TPOT p50 / p99',
  'in-process TPOT p50 / p99',
  'E2E p50 / p99',
  'in-process E2E p50 / p99',
  'network+HTTP p50',
  'queue p50',
  'prefill p50',
  'split sum p50 vs TTFT p50',
  'tokens = in-process',
];

/**
 * Interface against inference: each HTTP arm beside the in-process arm of the same trace, what the
 * client saw against what the engine did, and the client's TTFT split by the server's timeline.
 * Null when no arm went over HTTP.
 */
export function httpComparison(runs: readonly ServeRun[]): HttpComparison | null {
  const http = runs.filter((r) => r.target?.kind === 'http');
  if (http.length === 0) return null;
  const rows = http.map((r) => {
    const twin = twinOf(r, runs);
    const s = r.summary;
    const done = r.requests.filter((q) => q.status === 'finished');
    const ttft = (q: (typeof done)[number]) => (q.tokenTimesMs[0] ?? 0) - q.arrivalMs;
    const split = done.filter((q) => q.networkMs !== undefined);
    // A server that times only the prompt (llama-server's per-request `timings`).
    const prefilled = done.filter((q) => q.prefillMs !== undefined);
    const errors = Object.entries(r.errors ?? {})
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const d = twin?.summary.ttftMs && s.ttftMs ? s.ttftMs.p50 - twin.summary.ttftMs.p50 : null;
    const m = r.matchesInProcess;
    return {
      tokensDiffer: (m?.mismatches ?? 0) > 0,
      cells: [
        r.label,
        `${s.completed}/${r.requests.length}`,
        errors === '' ? '0' : errors,
        `${ms(s.ttftMs, 'p50')} / ${ms(s.ttftMs, 'p90')} / ${ms(s.ttftMs, 'p99')}`,
        d === null ? '–' : `${d >= 0 ? '+' : ''}${fixed(d, 1)}`,
        `${ms(s.tpotMs, 'p50')} / ${ms(s.tpotMs, 'p99')}`,
        twin ? `${ms(twin.summary.tpotMs, 'p50')} / ${ms(twin.summary.tpotMs, 'p99')}` : '–',
        `${ms(s.e2eMs, 'p50')} / ${ms(s.e2eMs, 'p99')}`,
        twin ? `${ms(twin.summary.e2eMs, 'p50')} / ${ms(twin.summary.e2eMs, 'p99')}` : '–',
        split.length === 0 && prefilled.length > 0
          ? `${p50(prefilled.map((q) => ttft(q) - (q.prefillMs ?? 0)))} with queue (no queue time from the server)`
          : p50(split.map((q) => q.networkMs ?? 0)),
        p50(split.map((q) => q.queueMs ?? 0)),
        p50((split.length > 0 ? split : prefilled).map((q) => q.prefillMs ?? 0)),
        split.length > 0
          ? `${p50(split.map((q) => (q.networkMs ?? 0) + (q.queueMs ?? 0) + (q.prefillMs ?? 0)))} vs ${p50(split.map(ttft))}`
          : '–',
        tokensCell(r),
      ],
    };
  });
  const chunkNotes = http.flatMap((r) => {
    // Without token ids each streamed chunk is one timestamp; a server may send several tokens in
    // one chunk (llama-server holds back a partial UTF-8 character or a possible stop string).
    const merged = r.requests.filter(
      (q) => q.status === 'finished' && q.tokenTimesMs.length < q.outputTokens,
    );
    if (merged.length === 0) return [];
    const tokens = merged.reduce((a, q) => a + q.outputTokens, 0);
    const chunks = merged.reduce((a, q) => a + q.tokenTimesMs.length, 0);
    return [
      `${r.label}: ${merged.length} of ${r.requests.filter((q) => q.status === 'finished').length} finished requests streamed fewer chunks than tokens (${tokens} tokens in ${chunks} chunks). Their ITL is per chunk, a chunk of several tokens one gap; TTFT is the first chunk's, and TPOT divides by the server's own token count (${r.target?.kind === 'http' ? (r.target.tokenCounting ?? 'usage') : 'usage'}).`,
    ];
  });
  const notes = http.flatMap((r) => {
    const m = r.serverMetrics;
    const s = r.summary;
    if (m?.source === 'llama.cpp counters' && m.prefillMsMean !== null && s.ttftMs)
      return [
        `${r.label}: from llama-server's counters over the arm (its slots' own timings, ${m.requests} finished requests; it exposes no queue time): mean prefill ${fixed(m.prefillMsMean, 1)} ms a request, so at most ${fixed(s.ttftMs.mean - m.prefillMsMean, 1)} ms of the client's mean TTFT (${fixed(s.ttftMs.mean, 1)} ms) is queue, network and HTTP${m.decodeMsPerToken == null ? '' : `; ${fixed(m.decodeMsPerToken, 2)} ms a generated token (the client's TPOT p50: ${ms(s.tpotMs, 'p50')})`}.`,
      ];
    if (!m || m.queueMsMean === null || m.prefillMsMean === null || !s.ttftMs) return [];
    return [
      `${r.label}: from the server's /metrics over the arm (${m.requests} requests), mean queue ${fixed(m.queueMsMean, 1)} ms + mean prefill ${fixed(m.prefillMsMean, 1)} ms, so ${fixed(s.ttftMs.mean - m.queueMsMean - m.prefillMsMean, 1)} ms of the client's mean TTFT (${fixed(s.ttftMs.mean, 1)} ms) is network and HTTP.`,
    ];
  });
  return {
    title: 'Interface against inference',
    caption:
      "Each HTTP arm replays the in-process arm of the same name, request for request. Client times are the load generator's performance.now(), from handing the request to the HTTP client to each streamed chunk; the split uses the timeline the server returns in its last chunk.",
    header: HTTP_HEADER,
    rows,
    notes: [...notes, ...chunkNotes],
  };
}

function httpTable(runs: readonly ServeRun[]): string[] {
  const c = httpComparison(runs);
  if (!c) return [];
  return [
    `**${c.title}.** ${escapeMarkdown(c.caption)}`,
    '',
    markdownRow(c.header),
    markdownDelimiter('lrlrrrrrrrrrrl'),
    ...c.rows.map((r) =>
      markdownRow(
        r.cells.map((x, i) => (i === r.cells.length - 1 && r.tokensDiffer ? `**${x}**` : escapeMarkdown(x))),
      ),
    ),
    '',
    ...c.notes.map((n) => `- ${escapeMarkdown(n)}`),
  ];
}

export function serveTables(s: ServeResult): string[] {
  const out: string[] = [`**Load test** (every request timed; ${escapeMarkdown(s.clock)})`, ''];
  out.push(...runsTable(s.runs), '');
  const http = httpTable(s.runs);
  if (http.length > 0) out.push(...http, '');
  // The SLOs of the arms, not of a calibration run (which has none of its own).
  const first = s.runs.find((r) => r.experiment !== 'calibration') ?? s.runs[0];
  if (first) {
    out.push(
      `**Goodput:** SLOs ${sloText(first)}; ${s.runs.map((r) => `${escapeMarkdown(r.label)} ${fixed(r.summary.goodputRps, 2)} req/s of ${fixed(r.summary.requestsPerSec, 2)}`).join('; ')}`,
      '',
    );
  }
  const deltas = abDeltas(s.runs);
  if (deltas.length > 0) out.push('**A/B:**', '', ...deltas, '');
  const slow = s.runs.filter((r) => r.slowdown);
  if (slow.length > 0) {
    out.push(
      `**Short-request slowdown** (against the same request alone on the idle engine): ${slow
        .map(
          (r) =>
            `${escapeMarkdown(r.label)}: TTFT ×${fixed(r.slowdown?.ttft.p50 ?? 0, 2)} median, ×${fixed(r.slowdown?.ttft.p95 ?? 0, 2)} p95; E2E ×${fixed(r.slowdown?.e2e.p50 ?? 0, 2)} median, ×${fixed(r.slowdown?.e2e.p95 ?? 0, 2)} p95`,
        )
        .join('; ')}`,
      '',
    );
  }
  if (s.sweep) {
    out.push(
      `**Rate sweep** (a rate meets the SLOs when ≥ ${fixed(s.sweep.attainment * 100, 0)}% of its requests meet every one; highest: ${s.sweep.maxRateMeetingSlo === null ? 'none' : `${fixed(s.sweep.maxRateMeetingSlo, 2)} req/s`})`,
      '',
      markdownRow(['run', 'rate req/s', 'req/s', 'goodput req/s', 'TTFT p95 ms', 'meets SLOs']),
      markdownDelimiter('lrrrrl'),
      ...s.sweep.points.map((p) =>
        markdownRow([
          escapeMarkdown(p.label),
          fixed(p.rateRps, 2),
          fixed(p.requestsPerSec, 2),
          fixed(p.goodputRps, 2),
          p.p95TtftMs === null ? '–' : fixed(p.p95TtftMs, 0),
          p.meetsSlo ? 'yes' : 'no',
        ]),
      ),
      '',
    );
  }
  const budgeted = s.runs.filter((r) => r.kvBudget);
  if (budgeted.length > 0) {
    out.push(
      '**Per-request KV budget** (the most KV one request may hold: prompt + output − 1 tokens):',
      '',
      ...budgeted.map((r) => {
        const b = r.kvBudget;
        const classes = Object.entries(r.byClass)
          .sort(([a], [c]) => a.localeCompare(c))
          .map(
            ([name, c]) =>
              `${escapeMarkdown(name)} ${c.kvBudgetRejected ?? 0} refused, ${c.kvBudgetTruncated ?? 0} truncated`,
          )
          .join('; ');
        // Over HTTP a server cuts prompts itself and does not say so: refusals are its 400s.
        if (r.target?.kind === 'http' && b?.policy === 'truncate')
          return `- ${escapeMarkdown(r.label)}: ${b.tokens} tokens, oldest prompt tokens dropped by the server, which does not report how many`;
        return `- ${escapeMarkdown(r.label)}: ${b?.tokens} tokens, ${b?.policy === 'truncate' ? 'oldest prompt tokens dropped' : 'refused at admission'}; by class: ${classes}`;
      }),
      '',
    );
  }
  const pools = poolTables(s.runs);
  if (pools.length > 0) out.push(...pools, '');
  const sessions = sessionTables(s.runs);
  if (sessions.length > 0) out.push(...sessions, '');
  out.push(...classTable(s.runs), '', escapeMarkdown(s.definitions));
  return out;
}
