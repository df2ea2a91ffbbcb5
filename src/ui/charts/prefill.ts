/**
 * Prefill against the prompt length L: throughput (tokens/s) and time to first token, both wall
 * clock (what a user waits for), each with the cost model's prediction as a dashed line. The
 * prediction is what the measured roofs allow (max(compute, bandwidth) time plus launch and submit
 * overhead), so the gap between the lines is efficiency.
 */
import * as Plot from '@observablehq/plot';
import type { Point } from '../../results/schema.ts';
import { fixed } from '../format.ts';
import {
  baseOptions,
  type ChartRun,
  chartHeight,
  colorByRun,
  MEASURED,
  type PlotNode,
  PREDICTED,
  predictedWallMs,
} from './common.ts';

interface Row {
  run: string;
  series: typeof MEASURED | typeof PREDICTED;
  L: number;
  value: number;
  title: string;
}

function rows(
  runs: readonly ChartRun[],
  value: (p: Point, predicted: boolean, run: ChartRun) => number,
  unit: string,
): Row[] {
  return runs.flatMap((run) =>
    run.points
      .filter((p) => p.pass === 'prefill')
      .flatMap((p): Row[] => [
        {
          run: run.label,
          series: MEASURED,
          L: p.tokens,
          value: value(p, false, run),
          title: `${run.label}\nL=${p.tokens}: ${fixed(value(p, false, run), 1)} ${unit} measured, ${fixed(value(p, true, run), 1)} predicted`,
        },
        {
          run: run.label,
          series: PREDICTED,
          L: p.tokens,
          value: value(p, true, run),
          title: `${run.label}\nL=${p.tokens}: ${fixed(value(p, true, run), 1)} ${unit} predicted`,
        },
      ]),
  );
}

/** Measured points joined by a solid line and the prediction dashed, coloured by series (one run) or by run. */
function lengthChart(runs: readonly ChartRun[], data: Row[], width: number, yLabel: string): PlotNode | null {
  if (data.length === 0) return null;
  const single = runs.length === 1;
  const measured = data.filter((d) => d.series === MEASURED);
  const predicted = data.filter((d) => d.series === PREDICTED);
  const color = single ? 'series' : 'run';
  return Plot.plot({
    ...baseOptions(width, chartHeight(width, 300)),
    x: { type: 'log', base: 2, label: 'Prompt length L (tokens, log₂) →', grid: true },
    y: { zero: true, label: yLabel, grid: true },
    color: single
      ? { domain: [MEASURED, PREDICTED], range: ['#2563eb', '#94a3b8'], legend: true }
      : colorByRun(runs),
    marks: [
      Plot.line(predicted, {
        x: 'L',
        y: 'value',
        z: 'run',
        stroke: color,
        strokeDasharray: '5,4',
        strokeWidth: 1.5,
      }),
      // Hollow marks keep a lone prediction visible, where a one-point line draws nothing.
      Plot.dot(predicted, { x: 'L', y: 'value', stroke: color, r: 3, fill: 'white', title: 'title' }),
      Plot.line(measured, { x: 'L', y: 'value', z: 'run', stroke: color, strokeWidth: 2 }),
      Plot.dot(measured, { x: 'L', y: 'value', fill: color, r: 4, title: 'title', tip: true }),
    ],
  });
}

export function prefillThroughputChart(runs: readonly ChartRun[], width: number): PlotNode | null {
  const data = rows(
    runs,
    (p, predicted, run) => {
      if (!predicted) return p.tokensPerSec;
      const ms = predictedWallMs(p, run.peaks);
      return ms > 0 ? p.tokens / (ms / 1000) : 0;
    },
    'tok/s',
  );
  return lengthChart(runs, data, width, '↑ Prefill throughput (tokens/s)');
}

export function ttftChart(runs: readonly ChartRun[], width: number): PlotNode | null {
  const data = rows(
    runs,
    (p, predicted, run) => (predicted ? predictedWallMs(p, run.peaks) : (p.ttftMs?.p50 ?? p.wallMedianMs)),
    'ms',
  );
  return lengthChart(runs, data, width, '↑ Time to first token (ms)');
}
