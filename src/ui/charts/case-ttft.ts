/**
 * The case study's verdict in one picture: each arm's short-request TTFT p99 as a bar, the
 * baseline's as a dashed line and 1.5× it (the combination's target) dotted, so the incident's
 * jump and how far each remedy brings it back read at a glance. The value sits at each bar's end.
 */
import * as Plot from '@observablehq/plot';
import { caseFigures } from '../../spec/workloads/serve-case-report.ts';
import type { ServeRun } from '../../spec/workloads/serve-result.ts';
import { fixed } from '../format.ts';
import { baseOptions, fitMargins, type PlotNode } from './common.ts';
import { HALO } from './serve-common.ts';

const BAR_PX = 26;

export function caseTtftChart(arms: readonly ServeRun[], width: number): PlotNode | null {
  const rows = arms
    .map((r) => ({ f: caseFigures(r), role: r.caseRole }))
    .filter((x) => x.f.shortTtftP99 !== null)
    .map((x) => ({
      arm: x.f.label,
      ms: x.f.shortTtftP99 as number,
      kind: x.role === 'baseline' ? 'baseline' : x.role === 'incident' ? 'incident' : 'remedy',
      title: `${x.f.label}: short TTFT p99 ${fixed(x.f.shortTtftP99 as number, 0)} ms over ${x.f.nShort} short requests`,
    }));
  const base = rows.find((r) => r.kind === 'baseline');
  if (!base || rows.length < 2) return null;
  const xMax = Math.max(...rows.map((r) => r.ms), 1.5 * base.ms) * 1.15;
  return Plot.plot({
    ...baseOptions(width, 40 + 48 + rows.length * BAR_PX),
    ...fitMargins(width, Math.min(280, Math.max(...rows.map((r) => r.arm.length)) * 6.4 + 12), 24),
    x: { domain: [0, xMax], label: 'Short requests’ TTFT p99 (ms) →', grid: true },
    y: { domain: rows.map((r) => r.arm), label: null },
    color: {
      domain: ['baseline', 'incident', 'remedy'],
      range: ['#4e79a7', '#e15759', '#59a14f'],
      legend: true,
    },
    marks: [
      Plot.barX(rows, { x: 'ms', y: 'arm', fill: 'kind', title: 'title' }),
      Plot.text(rows, {
        x: 'ms',
        y: 'arm',
        text: (d: { ms: number }) => fixed(d.ms, 0),
        fill: '#0f172a',
        dx: 4,
        textAnchor: 'start',
        fontSize: 11,
        ...HALO,
      }),
      Plot.ruleX([base.ms], { stroke: '#0f172a', strokeDasharray: '4,3' }),
      Plot.ruleX([1.5 * base.ms], { stroke: '#0f172a', strokeDasharray: '1,3' }),
      Plot.text(['1.5 × baseline'], {
        x: 1.5 * base.ms,
        frameAnchor: 'top',
        dy: -10,
        fontSize: 10,
        fill: '#0f172a',
        ...HALO,
      }),
    ],
  });
}
