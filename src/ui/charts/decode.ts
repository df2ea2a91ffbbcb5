/**
 * Decode: time per output token (TPOT) against the context depth, with the cost model's prediction
 * dashed, and the distribution of inter-token latencies as a CDF. Both are wall clock, what a user
 * waits for: TPOT is the median over repetitions of (last − first token) / (gen − 1), and the ITLs
 * are every gap between two generated tokens of the point's repetitions.
 */
import * as Plot from '@observablehq/plot';
import { fixed, formatMs, pointLabel } from '../format.ts';
import {
  baseOptions,
  type ChartRun,
  chartHeight,
  colorByRun,
  MEASURED,
  type PlotNode,
  PREDICTED,
  predictedWallMs,
  RUN_COLORS,
} from './common.ts';

export function tpotChart(runs: readonly ChartRun[], width: number): PlotNode | null {
  const single = runs.length === 1;
  const data = runs.flatMap((run) =>
    run.points
      .filter((p) => p.pass === 'decode' && p.tpotMs)
      .map((p) => {
        const tpot = p.tpotMs ?? { p50: 0, p95: 0, p99: 0 };
        const predictedMs = predictedWallMs(p, run.peaks);
        return {
          run: run.label,
          depth: p.depth,
          ms: tpot.p50,
          predictedMs,
          title: `${run.label}\n${pointLabel(p)}: TPOT ${formatMs(tpot.p50)} ms measured (p95 ${formatMs(tpot.p95)}), ${formatMs(predictedMs)} predicted`,
        };
      }),
  );
  if (data.length === 0) return null;
  const color = single ? () => MEASURED : 'run';
  return Plot.plot({
    ...baseOptions(width, chartHeight(width, 300)),
    x: { label: 'Context depth (tokens) →', grid: true, zero: true },
    y: { zero: true, label: '↑ Time per output token (ms)', grid: true },
    color: single
      ? { domain: [MEASURED, PREDICTED], range: ['#ea580c', '#94a3b8'], legend: true }
      : colorByRun(runs),
    marks: [
      Plot.line(data, {
        x: 'depth',
        y: 'predictedMs',
        z: 'run',
        stroke: single ? () => PREDICTED : 'run',
        strokeDasharray: '5,4',
        strokeWidth: 1.5,
      }),
      // Hollow marks keep a lone prediction visible, where a one-point line draws nothing.
      Plot.dot(data, {
        x: 'depth',
        y: 'predictedMs',
        stroke: single ? () => PREDICTED : 'run',
        r: 3,
        fill: 'white',
      }),
      Plot.line(data, { x: 'depth', y: 'ms', z: 'run', stroke: color, strokeWidth: 2 }),
      Plot.dot(data, { x: 'depth', y: 'ms', fill: color, r: 4, title: 'title', tip: true }),
    ],
  });
}

/**
 * Empirical CDF of the step times: one line per depth for a single run, one per run (all depths
 * pooled) when comparing, so devices are compared on the same footing.
 */
export function itlChart(runs: readonly ChartRun[], width: number): PlotNode | null {
  const single = runs.length === 1;
  const groups = runs.flatMap((run) => {
    const decode = run.points.filter((p) => p.pass === 'decode');
    if (single) return decode.map((p) => ({ series: pointLabel(p), samples: p.itlSamplesMs ?? [] }));
    // Several runs: one curve each, its depths pooled, and the legend says which were pooled.
    const depths = [...new Set(decode.map((p) => p.depth))].sort((a, b) => a - b);
    return decode.length > 0
      ? [
          {
            series: depths.length > 1 ? `${run.label} (depths ${depths.join(', ')} pooled)` : run.label,
            samples: decode.flatMap((p) => p.itlSamplesMs ?? []),
          },
        ]
      : [];
  });
  const data = groups.flatMap(({ series, samples }) =>
    [...samples]
      .sort((a, b) => a - b)
      .map((ms, i, sorted) => ({
        series,
        ms,
        share: (i + 1) / sorted.length,
        title: `${series}: ${fixed(((i + 1) / sorted.length) * 100, 0)}% of tokens within ${formatMs(ms)} ms`,
      })),
  );
  if (data.length === 0) return null;
  const series = groups.map((g) => g.series);
  return Plot.plot({
    ...baseOptions(width, chartHeight(width, 300)),
    x: { label: 'Inter-token latency (ms) →', grid: true },
    y: { domain: [0, 1], label: '↑ Share of tokens at or below', grid: true, tickFormat: '.0%' },
    // One colour per curve, in run order when comparing (the series name the pooled depths).
    color: { domain: series, range: series.map((_, i) => RUN_COLORS[i % RUN_COLORS.length]), legend: true },
    marks: [
      Plot.line(data, { x: 'ms', y: 'share', stroke: 'series', curve: 'step-after', strokeWidth: 2 }),
      Plot.dot(data, { x: 'ms', y: 'share', fill: 'series', r: 2.5, title: 'title', tip: true }),
    ],
  });
}
