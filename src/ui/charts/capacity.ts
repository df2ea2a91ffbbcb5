/**
 * Capacity: memory against the number of concurrent sessions. Both lines start at the weights
 * (the grey band) and climb by one session's KV cache per session: the paged cache by the traffic
 * mix's pages, the contiguous one by the full reserve per session, which is why it climbs faster.
 * Where a line crosses the usable memory (GPUs × memory × headroom) is the most sessions that fit;
 * the raw memory above it is what the headroom keeps back. The dotted rule marks the sessions asked for.
 */
import * as Plot from '@observablehq/plot';
import type { CapacityEstimate, CapacityInput } from '../../capacity/estimate.ts';
import { formatBytes, formatExact } from '../format.ts';
import { baseOptions, chartHeight, type PlotNode } from './common.ts';

/** Series colours: the paged cache in the page's accent, the contiguous one in the decode orange. */
const COLORS = { paged: '#2563eb', contiguous: '#ea580c' } as const;

/** A white outline under chart text, so a line or grid passing behind a label does not hide it. */
const HALO = { stroke: 'white', strokeWidth: 3, paintOrder: 'stroke' } as const;

/** The axes reach this far past the largest concurrency or memory drawn, so labels have room. */
const PAD = 1.15;

/** Lines are drawn through at most this many sessions (they are straight; this feeds the tooltip). */
const MAX_SAMPLES = 200;

/** Weight band thinner than this (px) gets its label above it rather than inside. */
const BAND_LABEL_MIN_PX = 18;

/** Height of a line of chart text (px), the least distance between two labels. */
const LABEL_PX = 15;

/** Below this width (px) the memory rules are labelled by name only, to keep the right margin narrow. */
const COMPACT_WIDTH = 560;

const GB = 1e9;

