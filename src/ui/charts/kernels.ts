/**
 * Where each pass spends its GPU time: one stacked bar per profiled pass, one segment per kernel
 * role. Times come from the profiled run of each point, where every kernel has its own timed pass,
 * so the stack can differ from the wall-clock median (which also holds submit and readback).
 */
import * as Plot from '@observablehq/plot';
import { fixed, formatMs, pointLabel } from '../format.ts';
import { formatsIn, pointFormat } from '../formats/weights.ts';
import { baseOptions, type ChartRun, fitMargins, KERNEL_COLORS, type PlotNode } from './common.ts';

/** Height of one bar row, px. */
const ROW_HEIGHT = 26;
/** Rough width of one character of a 12 px label, px, to size the left margin for bar labels. */
const CHAR_WIDTH = 6.8;

export function kernelsChart(runs: readonly ChartRun[], width: number, share: boolean): PlotNode | null {
  const single = runs.length === 1;
  const data = runs.flatMap((run, r) => {
    // A run of several formats has a pass of each size per format: the row names its format.
    const several = formatsIn(run.points).length > 1;
    return run.points
      .filter((p) => p.kernels.length > 0)
      .flatMap((p) => {
        const total = p.kernels.reduce((a, k) => a + k.medianMs, 0);
        // The fusion workload's points name their graph, so they are never read as the sweep's.
        const pass = `${p.pass} ${pointLabel(p)}${several ? ` ${pointFormat(p)}` : ''}`;
        const row = single ? pass : `#${r + 1} ${pass}`;
        return p.kernels.map((k) => ({
          row,
          kernel: k.name,
          ms: k.medianMs,
          title: `${single ? '' : `${run.label}\n`}${row}\n${k.name}: ${formatMs(k.medianMs)} ms (${total > 0 ? fixed((k.medianMs / total) * 100, 1) : '–'}% of pass), ${k.calls} calls`,
        }));
      });
  });
  if (data.length === 0) return null;
  const rows = [...new Set(data.map((d) => d.row))];
  const kernels = [...new Set(data.map((d) => d.kernel))];
  const base = baseOptions(width, 70 + rows.length * ROW_HEIGHT);
  return Plot.plot({
    ...base,
    ...fitMargins(
      width,
      Math.min(width * 0.4, 12 + CHAR_WIDTH * Math.max(...rows.map((r) => r.length))),
      base.marginRight ?? 0,
    ),
    x: {
      label: share ? 'Share of the pass’s GPU time →' : 'GPU time per pass (ms) →',
      grid: true,
      ...(share ? { tickFormat: '.0%' } : {}),
    },
    y: { domain: rows, label: null },
    color: {
      domain: kernels,
      range: kernels.map((_, i) => KERNEL_COLORS[i % KERNEL_COLORS.length]),
      legend: true,
    },
    marks: [
      Plot.barX(
        data,
        Plot.stackX({
          x: 'ms',
          y: 'row',
          fill: 'kernel',
          title: 'title',
          tip: true,
          inset: 0.5,
          ...(share ? { offset: 'normalize' } : {}),
        }),
      ),
      Plot.ruleX([0]),
    ],
  });
}
