/**
 * What every chart shares: the data it is drawn from, the palettes and the base Plot options.
 * Charts are drawn with Observable Plot and nothing else; this module only holds their common settings.
 */
import type * as Plot from '@observablehq/plot';
import type { Roofs } from '../../measure/roofline.ts';
import type { PeerRecord } from '../../peers/schema.ts';
import { PEER_CLOCK_WORDS, peerClock } from '../../results/peer-compare.ts';
import type { Point } from '../../results/schema.ts';
import type { VerifyPoint } from '../../spec/workloads/speculative-result.ts';

/** A rendered chart: Plot's SVG, or a figure holding legends and the SVG. */
export type PlotNode = (SVGSVGElement | HTMLElement) & Plot.Plot;

/** What a chart panel shows and exports: one Plot, or several Plot SVGs stacked into one SVG (stack.ts). */
export type ChartNode = SVGSVGElement | HTMLElement;

/**
 * One run as the charts see it. The run view draws one, live while points arrive (peaks are then
 * unknown); the compare view overlays several, one colour per run.
 */
export interface ChartRun {
  /** Legend label, unique among the runs drawn together. */
  label: string;
  points: readonly Point[];
  /** Measured roofs; null while a live run has not reported them. */
  peaks: Roofs | null;
  /** Verify passes of speculative decoding (the verify-K curve), placed on the roofline like passes. */
  verify?: readonly VerifyPoint[];
  /** Other engines timed on the same file (`--peer`): placed at their joined point's intensity. */
  peers?: readonly PeerRecord[];
}

/** Legend names of the two series of the measured-against-predicted charts. */
export const MEASURED = 'measured';
export const PREDICTED = 'cost model';

/** Colours of the two passes when a single run is drawn. */
export const PASS_COLORS = { prefill: '#2563eb', decode: '#ea580c' } as const;
export const PASSES = ['prefill', 'decode'] as const;

/** One colour per compared run (Tableau 10, colour-blind friendly, distinct in print). */
export const RUN_COLORS = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
] as const;

/** The colour of the i-th compared run; it cycles past ten runs. */
export function runColor(i: number): string {
  return RUN_COLORS[i % RUN_COLORS.length];
}

/** Kernel roles (13 today) need more colours than Tableau 10. */
export const KERNEL_COLORS = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
  '#1f3b73',
  '#a0522d',
  '#2ca02c',
  '#8c564b',
  '#17becf',
  '#7f7f7f',
] as const;

/** The class Plot puts on its SVG and legends; export finds legend swatches by it. */
export const PLOT_CLASS = 'bench-plot';

/** Font of every chart, set explicitly so an exported SVG looks the same outside the page. */
export const CHART_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

/** Options every chart starts from. */
export function baseOptions(width: number, height: number): Plot.PlotOptions {
  return {
    width,
    height,
    className: PLOT_CLASS,
    style: { fontSize: '12px', fontFamily: CHART_FONT, background: 'transparent', overflow: 'visible' },
    marginTop: 24,
    marginRight: 24,
    marginBottom: 44,
    marginLeft: 56,
  };
}

/**
 * Margins for labels beside the plot, shrunk where a chart is drawn narrow (a phone, or a panel
 * measured mid-layout) so the plot keeps at least `plotShare` of the width. Plot collapses an x
 * range that runs backwards and then draws each bar at the frame's width, which is negative (the
 * browser rejects such a <rect>). Labels longer than their margin are clipped, not the chart.
 */
export function fitMargins(
  width: number,
  left: number,
  right: number,
  plotShare = 0.4,
): { marginLeft: number; marginRight: number } {
  const room = Math.max(0, width * (1 - plotShare));
  const scale = left + right > room ? room / (left + right) : 1;
  return { marginLeft: left * scale, marginRight: right * scale };
}

/** Heights scale down on phones, where a chart is about as wide as it is tall. */
export function chartHeight(width: number, wide: number): number {
  return width < 520 ? Math.round(Math.max(240, width * 0.8)) : wide;
}

/** Colour scale options: by pass for a single run, by run when comparing. */
export function colorByRun(runs: readonly ChartRun[]): Plot.ScaleOptions {
  return {
    domain: runs.map((r) => r.label),
    range: RUN_COLORS.slice(0, Math.max(1, runs.length)),
    legend: true,
  };
}

/**
 * The cost model's prediction on the wall clock, for charts of what a user waits for (TTFT, TPOT,
 * tokens/s). A point placed by GPU time was predicted without the submit and readback its GPU span
 * does not hold; the wall clock holds them, so they are added back.
 */
export function predictedWallMs(p: Point, peaks: Roofs | null): number {
  return p.timebase === 'wall' ? p.predictedMs : p.predictedMs + (peaks?.submitUs ?? 0) / 1000;
}

/** Which clock placed the passes drawn, in words, so a chart never mixes clocks silently. */
export function clockNote(runs: readonly ChartRun[], kernelsShown: boolean): string {
  const points = runs.flatMap((r) => [...r.points, ...(r.verify ?? [])]);
  if (points.length === 0) return '';
  const gpu = points.filter((p) => p.timebase === 'gpu').length;
  const wall = points.length - gpu;
  const passes =
    wall === 0
      ? 'Passes placed by GPU time (timestamps).'
      : gpu === 0
        ? 'Passes placed by wall time (submit and readback included).'
        : `Passes placed by two clocks: ${gpu} by GPU time, ${wall} by wall time (submit and readback included).`;
  const kernels = kernelsShown
    ? wall > 0
      ? ' Per-kernel points are GPU time: do not read them against the wall-timed passes.'
      : ' Per-kernel points are GPU time too.'
    : '';
  const engines = new Set(
    runs.flatMap((r) => (r.peers ?? []).filter((p) => p.points.length > 0).map((p) => p.engine)),
  );
  // Each engine's own clock: the native peer's points name theirs (llama.cpp's counters, or the wall
  // clock around each call where they could not be read, and in files from before it read them);
  // wllama reports llama.cpp's own.
  const nativeClocks = new Set(
    runs.flatMap((r) =>
      (r.peers ?? [])
        .filter((p) => p.engine === 'llama.cpp')
        .flatMap((p) => p.points.map((pt) => peerClock(p, pt))),
    ),
  );
  const clocks = [
    nativeClocks.size > 0
      ? `llama.cpp by ${[...nativeClocks].map((c) => PEER_CLOCK_WORDS[c]).join(' or ')}`
      : '',
    engines.has('wllama') ? 'wllama by llama.cpp’s own timings' : '',
  ].filter(Boolean);
  const peers =
    clocks.length > 0
      ? ` ◇ llama.cpp on the same file (${clocks.join('; ')}), at the same FLOPs and bytes.`
      : '';
  return passes + kernels + peers;
}
