/**
 * The load test's tables, as the Markdown report has them: the arms side by side (arrival, rates,
 * latency percentiles, preemptions, prefix hits, prefill work, identical to solo), then latency by
 * class for every arm. Headers explain their columns on hover; an arm whose tokens differed from
 * the solo runs is shown loudly.
 */

import { POOL_COLUMNS, POOLS_NOTE, poolCells } from '../../spec/workloads/serve-pools-report.ts';
import { httpComparison } from '../../spec/workloads/serve-report.ts';
import type { ServeRun, ServeSummary } from '../../spec/workloads/serve-result.ts';
import { turnCells } from '../../spec/workloads/serve-sessions-report.ts';
import { classOrder, classScale } from '../charts/serve-common.ts';
import { h } from '../dom.ts';
import { fixed } from '../format.ts';
import { identicalOk, msText } from './summary.ts';

type Dist = ServeSummary['ttftMs'];

interface Header {
  text: string;
  title: string;
  numeric?: boolean;
}

const pair = (d: Dist) => `${msText(d?.p50)} / ${msText(d?.p95)}`;

/** How an arm's requests arrived, in words. */
function arrivalText(r: ServeRun): string {
  const a = r.arrival;
  if (a.kind === 'poisson') {
    const burst = a.burstiness !== undefined && a.burstiness !== 1 ? `, burstiness ${a.burstiness}` : '';
    return `Poisson ${fixed(a.rateRps ?? 0, 2)} req/s${burst}`;
  }
  return a.kind === 'concurrency' ? `concurrency ${a.concurrency}` : 'all at t = 0';
}

const RUN_HEADERS: readonly Header[] = [
  { text: 'run', title: 'The arm: batching, prefix cache, or the experiment it belongs to' },
  {
    text: 'arrival',
    title: 'How requests arrived: a Poisson rate, a closed loop of C in flight, or all at once',
  },
  { text: 's', title: 'Duration: start to the last completion, seconds', numeric: true },
  { text: 'req/s', title: 'Finished requests per second', numeric: true },
  { text: 'out tok/s', title: 'Output tokens of finished requests per second', numeric: true },
  { text: 'goodput req/s', title: 'Finished requests meeting every SLO, per second', numeric: true },
  { text: 'TTFT p50 / p95 ms', title: 'Time to first token: first token − arrival', numeric: true },
  { text: 'TPOT p50 / p95 ms', title: 'Time per output token: (E2E − TTFT) ÷ (tokens − 1)', numeric: true },
  { text: 'E2E p50 / p95 ms', title: 'End to end: finish − arrival', numeric: true },
  { text: 'queue p95 ms', title: 'Admission − arrival', numeric: true },
  { text: 'preempted', title: 'Preemptions (recompute) over all requests', numeric: true },
  { text: 'prefix hit', title: 'Prompt tokens served from the prefix cache ÷ prompt tokens', numeric: true },
  {
    text: 'prefill tokens',
    title: 'Prompt tokens computed: prompts less prefix hits, plus recompute after preemptions',
    numeric: true,
  },
  { text: 'identical to solo', title: 'Finished requests whose tokens equal the same request run alone' },
];

function headRow(headers: readonly Header[]): HTMLElement {
  return h('thead', {}, [
    h(
      'tr',
      {},
      headers.map((c) =>
        h('th', {
          className: c.numeric ? 'num' : undefined,
          text: c.text,
          attrs: { scope: 'col', title: c.title },
        }),
      ),
    ),
  ]);
}

function table(
  testId: string,
  caption: string,
  headers: readonly Header[],
  rows: HTMLElement[],
): HTMLElement {
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': caption } },
    [
      h('table', { className: 'data-table compact serve-table', testId }, [
        h('caption', { text: caption }),
        headRow(headers),
        h('tbody', {}, rows),
      ]),
    ],
  );
}

function identicalCell(r: ServeRun): HTMLElement {
  const ok = identicalOk(r);
  if (ok === null) return h('td', { text: '–' });
  const i = r.identical;
  if (ok) return h('td', { className: 'serve-identical', text: `yes (${i?.checked})` });
  const replay = r.replayMismatches > 0 ? `; ${r.replayMismatches} replayed rows` : '';
  return h('td', {
    className: 'serve-mismatch',
    text: `NO: ${i?.mismatches} of ${i?.checked} differ${replay}`,
  });
}

