/**
 * B-scaling: one decode step of B sequences against B. Above, the step's time beside its roofline
 * bound (max(FLOPs ÷ FMA peak, bytes ÷ copy bandwidth) + submit, from this run's roofs); below, the
 * tokens/s that gives, B × 1000 ÷ step ms, beside the bound's. While decode is bandwidth-bound the
 * weights are read once per step whatever B is, so the step barely grows and tokens/s climbs almost
 * in proportion to B: that is why batching pays. Where the step starts to grow, compute (or the
 * kernels) took over.
 */
import * as Plot from '@observablehq/plot';
import type { BatchScalingPoint } from '../../spec/workloads/decode.ts';
import { fixed, formatNumber } from '../format.ts';
import { baseOptions } from './common.ts';
import { HALO } from './serve-common.ts';
import { legendSvg, stackCharts } from './stack.ts';

const COLORS = { measured: '#2563eb', bound: '#64748b' } as const;
const MARGIN = { top: 20, right: 20, left: 60 } as const;

export function batchScalingChart(points: readonly BatchScalingPoint[], width: number): SVGSVGElement | null {
  if (points.length === 0) return null;
  const sorted = [...points].sort((a, b) => a.batch - b.batch);
  const data = sorted.flatMap((p) => {
    const title = `B = ${p.batch}: step ${fixed(p.stepMs, 2)} ms against a bound of ${fixed(p.boundMs, 2)} ms (${fixed(p.ratio, 2)}×)\n${formatNumber(p.tokensPerSec)} tokens/s; the bound allows ${formatNumber((p.batch * 1000) / p.boundMs)}`;
    return [
      { series: 'measured', batch: p.batch, ms: p.stepMs, tps: p.tokensPerSec, title },
      { series: 'bound', batch: p.batch, ms: p.boundMs, tps: (p.batch * 1000) / p.boundMs, title },
    ];
  });
  const measured = data.filter((d) => d.series === 'measured');
  const bound = data.filter((d) => d.series === 'bound');
  const batches = sorted.map((p) => p.batch);
  const x = {
    type: 'log' as const,
    base: 2,
    domain: [batches[0] / 1.25, batches[batches.length - 1] * 1.25],
    ticks: batches,
    tickFormat: (b: number) => String(b),
    grid: true,
  };
  const last = sorted[sorted.length - 1];
  const line = (rows: typeof data, y: 'ms' | 'tps', series: 'measured' | 'bound') =>
    Plot.line(rows, {
      x: 'batch',
      y,
      stroke: COLORS[series],
      strokeWidth: series === 'measured' ? 2 : 1.5,
      ...(series === 'bound' ? { strokeDasharray: '6,4' } : {}),
    });
  const steps = Plot.plot({
    ...baseOptions(width, 200),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginLeft: MARGIN.left,
    marginBottom: 24,
    x: { ...x, label: null },
    y: { domain: [0, Math.max(...data.map((d) => d.ms)) * 1.15], label: '↑ Step (ms)', grid: true, ticks: 4 },
    marks: [
      line(bound, 'ms', 'bound'),
      line(measured, 'ms', 'measured'),
      Plot.dot(measured, {
        x: 'batch',
        y: 'ms',
        r: 4,
        fill: COLORS.measured,
        title: 'title',
        className: 'batch-step-point',
      }),
      Plot.text([`${fixed(last.ratio, 1)}× the bound at B = ${last.batch}`], {
        x: last.batch,
        y: last.stepMs,
        dx: -8,
        dy: -10,
        textAnchor: 'end',
        fill: '#1e3a8a',
        ...HALO,
      }),
    ],
  });
  const throughput = Plot.plot({
    ...baseOptions(width, 210),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginLeft: MARGIN.left,
    marginBottom: 40,
    x: { ...x, label: 'Sequences per decode step, B →' },
    y: {
      domain: [0, Math.max(...data.map((d) => d.tps)) * 1.1],
      label: '↑ Tokens/s',
      grid: true,
      ticks: 4,
      tickFormat: (v: number) => (v >= 1000 ? `${v / 1000}k` : String(v)),
    },
    marks: [
      line(bound, 'tps', 'bound'),
      line(measured, 'tps', 'measured'),
      Plot.dot(measured, { x: 'batch', y: 'tps', r: 4, fill: COLORS.measured, title: 'title' }),
    ],
  });
  const legend = legendSvg(
    [
      { label: 'measured', color: COLORS.measured, shape: 'line' },
      { label: 'roofline bound (FLOPs, bytes, submit)', color: COLORS.bound, shape: 'dash' },
    ],
    width,
  );
  return stackCharts(
    [
      { chart: legend },
      { heading: 'Decode step time', chart: steps },
      { heading: 'Decode throughput', chart: throughput },
    ],
    width,
  );
}
