/**
 * The KV matrix's three charts, drawn alike: one panel per KV head count (MHA, GQA, MQA), one line
 * per cell in it, coloured by KV type, dashed where the cell has a sliding window (the legend names
 * the window; with several, each line's W is written at its end).
 * - Memory against context: the KV bytes one sequence holds at each depth (pages held × a page's
 *   bytes). A full-attention line climbs with the depth; a window's goes flat once it is past W.
 * - TPOT against depth, wall clock.
 * - Error by position: the logits' relative error against f32 KV without a window in the first,
 *   middle and last fifth of the long context (log scale), where a type's error at the tail shows.
 */
import * as Plot from '@observablehq/plot';
import { KV_DTYPES, type KvDtype } from '../../kv/format.ts';
import { cellLabel, groupingName } from '../../spec/workloads/kv-report.ts';
import { ERROR_BUCKETS, type KvCell, type KvSection } from '../../spec/workloads/kv-result.ts';
import { fixed, formatMs, formatNumber } from '../format.ts';
import { baseOptions } from './common.ts';
import { type LegendItem, legendSvg, stackCharts } from './stack.ts';

/** One colour per KV type, the same in every chart. */
export const KV_DTYPE_COLORS: Readonly<Record<KvDtype, string>> = {
  f32: '#4e79a7',
  f16: '#f28e2b',
  int8: '#59a14f',
};
const HALO = { stroke: 'white', strokeWidth: 3, paintOrder: 'stroke' } as const;
/** Below this width (px) the panels stack in one column. */
const COMPACT_WIDTH = 620;
const PANEL_PX = 190;
const MARGIN = { top: 18, right: 34, bottom: 44, left: 58 } as const;

/** One point of a cell's line. */
interface Row {
  /** The cell's key: its line. */
  key: string;
  dtype: KvDtype;
  windowed: boolean;
  window: number | null;
  col: number;
  row: number;
  x: number | string;
  y: number;
  title: string;
}

/** Where each KV head count's panel sits: most heads first, side by side or (narrow) one under another. */
function panels(s: KvSection, width: number) {
  const heads = [...new Set(s.cells.map((c) => c.kvHeads))].sort((a, b) => b - a);
  const compact = width < COMPACT_WIDTH;
  const at = (kvHeads: number) => {
    const i = heads.indexOf(kvHeads);
    return compact ? { col: 0, row: i } : { col: i, row: 0 };
  };
  const names = heads.map((k) => ({
    ...at(k),
    text: `${groupingName(k, s.heads)}: ${k} KV head${k === 1 ? '' : 's'}`,
  }));
  return { at, names, rows: compact ? heads.length : 1 };
}

function cellRows(
  s: KvSection,
  width: number,
  points: (c: KvCell) => { x: number | string; y: number; title: string }[],
): { rows: Row[]; names: ReturnType<typeof panels>['names']; panelRows: number } {
  const p = panels(s, width);
  const rows = s.cells.flatMap((c) => {
    const key = cellLabel(c, s.heads);
    return points(c).map((pt) => ({
      key,
      dtype: c.kvDtype,
      windowed: c.window !== null,
      window: c.window,
      ...p.at(c.kvHeads),
      ...pt,
    }));
  });
  return { rows, names: p.names, panelRows: p.rows };
}

interface Axis {
  x: Plot.ScaleOptions;
  y: Plot.ScaleOptions;
}

