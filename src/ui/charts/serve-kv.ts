/**
 * The engine's state after every step, per arm, on one time axis: KV pages in use against the pool
 * (a full pool is what admission waits on and what preempts), and the running batch against
 * maxBatch with the queue beside it. Continuous batching keeps the batch near full while requests
 * wait; static batching drains it to a few long requests while the queue grows.
 */
import * as Plot from '@observablehq/plot';
import type { ServeRun } from '../../spec/workloads/serve-result.ts';
import { fixed } from '../format.ts';
import { baseOptions } from './common.ts';
import { HALO, longestSeconds } from './serve-common.ts';
import { legendSvg, type StackPart, stackCharts } from './stack.ts';

const COLORS = { kv: '#0f766e', running: '#4e79a7', waiting: '#e15759' } as const;
/** An arm with pools: each pool's pages in use, first pool then second. */
const POOL_COLORS = ['#7c3aed', '#b45309'] as const;
const PLOT_PX = 92;
const MARGIN = { top: 18, right: 16, bottom: 22, left: 52 } as const;
const LAST_BOTTOM = 38;

function kvPlot(run: ServeRun, xMax: number, width: number) {
  const total = Math.max(1, ...run.timeline.map((p) => p.kvTotalPages));
  const data = [
    { t: 0, used: 0, title: '' },
    ...run.timeline.map((p) => ({
      t: p.tMs / 1000,
      used: p.kvUsedPages,
      title: `${fixed(p.tMs, 0)} ms: ${p.kvUsedPages} of ${p.kvTotalPages} KV pages in use (${fixed((100 * p.kvUsedPages) / Math.max(1, p.kvTotalPages), 0)}%)`,
    })),
  ];
  return Plot.plot({
    ...baseOptions(width, MARGIN.top + MARGIN.bottom + PLOT_PX),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginBottom: MARGIN.bottom,
    marginLeft: MARGIN.left,
    x: { domain: [0, xMax], label: null, grid: true },
    y: { domain: [0, total * 1.08], label: '↑ KV pages', grid: true, ticks: 3 },
    marks: [
      Plot.areaY(data, { x: 't', y: 'used', curve: 'step-after', fill: COLORS.kv, fillOpacity: 0.25 }),
      Plot.lineY(data, {
        x: 't',
        y: 'used',
        curve: 'step-after',
        stroke: COLORS.kv,
        strokeWidth: 1.5,
        className: 'serve-kv-line',
      }),
      Plot.ruleY([total], { stroke: '#0f172a', strokeDasharray: '4,3' }),
      Plot.text([`pool: ${total} pages`], {
        x: xMax,
        y: total,
        dy: -7,
        textAnchor: 'end',
        fill: '#0f172a',
        fontSize: 11,
        ...HALO,
      }),
      ...poolMarks(run),
      Plot.tip(data, Plot.pointerX({ x: 't', y: 'used', title: 'title' })),
    ],
  });
}

/**
 * An arm with pools: each pool's pages in use as its own line under its own limit (its share of
 * the pool), so a long pool that fills while the short one idles shows. Nothing without pools.
 */
function poolMarks(run: ServeRun) {
  const pools = run.pools ?? [];
  if (pools.length === 0 || !run.timeline.some((p) => p.pools)) return [];
  return pools.flatMap((pool, k) => {
    const color = POOL_COLORS[k % POOL_COLORS.length];
    const data = [
      { t: 0, used: 0 },
      ...run.timeline.map((p) => ({ t: p.tMs / 1000, used: p.pools?.[k]?.kvUsedPages ?? 0 })),
    ];
    return [
      Plot.lineY(data, {
        x: 't',
        y: 'used',
        curve: 'step-after',
        stroke: color,
        strokeWidth: 1.5,
        className: 'serve-kv-pool-line',
      }),
      Plot.ruleY([pool.pages], { stroke: color, strokeDasharray: '2,3' }),
      Plot.text([`${pool.name}: ${pool.pages} pages`], {
        x: 0,
        y: pool.pages,
        dy: -7,
        dx: 4,
        textAnchor: 'start',
        fill: color,
        fontSize: 11,
        ...HALO,
      }),
    ];
  });
}