export function capacityChart(e: CapacityEstimate, input: CapacityInput, width: number): PlotNode {
  const height = chartHeight(width, 400);
  const compact = width < COMPACT_WIDTH;
  const margin = { top: 30, right: compact ? 56 : 128, bottom: 44, left: 72 };
  const weights = e.weightsBytes / GB;
  const usable = (input.gpus * e.usableBytesPerGpu) / GB;
  const raw = (input.gpus * input.gpuMem) / GB;
  const series = [
    {
      key: 'paged',
      label: `paged: ${input.pageSize}-token pages`,
      perSession: e.pagedBytesPerSession / GB,
      fit: e.maxConcurrency.paged,
    },
    {
      key: 'contiguous',
      label: `contiguous: ${formatExact(e.contiguousReserve)} tokens each`,
      perSession: (e.kvBytesPerToken * e.contiguousReserve) / GB,
      fit: e.maxConcurrency.contiguous,
    },
  ] as const;
  const xMax = Math.max(
    4,
    Math.ceil(PAD * Math.max(input.sessions, e.maxConcurrency.paged, e.maxConcurrency.contiguous)),
  );
  const yMax = PAD * Math.max(raw, e.totalBytes / GB, weights + input.sessions * series[0].perSession);
  const step = Math.max(1, Math.ceil(xMax / MAX_SAMPLES));
  const xs = Array.from({ length: Math.floor(xMax / step) + 1 }, (_, i) => i * step);
  if (xs[xs.length - 1] !== xMax) xs.push(xMax);
  const lines = series.flatMap((s) =>
    xs.map((n) => ({ series: s.label, n, gb: weights + n * s.perSession })),
  );
  const gbText = (gb: number) => formatBytes(gb * GB, 'decimal');
  const tips = xs.map((n) => ({
    n,
    gb: weights + n * series[0].perSession,
    title: [
      `${formatExact(n)} sessions`,
      ...series.map((s) => `${s.key}: ${gbText(weights + n * s.perSession)}`),
      `usable: ${gbText(usable)}`,
    ].join('\n'),
  }));
  // Both fit counts at one point would print one label over the other; say it once.
  const fits =
    series[0].fit === series[1].fit
      ? [
          {
            n: series[0].fit,
            gb: weights + series[0].fit * series[0].perSession,
            text: `${formatExact(series[0].fit)} fit (both)`,
          },
        ]
      : series.map((s) => ({
          n: s.fit,
          gb: weights + s.fit * s.perSession,
          text: `${formatExact(s.fit)} fit`,
        }));
  const pxPerGb = (height - margin.top - margin.bottom) / yMax;
  const bandInside = weights * pxPerGb >= BAND_LABEL_MIN_PX;
  // The memory rules are labelled in the right margin, clear of the lines; when the two rules
  // are closer than a line of text (headroom near 1), the labels are pushed apart.
  const gapPx = (raw - usable) * pxPerGb;
  const push = Math.max(0, (LABEL_PX - gapPx) / 2);
  const ruleLabel = { x: xMax, dx: 8, textAnchor: 'start', lineAnchor: 'middle', ...HALO } as const;

  return Plot.plot({
    ...baseOptions(width, height),
    marginTop: margin.top,
    marginRight: margin.right,
    marginBottom: margin.bottom,
    marginLeft: margin.left,
    caption: `Raw memory ${input.gpus} × ${gbText(input.gpuMem / GB)} = ${gbText(raw)}; usable × headroom ${input.headroom} = ${gbText(usable)}; weights ${gbText(weights)}; ${formatExact(input.sessions)} sessions need ${gbText(e.totalBytes / GB)}.`,
    x: {
      domain: [0, xMax],
      label: 'Concurrent sessions of the traffic mix →',
      labelAnchor: 'center',
      grid: true,
    },
    // Rotated beside the axis, so the top margin is free for the sessions label.
    y: {
      domain: [0, yMax],
      label: 'Weights + KV cache (GB = 10⁹ bytes) →',
      labelAnchor: 'center',
      grid: true,
    },
    color: { domain: series.map((s) => s.label), range: [COLORS.paged, COLORS.contiguous], legend: true },
    marks: [
      Plot.rect([{ x1: 0, x2: xMax, y1: 0, y2: weights }], {
        x1: 'x1',
        x2: 'x2',
        y1: 'y1',
        y2: 'y2',
        fill: '#e2e8f0',
      }),
      // Inside the band when it is tall enough, else above its right end, where the lines have climbed away.
      Plot.text([`weights ${gbText(weights)}`], {
        x: bandInside ? 0 : xMax,
        y: bandInside ? weights / 2 : weights,
        dx: bandInside ? 6 : -6,
        dy: bandInside ? 0 : -8,
        textAnchor: bandInside ? 'start' : 'end',
        fill: '#475569',
        ...HALO,
      }),
      Plot.ruleY([raw], { stroke: '#475569', strokeWidth: 1.5 }),
      Plot.text([compact ? 'raw' : `raw ${gbText(raw)}`], {
        ...ruleLabel,
        y: raw,
        dy: -push,
        fill: '#334155',
      }),
      Plot.ruleY([usable], { stroke: '#b45309', strokeWidth: 1.5, strokeDasharray: '6,4' }),
      Plot.text([compact ? 'usable' : `usable ${gbText(usable)}`], {
        ...ruleLabel,
        y: usable,
        dy: push,
        fill: '#b45309',
        fontWeight: 600,
      }),
      Plot.line(lines, { x: 'n', y: 'gb', stroke: 'series', strokeWidth: 2.5, clip: true }),
      Plot.ruleX([input.sessions], { stroke: '#0f172a', strokeDasharray: '2,3' }),
      Plot.text([`${formatExact(input.sessions)} sessions`], {
        x: input.sessions,
        frameAnchor: 'top',
        dy: -10,
        fill: '#0f172a',
        fontWeight: 600,
      }),
      Plot.dot(fits, { x: 'n', y: 'gb', r: 4.5, fill: '#0f172a', stroke: 'white' }),
      // Right of and below the crossing: the line that crosses there runs above it to the right.
      Plot.text(fits, {
        x: 'n',
        y: 'gb',
        text: 'text',
        dx: 6,
        dy: 14,
        textAnchor: 'start',
        fill: '#0f172a',
        fontWeight: 600,
        ...HALO,
      }),
      Plot.tip(tips, Plot.pointerX({ x: 'n', y: 'gb', title: 'title' })),
    ],
  });
}