/** The panels, their lines (dashed where windowed), dots with tooltips, and each window's W at its line's end. */
function cellChart(
  data: { rows: Row[]; names: ReturnType<typeof panels>['names']; panelRows: number },
  axis: Axis,
  width: number,
  pointClass: string,
): SVGSVGElement | null {
  const { rows, names, panelRows } = data;
  if (rows.length === 0) return null;
  const present = KV_DTYPES.filter((t) => rows.some((r) => r.dtype === t));
  const windows = [...new Set(rows.flatMap((r) => (r.window === null ? [] : [r.window])))].sort(
    (a, b) => a - b,
  );
  // One window is named by the legend; several need their W at each line's end.
  const lastOfLine =
    windows.length > 1 ? [...new Map(rows.map((r) => [r.key, r])).values()].filter((r) => r.windowed) : [];
  const legend: LegendItem[] = [
    ...present.map((t) => ({ label: t, color: KV_DTYPE_COLORS[t] })),
    ...(rows.some((r) => !r.windowed)
      ? [{ label: 'full attention', color: '#475569', shape: 'line' as const }]
      : []),
    ...(windows.length > 0
      ? [
          {
            label: `${windows.length > 1 ? 'windows' : 'window'} of ${windows.join(', ')} tokens`,
            color: '#475569',
            shape: 'dash' as const,
          },
        ]
      : []),
  ];
  const line = (windowed: boolean) =>
    Plot.line(
      rows.filter((r) => r.windowed === windowed),
      {
        fx: 'col',
        fy: 'row',
        x: 'x',
        y: 'y',
        z: 'key',
        stroke: 'dtype',
        strokeWidth: 2,
        ...(windowed ? { strokeDasharray: '6,4' } : {}),
      },
    );
  const chart = Plot.plot({
    ...baseOptions(width, MARGIN.top + MARGIN.bottom + panelRows * PANEL_PX),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginBottom: MARGIN.bottom,
    marginLeft: MARGIN.left,
    fx: { axis: null, padding: 0.12 },
    fy: { axis: null, padding: 0.14 },
    x: axis.x,
    y: axis.y,
    color: { domain: present, range: present.map((t) => KV_DTYPE_COLORS[t]) },
    marks: [
      Plot.frame({ stroke: '#e2e8f0' }),
      line(false),
      line(true),
      Plot.dot(rows, {
        fx: 'col',
        fy: 'row',
        x: 'x',
        y: 'y',
        r: 3,
        fill: 'dtype',
        title: 'title',
        className: pointClass,
      }),
      Plot.text(lastOfLine, {
        fx: 'col',
        fy: 'row',
        x: 'x',
        y: 'y',
        text: (r: Row) => `W ${r.window}`,
        dx: 5,
        textAnchor: 'start',
        fill: 'dtype',
        fontSize: 10,
        ...HALO,
      }),
      Plot.text(names, {
        fx: 'col',
        fy: 'row',
        text: 'text',
        frameAnchor: 'top-left',
        dx: 6,
        dy: 5,
        fontWeight: 600,
        fill: '#0f172a',
        ...HALO,
      }),
    ],
  });
  return stackCharts([{ chart: legendSvg(legend, width) }, { chart }], width);
}

const MiB = 2 ** 20;

/** KV MiB one sequence holds against its context depth, per cell. */
export function kvMemoryChart(s: KvSection, width: number): SVGSVGElement | HTMLElement | null {
  const data = cellRows(s, width, (c) =>
    c.pagesAt.map((p) => {
      const bytes = p.pages * s.pageSize * c.allocatedBytesPerToken;
      return {
        x: p.depth,
        y: bytes / MiB,
        title: `${cellLabel(c, s.heads)}\ndepth ${p.depth}: ${p.pages} pages, ${fixed(bytes / MiB, 2)} MiB`,
      };
    }),
  );
  const yMax = Math.max(0, ...data.rows.map((r) => r.y));
  return cellChart(
    data,
    {
      x: { label: 'Context depth (tokens) →', grid: true, ticks: 4 },
      y: { domain: [0, yMax * 1.2 || 1], label: '↑ KV MiB held', grid: true, ticks: 4 },
    },
    width,
    'kv-memory-point',
  );
}

/** TPOT against depth, per cell. */
export function kvTpotChart(s: KvSection, width: number): SVGSVGElement | HTMLElement | null {
  const data = cellRows(s, width, (c) =>
    c.tpotMs.map((t) => ({
      x: t.depth,
      y: t.ms,
      title: `${cellLabel(c, s.heads)}\ndepth ${t.depth}: TPOT ${formatMs(t.ms)} ms (${formatNumber(1000 / Math.max(t.ms, 1e-9))} tok/s)`,
    })),
  );
  const yMax = Math.max(0, ...data.rows.map((r) => r.y));
  return cellChart(
    data,
    {
      x: { label: 'Context depth (tokens) →', grid: true, ticks: 4 },
      y: { domain: [0, yMax * 1.2 || 1], label: '↑ TPOT ms', grid: true, ticks: 4 },
    },
    width,
    'kv-tpot-point',
  );
}

/**
 * Relative error by part of the context, per cell that has one (log scale: a part with no error
 * at all has no point on it, and its tooltip-free gap says so).
 */
export function kvErrorChart(s: KvSection, width: number): SVGSVGElement | HTMLElement | null {
  const data = cellRows(s, width, (c) =>
    c.error
      .filter((e) => e.relErr > 0)
      .map((e) => ({
        x: e.bucket,
        y: e.relErr,
        title: `${cellLabel(c, s.heads)}\n${e.bucket} fifth: rel err ${e.relErr.toExponential(2)}, top-1 ${fixed(e.top1 * 100, 1)} %, first divergence ${e.firstDivergence ?? 'none'}`,
      })),
  );
  const ys = data.rows.map((r) => r.y);
  return cellChart(
    data,
    {
      x: { type: 'point', domain: [...ERROR_BUCKETS], label: 'Part of the long context →', padding: 0.3 },
      y: {
        type: 'log',
        // Headroom above the largest error holds each panel's name.
        domain: [Math.min(...ys) / 2, Math.max(...ys) * 8],
        label: '↑ rel err of the logits',
        grid: true,
        ticks: 4,
        tickFormat: '.0e',
      },
    },
    width,
    'kv-error-point',
  );
}