function batchPlot(run: ServeRun, xMax: number, width: number, last: boolean) {
  const bottom = last ? LAST_BOTTOM : MARGIN.bottom;
  const data = [
    { t: 0, running: 0, waiting: 0, title: '' },
    ...run.timeline.map((p) => ({
      t: p.tMs / 1000,
      running: p.running,
      waiting: p.waiting,
      title: `${fixed(p.tMs, 0)} ms: ${p.running} running, ${p.waiting} waiting; the step took ${fixed(p.stepMs, 1)} ms (${p.decodeRows} decode rows, ${p.prefillTokens} prompt tokens)`,
    })),
  ];
  const yMax = Math.max(run.maxBatch, ...data.map((d) => Math.max(d.running, d.waiting))) * 1.1;
  return Plot.plot({
    ...baseOptions(width, MARGIN.top + bottom + PLOT_PX),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginBottom: bottom,
    marginLeft: MARGIN.left,
    x: { domain: [0, xMax], label: last ? 'Time since the arm started (s) →' : null, grid: true },
    y: { domain: [0, yMax], label: '↑ Requests', grid: true, ticks: 3 },
    marks: [
      Plot.areaY(data, { x: 't', y: 'running', curve: 'step-after', fill: COLORS.running, fillOpacity: 0.3 }),
      Plot.lineY(data, {
        x: 't',
        y: 'running',
        curve: 'step-after',
        stroke: COLORS.running,
        strokeWidth: 1.5,
        className: 'serve-running-line',
      }),
      Plot.lineY(data, {
        x: 't',
        y: 'waiting',
        curve: 'step-after',
        stroke: COLORS.waiting,
        strokeWidth: 1.5,
      }),
      Plot.ruleY([run.maxBatch], { stroke: '#0f172a', strokeDasharray: '4,3' }),
      Plot.text([`max batch ${run.maxBatch}`], {
        x: xMax,
        y: run.maxBatch,
        dy: -7,
        textAnchor: 'end',
        fill: '#0f172a',
        fontSize: 11,
        ...HALO,
      }),
      Plot.tip(data, Plot.pointerX({ x: 't', y: 'running', title: 'title' })),
    ],
  });
}

/** Per arm, KV pages in use and the batch over time, stacked on one time axis under a legend. */
export function kvBatchChart(runs: readonly ServeRun[], width: number): SVGSVGElement | null {
  const withSteps = runs.filter((r) => r.timeline.length > 0);
  if (withSteps.length === 0) return null;
  const xMax = longestSeconds(withSteps);
  // The pools' names, from the first arm that has them (the case's routing arms share theirs).
  const pooled = withSteps.find((r) => (r.pools?.length ?? 0) > 0)?.pools ?? [];
  const parts: StackPart[] = [
    {
      chart: legendSvg(
        [
          { label: 'KV pages in use', color: COLORS.kv },
          ...pooled.map((p, k) => ({
            label: `pool ${p.name}`,
            color: POOL_COLORS[k % POOL_COLORS.length],
            shape: 'line' as const,
          })),
          { label: 'running', color: COLORS.running },
          { label: 'waiting', color: COLORS.waiting, shape: 'line' },
          { label: 'limit', color: '#0f172a', shape: 'dash' },
        ],
        width,
      ),
    },
  ];
  withSteps.forEach((run, i) => {
    parts.push(
      { heading: `${run.label}: KV cache`, chart: kvPlot(run, xMax, width) },
      {
        heading: `${run.label}: batch and queue`,
        chart: batchPlot(run, xMax, width, i === withSteps.length - 1),
      },
    );
  });
  return stackCharts(parts, width);
}
