/**
 * The rate sweep: what the server delivered at each offered request rate. Above, goodput (finished
 * requests meeting every SLO, per second) beside the raw throughput; below, p95 TTFT against the
 * TTFT SLO. A filled mark met the SLOs (at least the attainment share of its requests met every
 * one); the dashed rule marks the highest rate that did. Past it, throughput may still climb while
 * goodput falls: the server is busier, not better.
 */
import * as Plot from '@observablehq/plot';
import type { ServeResult } from '../../spec/workloads/serve-result.ts';
import { fixed } from '../format.ts';
import { baseOptions } from './common.ts';
import { HALO } from './serve-common.ts';
import { legendSvg, stackCharts } from './stack.ts';

const COLORS = {
  goodput: '#059669',
  throughput: '#64748b',
  ttft: '#2563eb',
  slo: '#b45309',
  miss: '#b91c1c',
} as const;
const MARGIN = { top: 20, right: 20, left: 56 } as const;
/** Rough width of one character of a 12 px bold label, px, to keep the rule's label inside the plot. */
const BOLD_CHAR_WIDTH = 7.2;

export function sweepChart(s: ServeResult, width: number): SVGSVGElement | null {
  const sweep = s.sweep;
  if (!sweep || sweep.points.length === 0) return null;
  const points = [...sweep.points].sort((a, b) => a.rateRps - b.rateRps);
  const data = points.map((p) => ({
    ...p,
    meets: p.meetsSlo ? 'meets the SLOs' : 'misses them',
    title: `${p.label}: offered ${fixed(p.rateRps, 2)} req/s\nfinished ${fixed(p.requestsPerSec, 2)} req/s, goodput ${fixed(p.goodputRps, 2)} req/s\np95 TTFT ${p.p95TtftMs === null ? '–' : `${fixed(p.p95TtftMs, 0)} ms`}; ${p.meetsSlo ? 'meets' : 'misses'} the SLOs`,
  }));
  const xMax = Math.max(...points.map((p) => p.rateRps)) * 1.08;
  const xMin = Math.min(...points.map((p) => p.rateRps)) * 0.92;
  const x = { domain: [xMin, xMax], grid: true };
  const best = sweep.maxRateMeetingSlo;
  // The rule's label goes on whichever side of it has room, shortened if neither has.
  const bestPx =
    best === null ? 0 : MARGIN.left + ((best - xMin) / (xMax - xMin)) * (width - MARGIN.left - MARGIN.right);
  const bestLabel = (() => {
    if (best === null) return null;
    for (const text of [`max rate meeting SLOs: ${fixed(best, 2)} req/s`, `max ${fixed(best, 2)} req/s`]) {
      const w = text.length * BOLD_CHAR_WIDTH + 8;
      if (bestPx - w >= 0) return { text, anchor: 'end' as const, dx: -6 };
      if (bestPx + w <= width) return { text, anchor: 'start' as const, dx: 6 };
    }
    return { text: fixed(best, 2), anchor: 'start' as const, dx: 6 };
  })();
  const bestRule = (yTop: number, label: boolean) =>
    best === null || bestLabel === null
      ? []
      : [
          Plot.ruleX([best], { stroke: COLORS.goodput, strokeWidth: 1.5, strokeDasharray: '6,4' }),
          ...(label
            ? [
                Plot.text([bestLabel.text], {
                  x: best,
                  y: yTop,
                  dx: bestLabel.dx,
                  textAnchor: bestLabel.anchor,
                  fill: '#065f46',
                  fontWeight: 600,
                  ...HALO,
                }),
              ]
            : []),
        ];
  const yRate = Math.max(...points.map((p) => Math.max(p.requestsPerSec, p.goodputRps))) * 1.25;
  const rates = Plot.plot({
    ...baseOptions(width, 190),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginLeft: MARGIN.left,
    marginBottom: 24,
    x: { ...x, label: null },
    y: { domain: [0, yRate], label: '↑ Requests/s', grid: true, ticks: 4 },
    marks: [
      ...bestRule(yRate * 0.93, true),
      Plot.line(data, {
        x: 'rateRps',
        y: 'requestsPerSec',
        stroke: COLORS.throughput,
        strokeDasharray: '4,3',
      }),
      Plot.line(data, { x: 'rateRps', y: 'goodputRps', stroke: COLORS.goodput, strokeWidth: 2 }),
      Plot.dot(data, {
        x: 'rateRps',
        y: 'goodputRps',
        r: 5,
        stroke: COLORS.goodput,
        strokeWidth: 2,
        fill: (d: { meetsSlo: boolean }) => (d.meetsSlo ? COLORS.goodput : 'white'),
        title: 'title',
        className: 'serve-sweep-point',
      }),
      // Only the two anchor runs are named: the swept ones are named by their rate, the x axis.
      Plot.text(
        data.filter((d) => d.label === 'synchronous' || d.label === 'saturating'),
        {
          x: 'rateRps',
          y: 'goodputRps',
          text: 'label',
          dy: 16,
          textAnchor: 'middle',
          fill: '#334155',
          fontSize: 11,
          ...HALO,
        },
      ),
    ],
  });
  const ttfts = data.filter((d) => d.p95TtftMs !== null);
  const slo = s.runs.find((r) => r.experiment === 'sweep')?.slo.ttftMs;
  const yTtft = Math.max(slo ?? 0, ...ttfts.map((d) => d.p95TtftMs ?? 0)) * 1.15;
  const ttft = Plot.plot({
    ...baseOptions(width, 200),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginLeft: MARGIN.left,
    marginBottom: 40,
    x: { ...x, label: 'Offered request rate (req/s) →' },
    y: { domain: [0, yTtft], label: '↑ p95 TTFT (ms)', grid: true, ticks: 4 },
    marks: [
      ...bestRule(0, false),
      ...(slo !== undefined
        ? [
            Plot.ruleY([slo], { stroke: COLORS.slo, strokeWidth: 1.5, strokeDasharray: '6,4' }),
            // At the right end, under the rule: past the last rise, nothing else is drawn there.
            Plot.text([`TTFT SLO ${fixed(slo, 0)} ms`], {
              x: xMax,
              y: slo,
              dx: -4,
              dy: 10,
              textAnchor: 'end',
              fill: COLORS.slo,
              fontWeight: 600,
              ...HALO,
            }),
          ]
        : []),
      Plot.line(ttfts, { x: 'rateRps', y: 'p95TtftMs', stroke: COLORS.ttft, strokeWidth: 2 }),
      Plot.dot(ttfts, {
        x: 'rateRps',
        y: 'p95TtftMs',
        r: 5,
        stroke: (d: { meetsSlo: boolean }) => (d.meetsSlo ? COLORS.ttft : COLORS.miss),
        strokeWidth: 2,
        fill: (d: { meetsSlo: boolean }) => (d.meetsSlo ? COLORS.ttft : 'white'),
        title: 'title',
      }),
    ],
  });
  const legend = legendSvg(
    [
      { label: 'goodput', color: COLORS.goodput, shape: 'line' },
      { label: 'finished req/s', color: COLORS.throughput, shape: 'dash' },
      { label: 'p95 TTFT', color: COLORS.ttft, shape: 'line' },
      { label: 'filled: meets the SLOs · hollow: misses them', color: '#94a3b8' },
    ],
    width,
  );
  return stackCharts(
    [
      { chart: legend },
      { heading: 'Goodput and throughput', chart: rates },
      { heading: 'p95 TTFT', chart: ttft },
    ],
    width,
  );
}