export function serveRunsTable(runs: readonly ServeRun[], testId: string): HTMLElement {
  const num = (text: string) => h('td', { className: 'num', text });
  const rows = runs.map((r, i) => {
    const s = r.summary;
    return h(
      'tr',
      { className: identicalOk(r) === false ? 'serve-row-mismatch' : undefined, testId: `${testId}-${i}` },
      [
        h('th', { text: r.label, attrs: { scope: 'row' } }),
        h('td', { text: arrivalText(r) }),
        num(fixed(r.durationMs / 1000, 1)),
        num(fixed(s.requestsPerSec, 2)),
        num(fixed(s.outputTokensPerSec, 1)),
        num(fixed(s.goodputRps, 2)),
        num(pair(s.ttftMs)),
        num(pair(s.tpotMs)),
        num(pair(s.e2eMs)),
        num(msText(s.queueMs?.p95)),
        num(String(s.preemptions)),
        num(`${fixed(s.prefixHitRate * 100, 1)}%`),
        num(String(s.prefillTokensComputed)),
        identicalCell(r),
      ],
    );
  });
  return table(testId, 'The arms of the load test.', RUN_HEADERS, rows);
}

const CLASS_HEADERS: readonly Header[] = [
  { text: 'run', title: 'The arm' },
  { text: 'class', title: 'Request class of the traffic mix' },
  { text: 'done', title: 'Finished requests (failed ones counted apart)', numeric: true },
  { text: 'TTFT p50 / p95 / p99', title: 'Time to first token, ms', numeric: true },
  { text: 'TPOT p50 / p95', title: 'Time per output token, ms', numeric: true },
  { text: 'E2E p50 / p95', title: 'End-to-end latency, ms', numeric: true },
  { text: 'queue p50 / p95', title: 'Admission − arrival, ms', numeric: true },
];

/** A colour chip of a class; set through CSSOM, which the CSP does not restrict. */
function chip(color: string): HTMLElement {
  const el = h('span', { className: 'swatch', attrs: { 'aria-hidden': true } });
  el.style.background = color;
  return el;
}

export function serveClassTable(runs: readonly ServeRun[], testId: string): HTMLElement {
  const classes = classOrder(runs);
  const colors = classScale(classes);
  const num = (text: string) => h('td', { className: 'num', text });
  const rows = runs.flatMap((r) =>
    classes.flatMap((c) => {
      const s = r.byClass[c];
      if (!s) return [];
      return [
        h('tr', {}, [
          h('th', { text: r.label, attrs: { scope: 'row' } }),
          h('td', {}, [chip(colors.range[colors.domain.indexOf(c)]), ` ${c}`]),
          num(`${s.completed}${s.failed > 0 ? ` (+${s.failed} failed)` : ''}`),
          num(`${pair(s.ttftMs)} / ${msText(s.ttftMs?.p99)}`),
          num(pair(s.tpotMs)),
          num(pair(s.e2eMs)),
          num(pair(s.queueMs)),
        ]),
      ];
    }),
  );
  return table(testId, 'Latency by class (ms; finished requests).', CLASS_HEADERS, rows);
}

/**
 * Interface against inference (the report's table): each arm run over HTTP beside the in-process
 * arm it replays, with the client's TTFT split by the server's timeline. Nothing when no arm went
 * over HTTP.
 */
export function serveHttpTable(runs: readonly ServeRun[], testId: string): HTMLElement[] {
  const c = httpComparison(runs);
  if (!c) return [];
  const last = c.header.length - 1;
  const cell = (text: string, i: number, differ: boolean) =>
    h('td', {
      text,
      className: i === last ? (differ ? 'serve-mismatch' : 'serve-identical') : i > 0 ? 'num' : '',
    });
  // Siblings in the section, not one wrapper: a wrapper would grow to the table's width on a phone.
  return [
    h('h3', { text: c.title }),
    h('p', { className: 'spec-note', text: c.caption }),
    h('div', { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': c.title } }, [
      h('table', { className: 'data-table compact serve-table', testId }, [
        h('thead', {}, [
          h(
            'tr',
            {},
            c.header.map((x) => h('th', { text: x })),
          ),
        ]),
        h(
          'tbody',
          {},
          c.rows.map((r) =>
            h(
              'tr',
              {},
              r.cells.map((x, i) => cell(x, i, r.tokensDiffer)),
            ),
          ),
        ),
      ]),
    ]),
    ...c.notes.map((n) => h('p', { className: 'spec-note', text: n })),
  ];
}

