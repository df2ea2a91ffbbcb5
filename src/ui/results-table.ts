/**
 * The measured points as a sortable table that reads exactly like the CLI's Markdown report: the
 * same columns (taken from its header), the same number formats, the same high-variance mark.
 */
import { MARKDOWN_POINTS_HEADER } from '../results/export.ts';
import type { BenchResult, Point } from '../results/schema.ts';
import { h } from './dom.ts';
import { fixed, formatIntensity, formatMs, HIGH_VARIANCE_MARK, pointSize } from './format.ts';
import { type Column, sortableTable } from './sortable-table.ts';

/** Column headers in the report's order: pass, L/depth, ms, tok/s, GFLOP/s, GB/s, FLOP/B, bound, % roof, predicted ms. */
const HEADERS = MARKDOWN_POINTS_HEADER.split('|')
  .map((s) => s.trim())
  .filter(Boolean);

/** Cells and sort keys, in the order of HEADERS. */
const CELLS: Omit<Column<Point>, 'header'>[] = [
  { cell: (p) => p.pass, sortValue: (p) => p.pass },
  { cell: pointSize, sortValue: (p) => (p.pass === 'prefill' ? p.tokens : p.depth), numeric: true },
  {
    cell: (p) => `${formatMs(p.medianMs)}${p.highVariance ? ` ${HIGH_VARIANCE_MARK}` : ''}`,
    sortValue: (p) => p.medianMs,
    numeric: true,
    cellClass: (p) => (p.highVariance ? 'high-variance' : undefined),
  },
  { cell: (p) => fixed(p.tokensPerSec, 1), sortValue: (p) => p.tokensPerSec, numeric: true },
  { cell: (p) => fixed(p.gflops, 1), sortValue: (p) => p.gflops, numeric: true },
  { cell: (p) => fixed(p.gbps, 1), sortValue: (p) => p.gbps, numeric: true },
  { cell: (p) => formatIntensity(p.intensity), sortValue: (p) => p.intensity, numeric: true },
  { cell: (p) => p.bound, sortValue: (p) => p.bound, cellClass: (p) => `bound bound-${p.bound}` },
  { cell: (p) => fixed(p.roofPct, 1), sortValue: (p) => p.roofPct, numeric: true },
  { cell: (p) => formatMs(p.predictedMs), sortValue: (p) => p.predictedMs, numeric: true },
];

/** Explanations shown on hover of the less obvious headers. */
const HEADER_TITLES: Record<string, string> = {
  ms: 'Median wall-clock time of the pass; ⚠ marks a high coefficient of variation',
  'FLOP/B': 'Arithmetic intensity: FLOPs per byte moved (x axis of the roofline)',
  bound: 'The roof that binds this pass: compute, bandwidth or launch/submit overhead',
  '% roof': 'Share of the binding roof the pass reaches',
  'predicted ms': "The cost model's time from the measured roofs",
};

const COLUMNS: Column<Point>[] = HEADERS.map((header, i) => ({
  header,
  title: HEADER_TITLES[header],
  ...CELLS[i],
}));

export function resultsTable(points: readonly Point[]): HTMLElement {
  return sortableTable(COLUMNS, points, { testId: 'results-table', caption: 'Measured points' });
}

/** TTFT, TPOT, ITL and end-to-end latency percentiles, as in the report. */
export function latencyTable(latency: BenchResult['latency']): HTMLElement {
  const rows: [string, string, BenchResult['latency']['ttftMs']][] = [
    ['TTFT', 'Time to first token', latency.ttftMs],
    ['TPOT', 'Time per output token', latency.tpotMs],
    ['ITL', 'Inter-token latency', latency.itlMs],
    ['E2E', 'End-to-end request time', latency.e2eMs],
  ];
  return h('div', { className: 'table-scroll' }, [
    h('table', { className: 'data-table compact' }, [
      h('caption', { text: 'Latency of the decode requests' }),
      h('thead', {}, [
        h('tr', {}, [
          h('th', { text: 'latency', attrs: { scope: 'col' } }),
          ...['p50 ms', 'p95 ms', 'p99 ms'].map((t) =>
            h('th', { className: 'num', text: t, attrs: { scope: 'col' } }),
          ),
        ]),
      ]),
      h(
        'tbody',
        {},
        rows.map(([name, long, p]) =>
          h('tr', {}, [
            h('th', { attrs: { scope: 'row', title: long }, text: name }),
            ...[p.p50, p.p95, p.p99].map((v) => h('td', { className: 'num', text: formatMs(v) })),
          ]),
        ),
      ),
    ]),
  ]);
}
