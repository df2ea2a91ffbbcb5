/**
 * The measured points as a sortable table that reads exactly like the CLI's Markdown report: the
 * same columns (taken from its header), the same number formats, the same high-variance mark.
 */
import { MARKDOWN_POINTS_HEADER } from '../results/export.ts';
import type { Point } from '../results/schema.ts';
import { h } from './dom.ts';
import {
  fixed,
  formatIntensity,
  formatMs,
  HIGH_VARIANCE_LEGEND,
  HIGH_VARIANCE_MARK,
  MISSING,
  pointSize,
} from './format.ts';
import { formatRank, formatsIn, pointFormat } from './formats/weights.ts';
import { type Column, sortableTable } from './sortable-table.ts';

function passLabel(p: Point): string {
  return p.graph ? `${p.pass} ${p.graph}` : p.pass;
}

/** Column headers in the report's order: pass, L/depth, clock, ms, tok/s, bound, % roof, predicted ms, GFLOP/s, GB/s, FLOP/B, wall ms, GPU ms. */
const HEADERS = MARKDOWN_POINTS_HEADER.split('|')
  .map((s) => s.trim())
  .filter(Boolean);

/** Cells and sort keys, in the order of HEADERS. */
const CELLS: Omit<Column<Point>, 'header'>[] = [
  // The fusion workload's points name their graph ("decode fused"), as the report's rows do.
  { cell: passLabel, sortValue: passLabel },
  { cell: pointSize, sortValue: (p) => (p.pass === 'prefill' ? p.tokens : p.depth), numeric: true },
  { cell: (p) => p.timebase, sortValue: (p) => p.timebase },
  {
    cell: (p) => `${formatMs(p.medianMs)}${p.highVariance ? ` ${HIGH_VARIANCE_MARK}` : ''}`,
    sortValue: (p) => p.medianMs,
    numeric: true,
    cellClass: (p) => (p.highVariance ? 'high-variance' : undefined),
    cellTitle: (p) => (p.highVariance ? HIGH_VARIANCE_LEGEND : undefined),
  },
  { cell: (p) => fixed(p.tokensPerSec, 1), sortValue: (p) => p.tokensPerSec, numeric: true },
  { cell: (p) => p.bound, sortValue: (p) => p.bound, cellClass: (p) => `bound bound-${p.bound}` },
  { cell: (p) => fixed(p.roofPct, 1), sortValue: (p) => p.roofPct, numeric: true },
  { cell: (p) => formatMs(p.predictedMs), sortValue: (p) => p.predictedMs, numeric: true },
  { cell: (p) => fixed(p.gflops, 1), sortValue: (p) => p.gflops, numeric: true },
  { cell: (p) => fixed(p.gbps, 1), sortValue: (p) => p.gbps, numeric: true },
  { cell: (p) => formatIntensity(p.intensity), sortValue: (p) => p.intensity, numeric: true },
  { cell: (p) => formatMs(p.wallMedianMs), sortValue: (p) => p.wallMedianMs, numeric: true },
  {
    cell: (p) => (p.gpuMedianMs === null ? MISSING : formatMs(p.gpuMedianMs)),
    sortValue: (p) => p.gpuMedianMs ?? -1,
    numeric: true,
  },
];

/** Explanations shown on hover of the less obvious headers. */
const HEADER_TITLES: Record<string, string> = {
  clock:
    'The clock that placed the point on the roofline: gpu (timestamps) or wall (submit and readback included)',
  ms: 'Median of one sample per repetition, on the placing clock (prefill: one pass; decode: one TPOT); ⚠ marks a high coefficient of variation',
  'wall ms': 'Median on the wall clock: what a user waits for, submit and readback included',
  'GPU ms': 'Median on the GPU timestamps: what the kernels cost; – without timestamps',
  'tok/s': 'Tokens per second of wall clock: L per prefill, or batch per TPOT',
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

/** Leads the table when the points span several weight formats, which the report's columns cannot tell apart. */
const FORMAT_COLUMN: Column<Point> = {
  header: 'format',
  title: 'The format of the linear weights at this point',
  cell: pointFormat,
  sortValue: (p) => formatRank(pointFormat(p)),
};

export function resultsTable(points: readonly Point[]): HTMLElement {
  const columns = formatsIn(points).length > 1 ? [FORMAT_COLUMN, ...COLUMNS] : COLUMNS;
  const table = sortableTable(columns, points, { testId: 'results-table', caption: 'Measured points' });
  if (!points.some((p) => p.highVariance)) return table;
  return h('div', {}, [
    table,
    h('p', { className: 'hint', testId: 'high-variance-legend', text: HIGH_VARIANCE_LEGEND }),
  ]);
}

/** Latency of each point, wall clock, as in the report: TTFT per prompt length, TPOT and ITL per depth. */
export function latencyTable(points: readonly Point[]): HTMLElement {
  const q = (x: Point['ttftMs']) =>
    x ? `${formatMs(x.p50)} / ${formatMs(x.p95)} / ${formatMs(x.p99)}` : MISSING;
  const withFormat = formatsIn(points).length > 1;
  return h('div', { className: 'table-scroll' }, [
    h('table', { className: 'data-table compact', testId: 'latency-table' }, [
      h('caption', { text: 'Latency per point, wall clock (p50 / p95 / p99 ms)' }),
      h('thead', {}, [
        h('tr', {}, [
          withFormat ? h('th', { text: 'format', attrs: { scope: 'col' } }) : null,
          h('th', { text: 'pass', attrs: { scope: 'col' } }),
          h('th', { text: 'L/depth', attrs: { scope: 'col' } }),
          ...[
            ['TTFT', 'Time to first token: the prefill of this prompt, no queue'],
            ['TPOT', 'Time per output token: one sample per repetition'],
            ['ITL', 'Inter-token latency: every gap between tokens'],
          ].map(([t, title]) => h('th', { className: 'num', text: t, attrs: { scope: 'col', title } })),
        ]),
      ]),
      h(
        'tbody',
        {},
        points.map((p) =>
          h('tr', {}, [
            withFormat ? h('td', { text: pointFormat(p) }) : null,
            h('th', { attrs: { scope: 'row' }, text: passLabel(p) }),
            h('td', { text: pointSize(p) }),
            ...[p.ttftMs, p.tpotMs, p.itlMs].map((x) => h('td', { className: 'num', text: q(x) })),
          ]),
        ),
      ),
    ]),
  ]);
}
