/**
 * Latency CDFs: for one metric (TTFT, TPOT or E2E), the share of a class's finished requests at or
 * under each latency, one small multiple per class and one line per arm. A line further left is
 * faster; its top end is the slowest request; where it crosses a height is that percentile (the
 * dotted rule marks p95). The metric's SLO, when the run set one, is the dashed vertical rule.
 * Latency is on a log axis: the classes span two orders of magnitude.
 */
import * as Plot from '@observablehq/plot';
import type { ServeRun } from '../../spec/workloads/serve-result.ts';
import { fixed } from '../format.ts';
import { baseOptions, type PlotNode } from './common.ts';
import { armScale, classOrder, HALO, type Phases, phasesOf } from './serve-common.ts';

export const CDF_METRICS = {
  ttft: { label: 'TTFT', axis: 'Time to first token (ms, log) →', slo: 'ttftMs' },
  tpot: { label: 'TPOT', axis: 'Time per output token (ms, log) →', slo: 'tpotMs' },
  e2e: { label: 'E2E', axis: 'End-to-end latency (ms, log) →', slo: 'e2elMs' },
} as const;
export type CdfMetric = keyof typeof CDF_METRICS;

/** Small multiples: the least width of one, px, and its height. */
const FACET_MIN_WIDTH = 230;
const FACET_HEIGHT = 170;

function value(p: Phases, metric: CdfMetric): number | null {
  return metric === 'ttft' ? p.ttftMs : metric === 'e2e' ? p.e2eMs : p.tpotMs;
}

/** The steps of an empirical CDF: (v_i, i ÷ n) after a start at (v_1, 0), drawn step-after. */
export function cdfSteps(values: readonly number[]): { ms: number; share: number }[] {
  const v = [...values].sort((a, b) => a - b);
  if (v.length === 0) return [];
  return [{ ms: v[0], share: 0 }, ...v.map((ms, i) => ({ ms, share: (i + 1) / v.length }))];
}

export function latencyCdfChart(
  runs: readonly ServeRun[],
  metric: CdfMetric,
  width: number,
): PlotNode | null {
  const m = CDF_METRICS[metric];
  const classes = classOrder(runs);
  const cols = Math.max(1, Math.min(classes.length, Math.floor(width / FACET_MIN_WIDTH)));
  const cell = (c: string) => {
    const i = classes.indexOf(c);
    return { col: i % cols, row: Math.floor(i / cols) };
  };
  const lines = classes.flatMap((c) =>
    runs.flatMap((run) => {
      const values = run.requests
        .filter((q) => q.class === c)
        .flatMap((q) => {
          const p = phasesOf(q);
          const v = p ? value(p, metric) : null;
          return v !== null && v > 0 ? [v] : [];
        });
      return cdfSteps(values).map((s) => ({
        ...s,
        ...cell(c),
        arm: run.label,
        series: `${run.label} · ${c}`,
        title: `${run.label} · ${c}: ${fixed(s.share * 100, 0)}% of ${values.length} at or under ${fixed(s.ms, s.ms < 100 ? 1 : 0)} ms`,
      }));
    }),
  );
  if (lines.length === 0) return null;
  const all = lines.map((l) => l.ms);
  const slo = runs[0]?.slo[m.slo];
  const lo = Math.min(...all, slo ?? Number.POSITIVE_INFINITY) / 1.3;
  const hi = Math.max(...all, slo ?? 0) * 1.3;
  const rowsCount = Math.ceil(classes.length / cols);
  const names = classes.map((c) => ({ ...cell(c), text: c }));
  const margin = { top: 16, right: 16, bottom: 44, left: 48 };
  return Plot.plot({
    ...baseOptions(width, margin.top + margin.bottom + rowsCount * FACET_HEIGHT),
    marginTop: margin.top,
    marginRight: margin.right,
    marginBottom: margin.bottom,
    marginLeft: margin.left,
    fx: { axis: null, padding: 0.1 },
    fy: { axis: null, padding: 0.16 },
    x: { type: 'log', domain: [lo, hi], label: m.axis, grid: true, ticks: 4, tickFormat: '~s' },
    // Headroom above 100% holds each multiple's class name.
    y: { domain: [0, 1.22], ticks: [0, 0.5, 1], tickFormat: '.0%', label: '↑ Requests', grid: true },
    color: { ...armScale(runs), legend: true },
    marks: [
      Plot.frame({ stroke: '#e2e8f0' }),
      Plot.ruleY([0.95], { stroke: '#64748b', strokeDasharray: '1,3' }),
      Plot.text(names, {
        fx: 'col',
        fy: 'row',
        x: hi,
        y: 0.95,
        text: () => 'p95',
        dx: -3,
        dy: 7,
        textAnchor: 'end',
        fill: '#64748b',
        fontSize: 10,
        ...HALO,
      }),
      ...(slo !== undefined
        ? [
            Plot.ruleX([slo], { stroke: '#b45309', strokeWidth: 1.5, strokeDasharray: '6,4' }),
            Plot.text(
              names.map((n) => ({ ...n, text: `SLO ${fixed(slo, 0)} ms` })),
              {
                fx: 'col',
                fy: 'row',
                x: slo,
                y: 1.1,
                text: 'text',
                dx: 4,
                textAnchor: 'start',
                fill: '#b45309',
                fontSize: 11,
                ...HALO,
              },
            ),
          ]
        : []),
      Plot.line(lines, {
        fx: 'col',
        fy: 'row',
        x: 'ms',
        y: 'share',
        z: 'series',
        stroke: 'arm',
        strokeWidth: 2,
        curve: 'step-after',
        className: 'serve-cdf-line',
      }),
      Plot.dot(
        lines.filter((l) => l.share > 0),
        { fx: 'col', fy: 'row', x: 'ms', y: 'share', r: 2, fill: 'arm', title: 'title' },
      ),
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
}