const SESSION_HEADERS: readonly Header[] = [
  { text: 'run', title: 'The arm' },
  { text: 'turn', title: 'Turn of the session, from 1', numeric: true },
  { text: 'n', title: 'Finished turns of this index (of all turns of it)', numeric: true },
  { text: 'TTFT p50 / p99', title: 'Time to first token, ms', numeric: true },
  { text: 'prompt', title: 'Mean prompt tokens: the whole history sent', numeric: true },
  { text: 'new', title: 'Mean tokens the turn adds: tool result and user message', numeric: true },
  {
    text: 'computed',
    title: 'Mean prompt tokens prefilled: prompt less the prefix-cache hit',
    numeric: true,
  },
  {
    text: 'computed ÷ new, max',
    title: 'The largest computed ÷ new over the turns of this index',
    numeric: true,
  },
  { text: 'cache hit', title: 'Σ hit ÷ Σ prompt tokens', numeric: true },
  { text: 'tool wait', title: 'Mean measured wait before the turn, ms', numeric: true },
];

/**
 * Agent sessions by turn (the report's table): TTFT, the history resent, what the turn adds and
 * what the engine computed. Nothing when no arm ran sessions.
 */
export function serveSessionsTable(runs: readonly ServeRun[], testId: string): HTMLElement[] {
  const withSessions = runs.filter((r) => r.sessions);
  if (withSessions.length === 0) return [];
  const rows = withSessions.flatMap((r) =>
    (r.sessions?.byTurn ?? []).map((t) =>
      h('tr', {}, [
        h('th', { text: r.label, attrs: { scope: 'row' } }),
        ...turnCells(t).map((text) => h('td', { className: 'num', text })),
      ]),
    ),
  );
  const split = withSessions.map((r) => {
    const s = r.sessions?.split;
    return s
      ? `${r.label}: ${r.sessions?.completed} of ${r.sessions?.sessions} sessions; per session ${msText(s.queueMs)} ms queue, ${msText(s.prefillMs)} prefill, ${msText(s.decodeMs)} decode, ${msText(s.toolWaitMs)} tool wait`
      : `${r.label}: no session finished every turn`;
  });
  return [
    h('h3', { text: 'Agent sessions' }),
    h(
      'ul',
      { className: 'spec-note', testId: `${testId}-split` },
      split.map((text) => h('li', { text })),
    ),
    table(
      testId,
      'By turn (finished turns; without the prefix cache a turn computes its whole history, with it about what it adds).',
      SESSION_HEADERS,
      rows,
    ),
  ];
}

const POOL_TITLES: Record<string, string> = {
  route: 'The rule that sent a request to the second pool',
  pool: 'The pool',
  'pages / slots / budget': 'Its KV pages, batch slots and prompt tokens a step: its share of the engine’s',
  done: 'Its finished requests (failed beside)',
  'TTFT p50 / p99 ms': 'Time to first token of its requests, ms',
  'queue p50 / p99 ms': 'Arrival to admission in its own queue, ms',
  busy: 'Steps with its work ÷ all steps of the arm',
  budget: 'Its tokens a step ÷ its step budget, mean over all steps',
  'KV peak / mean': 'Its KV pages in use ÷ its pages, peak and mean over the steps',
};

/** Arms with pools (the report's table): each pool's capacity, TTFT, queue and how busy it was. */
export function servePoolsTable(runs: readonly ServeRun[], testId: string): HTMLElement[] {
  const pooled = runs.filter((r) => (r.pools?.length ?? 0) > 0);
  if (pooled.length === 0) return [];
  const headers: Header[] = [
    { text: 'run', title: 'The arm' },
    ...POOL_COLUMNS.map((text, k) => ({ text, title: POOL_TITLES[text] ?? text, numeric: k >= 3 })),
  ];
  const rows = pooled.flatMap((r) =>
    (r.pools ?? []).map((p) =>
      h('tr', {}, [
        h('th', { text: r.label, attrs: { scope: 'row' } }),
        ...poolCells(r, p).map((text, k) => h('td', { className: k >= 3 ? 'num' : '', text })),
      ]),
    ),
  );
  return [h('h3', { text: 'Pools' }), table(testId, `Pools (${POOLS_NOTE}).`, headers, rows)];
}
