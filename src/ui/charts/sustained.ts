/**
 * Sustained load over time: above, tok/s of each pass per window (prefill and decode on their own
 * axes, so a drop in either shows at its own scale), with the first minute's median as a dashed
 * baseline and the 10 % line under it; below, the FMA and copy roofs each time they were measured
 * again. A throttling laptop shows its windows sinking under the line, and its roofs with them.
 */
import * as Plot from '@observablehq/plot';
import { type SustainedSection, THROTTLE_DROP } from '../../spec/workloads/sustained.ts';
import { fixed, formatNumber } from '../format.ts';
import { baseOptions, PASS_COLORS } from './common.ts';
import { legendSvg, type StackPart, stackCharts } from './stack.ts';

const ROOF_COLORS = { fma: '#7c3aed', copy: '#059669' } as const;
const MARGIN = { top: 20, right: 20, left: 60 } as const;

export function sustainedChart(s: SustainedSection, width: number): SVGSVGElement | null {
  if (s.windows.length === 0 && s.roofs.length === 0) return null;
  const end = Math.max(
    s.durationS,
    ...s.roofs.map((r) => r.atS),
    ...s.windows.map((w) => w.startS + s.windowS),
  );
  const x = { domain: [0, end], label: null, grid: true } as const;
  const parts: StackPart[] = [
    {
      chart: legendSvg(
        [
          { label: 'prefill tok/s', color: PASS_COLORS.prefill, shape: 'line' },
          { label: 'decode tok/s', color: PASS_COLORS.decode, shape: 'line' },
          { label: `first minute, and ${THROTTLE_DROP * 100} % below it`, color: '#64748b', shape: 'dash' },
          { label: 'FMA GFLOP/s', color: ROOF_COLORS.fma, shape: 'line' },
          { label: 'copy GB/s', color: ROOF_COLORS.copy, shape: 'line' },
        ],
        width,
      ),
    },
  ];
  for (const pass of ['prefill', 'decode'] as const) {
    const rows = s.windows
      .filter((w) => w.pass === pass)
      .map((w) => ({
        t: w.startS + s.windowS / 2,
        tps: w.tokPerS,
        title: `${pass}, window from ${fixed(w.startS, 0)} s: ${formatNumber(w.tokPerS)} tok/s over ${w.passes} passes`,
      }));
    if (rows.length === 0) continue;
    const base = s.throttling.baseline[pass];
    const rules = base === null ? [] : [base, base * (1 - THROTTLE_DROP)];
    parts.push({
      heading: `${pass} tok/s per ${fixed(s.windowS, 0)} s window`,
      chart: Plot.plot({
        ...baseOptions(width, 170),
        marginTop: MARGIN.top,
        marginRight: MARGIN.right,
        marginLeft: MARGIN.left,
        marginBottom: 24,
        x,
        y: {
          domain: [0, Math.max(...rows.map((r) => r.tps), ...rules) * 1.15],
          label: '↑ tok/s',
          grid: true,
          ticks: 4,
        },
        marks: [
          Plot.ruleY(rules, { stroke: '#64748b', strokeDasharray: '6,4' }),
          Plot.line(rows, { x: 't', y: 'tps', stroke: PASS_COLORS[pass], strokeWidth: 2 }),
          Plot.dot(rows, {
            x: 't',
            y: 'tps',
            r: 3,
            fill: PASS_COLORS[pass],
            title: 'title',
            className: `sustained-${pass}`,
          }),
          ...(s.throttling.detected && s.throttling.pass === pass && s.throttling.startS !== null
            ? [Plot.ruleX([s.throttling.startS], { stroke: '#dc2626', strokeWidth: 1.5 })]
            : []),
        ],
      }),
    });
  }
  if (s.roofs.length > 0) {
    const rows = s.roofs.flatMap((r) => [
      {
        t: r.atS,
        v: r.fmaGflops,
        roof: 'fma' as const,
        title: `at ${fixed(r.atS, 0)} s: FMA ${formatNumber(r.fmaGflops)} GFLOP/s`,
      },
      {
        t: r.atS,
        v: r.copyGBps,
        roof: 'copy' as const,
        title: `at ${fixed(r.atS, 0)} s: copy ${formatNumber(r.copyGBps)} GB/s`,
      },
    ]);
    parts.push({
      heading: 'Roofs measured again (GFLOP/s and GB/s)',
      chart: Plot.plot({
        ...baseOptions(width, 170),
        marginTop: MARGIN.top,
        marginRight: MARGIN.right,
        marginLeft: MARGIN.left,
        marginBottom: 40,
        x: { ...x, label: 'Seconds since the start →' },
        y: {
          domain: [0, Math.max(...rows.map((r) => r.v)) * 1.15],
          label: '↑ GFLOP/s · GB/s',
          grid: true,
          ticks: 4,
        },
        marks: (['fma', 'copy'] as const).flatMap((roof) => {
          const own = rows.filter((r) => r.roof === roof);
          return [
            Plot.line(own, { x: 't', y: 'v', stroke: ROOF_COLORS[roof], strokeWidth: 1.5 }),
            Plot.dot(own, {
              x: 't',
              y: 'v',
              r: 3.5,
              fill: ROOF_COLORS[roof],
              title: 'title',
              className: 'sustained-roof',
            }),
          ];
        }),
      }),
    });
  }
  return stackCharts(parts, width);
}
