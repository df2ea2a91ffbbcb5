/**
 * The roofline: every measured pass placed by arithmetic intensity (x, FLOP/byte) against achieved
 * GFLOP/s (y), both logarithmic, under the roofs measured on the same device in the same run.
 *
 * - Bandwidth slope: GFLOP/s = copy GB/s × intensity. A point on or near it is bandwidth-bound.
 * - Compute roof: the FMA peak, flat. A point under it, right of the ridge, is compute-bound.
 * - Ridge: where the two meet (FMA peak / copy bandwidth); the intensity a pass needs to stop being
 *   limited by memory.
 * - Overhead ceiling: launches and submits cap a pass no matter its intensity. A pass of F FLOPs
 *   and n dispatches reaches at most F / (n·dispatch + submit) FLOP/s, which depends on F, so it is
 *   not one line for every point. We draw it for a typical decode step (median FLOPs and dispatches
 *   of the decode points, or of all points without decode), as a horizontal line: decode is the pass
 *   small enough for overhead to bind, and a decode point near that line is launch/submit-bound.
 * - Verify passes (speculative decoding), when a run has them: one connected series per depth,
 *   ordered by k. A pass of k tokens does k times a decode step's work on nearly the same bytes, so
 *   the series slides right, from the bandwidth slope toward the compute roof.
 * - Weight formats, when a run measured several (the format sweep): each point is labelled with its
 *   format, and a pass of one size is one connected series from the widest format to the narrowest.
 *   A narrower format does the same FLOPs on fewer bytes, so its point moves right.
 */
import * as Plot from '@observablehq/plot';
import type { Roofs } from '../../measure/roofline.ts';
import { ownPointFor, peerName } from '../../peers/report.ts';
import type { Point } from '../../results/schema.ts';
import { percentile } from '../../stats.ts';
import { fixed, formatIntensity, formatMs, formatNumber, pointLabel } from '../format.ts';
import { formatRank, formatsIn, pointFormat } from '../formats/weights.ts';
import {
  baseOptions,
  type ChartRun,
  chartHeight,
  clockNote,
  colorByRun,
  PASS_COLORS,
  PASSES,
  type PlotNode,
} from './common.ts';

export interface RooflineOptions {
  width: number;
  /** Also place each kernel of each profiled pass (hollow marks). */
  showKernels: boolean;
}

/** Class of the group holding one mark per measured point; tests count its children. */
const ROOFLINE_POINT_CLASS = 'roofline-point';
/** Outline colours of the peers' diamonds, clear of the passes' blue and orange and the verify series. */
const PEER_COLORS = ['#15803d', '#0f766e', '#4d7c0f'] as const;
/** Class of the group holding one mark per peer point (llama.cpp beside the run). */
export const ROOFLINE_PEER_CLASS = 'roofline-peer';
/** Class of the group holding one mark per verify pass. */
const ROOFLINE_VERIFY_CLASS = 'roofline-verify';

/** Plain numbers on the log axes (0.2, 30, 2000): SI prefixes would read "200m" as 200 milli-something. */
const LOG_TICKS = '~g';

/** A white outline under chart text, so a line or grid passing behind a label does not hide it. */
const HALO = { stroke: 'white', strokeWidth: 3, paintOrder: 'stroke' } as const;

/** Below this width (px) the roofline drops its slope and ceiling labels. */
const COMPACT_WIDTH = 520;

/** Domains reach this factor beyond the outermost point or roof, so labels have room. */
const DOMAIN_PAD = 4;

/** Room the ridge label needs right of the ridge, px (`ridge 7.23 FLOP/B` and its offset). */
const RIDGE_LABEL_PX = 125;

/** Legend name of the verify passes (speculative decoding's verify-K curve); `, d=D` per depth when several. */
export const VERIFY_SERIES = 'verify k';
/** Colours of the verify series, one per depth, clear of the prefill blue and the decode orange. */
const VERIFY_COLORS = ['#7c3aed', '#db2777', '#0891b2', '#65a30d'] as const;

interface Dot {
  run: string;
  pass: Point['pass'];
  label: string;
  /** The pass of one size in one run, across formats: one connected series when it has several. */
  series: string;
  /** Order along that series: the format's, widest first. */
  rank: number;
  /** Its label names the pass (`d=64 f32`), not only a format along a series: it is never left out. */
  lead: boolean;
  intensity: number;
  gflops: number;
  title: string;
}

interface VerifyDot {
  run: string;
  /** Legend name of its depth's series (one run drawn: each depth its own colour). */
  name: string;
  /** One connected series per run and depth. */
  series: string;
  k: number;
  label: string;
  /** Labelled with its k: the first depth's only, since the series of other depths run close beside it. */
  labelled: boolean;
  /** The largest k of its series, whose label goes below right (a larger k may sit level with the one before). */
  last: boolean;
  intensity: number;
  gflops: number;
  title: string;
}

interface OverheadCeiling {
  gflops: number;
  flops: number;
  dispatches: number;
}

/** The GFLOP/s a typical decode step would reach if it took only its launch and submit time. */
export function overheadCeiling(points: readonly Point[], peaks: Roofs): OverheadCeiling | null {
  const decode = points.filter((p) => p.pass === 'decode');
  const basis = decode.length > 0 ? decode : points;
  if (basis.length === 0) return null;
  const flops = percentile(
    basis.map((p) => p.flops),
    50,
  );
  const dispatches = Math.round(
    percentile(
      basis.map((p) => p.dispatches),
      50,
    ),
  );
  // A wall-timed step also waits for one submit and readback; a GPU-timed one does not.
  const wallTimed = basis.some((p) => p.timebase === 'wall');
  const overheadUs = dispatches * peaks.dispatchUs + (wallTimed ? peaks.submitUs : 0);
  // FLOPs per µs ÷ 1e3 = GFLOP/s.
  return overheadUs > 0 && flops > 0 ? { gflops: flops / overheadUs / 1e3, flops, dispatches } : null;
}

function pointDots(run: ChartRun): Dot[] {
  const several = formatsIn(run.points).length > 1;
  // In a run of several formats, a pass's widest format is labelled with its size and format
  // (`d=64 f32`), the others along its series with the format alone.
  const widest = new Map<string, number>();
  for (const p of run.points) {
    const key = `${p.pass} ${pointLabel(p)}`;
    widest.set(key, Math.min(widest.get(key) ?? Number.POSITIVE_INFINITY, formatRank(pointFormat(p))));
  }
  return run.points
    .filter((p) => p.intensity > 0 && p.gflops > 0)
    .map((p) => {
      const lead = !several || widest.get(`${p.pass} ${pointLabel(p)}`) === formatRank(pointFormat(p));
      return {
        run: run.label,
        pass: p.pass,
        lead,
        label: !several ? pointLabel(p) : lead ? `${pointLabel(p)} ${pointFormat(p)}` : pointFormat(p),
        series: `${run.label} ${p.pass} ${pointLabel(p)}`,
        rank: formatRank(pointFormat(p)),
        intensity: p.intensity,
        gflops: p.gflops,
        title: [
          `${run.label}`,
          `${p.pass} ${pointLabel(p)}${p.weightFormat ? `, ${p.weightFormat} weights` : ''}: ${formatMs(p.medianMs)} ms (${p.timebase} clock)`,
          `${formatIntensity(p.intensity)} FLOP/B, ${fixed(p.gflops, 2)} GFLOP/s, ${fixed(p.gbps, 2)} GB/s`,
          `${p.bound}-bound, ${fixed(p.roofPct, 1)}% of roof`,
        ].join('\n'),
      };
    });
}

/** Each kernel of each profiled pass, placed by its own FLOPs, bytes and GPU time. */
function kernelDots(run: ChartRun): Dot[] {
  return run.points.flatMap((p) =>
    p.kernels
      .filter((k) => k.flops > 0 && k.bytes > 0 && k.medianMs > 0)
      .map((k) => {
        const gflops = k.flops / (k.medianMs * 1e6);
        return {
          run: run.label,
          pass: p.pass,
          label: k.name,
          series: `${run.label} ${k.name} ${p.pass} ${pointLabel(p)}`,
          rank: formatRank(pointFormat(p)),
          lead: true,
          intensity: k.flops / k.bytes,
          gflops,
          title: `${run.label}\n${k.name} in ${p.pass} ${pointLabel(p)}${p.weightFormat ? ` (${p.weightFormat})` : ''}: ${formatMs(k.medianMs)} ms (GPU clock)\n${formatIntensity(k.flops / k.bytes)} FLOP/B, ${fixed(gflops, 2)} GFLOP/s`,
        };
      }),
  );
}

/** The verify series' legend names: `verify k`, or one per depth (`verify k, d=64`) when there are several. */
function verifyNames(depths: readonly number[]): string[] {
  return depths.length === 1 ? [VERIFY_SERIES] : depths.map((d) => `${VERIFY_SERIES}, d=${d}`);
}

function verifyDepths(runs: readonly ChartRun[]): number[] {
  return [...new Set(runs.flatMap((r) => (r.verify ?? []).map((p) => p.depth)))].sort((a, b) => a - b);
}

/** The verify-K curve's passes, ordered by k within each depth. */
function verifyDots(run: ChartRun): VerifyDot[] {
  const points = (run.verify ?? []).filter((p) => p.intensity > 0 && p.gflops > 0);
  const depths = verifyDepths([run]);
  const names = verifyNames(depths);
  return depths.flatMap((depth, depthIndex) => {
    const series = points.filter((p) => p.depth === depth).sort((a, b) => a.k - b.k);
    return series.map((p, i) => ({
      run: run.label,
      name: names[depthIndex],
      last: i === series.length - 1,
      series: `${run.label} d=${depth}`,
      k: p.k,
      label: `k=${p.k}`,
      labelled: depthIndex === 0,
      intensity: p.intensity,
      gflops: p.gflops,
      title: [
        `${run.label}`,
        `verify k=${p.k} at depth ${depth}: ${formatMs(p.verifyMs)} ms (${p.timebase} clock), ${fixed(p.ratio, 2)}× a decode step`,
        `${formatIntensity(p.intensity)} FLOP/B, ${fixed(p.gflops, 2)} GFLOP/s, ${fixed(p.gbps, 2)} GB/s`,
        `${p.bound}-bound, ${fixed(p.roofPct, 1)}% of roof${p.chunks > 1 ? `; ${p.chunks} chunks` : ''}`,
      ].join('\n'),
    }));
  });
}

/** A peer's point on the roofline (see peerDots). */
interface PeerDot {
  run: string;
  peer: string;
  intensity: number;
  gflops: number;
  title: string;
}

/**
 * Each peer's points, where they join one of the run's own (same pass, size and depth, batch 1):
 * the same model does the same FLOPs on the same bytes, so a peer's point sits at the joined
 * point's intensity, at those FLOPs over the peer's median time. A peer point with nothing to join
 * (a size this run did not time) has no FLOP count here and is left off.
 */
function peerDots(run: ChartRun): PeerDot[] {
  return (run.peers ?? []).flatMap((peer) =>
    peer.points.flatMap((pp) => {
      const own = ownPointFor(run.points, pp) as Point | undefined;
      if (!own || own.intensity <= 0 || own.flops <= 0 || pp.medianMs <= 0) return [];
      const gflops = own.flops / (pp.medianMs * 1e6);
      return [
        {
          run: run.label,
          peer: peerName(peer),
          intensity: own.intensity,
          gflops,
          title: [
            `${peerName(peer)} (${peer.fileType}, ${peer.threads} threads), beside ${run.label}`,
            `${pp.pass} ${pointLabel(own)}: ${formatMs(pp.medianMs)} ms (wall clock), this engine ${formatMs(own.medianMs)} ms`,
            `${formatIntensity(own.intensity)} FLOP/B, ${fixed(gflops, 2)} GFLOP/s`,
          ].join('\n'),
        },
      ];
    }),
  );
}

/**
 * Labels of nearby points would sit on each other (decode points cluster), so within each pass, in
 * order of intensity, labels alternate above and below their point.
 */
function splitLabels(dots: readonly Dot[]): { above: Dot[]; below: Dot[] } {
  const above: Dot[] = [];
  const below: Dot[] = [];
  for (const pass of PASSES) {
    dots
      .filter((d) => d.pass === pass)
      .sort((a, b) => a.intensity - b.intensity)
      .forEach((d, i) => {
        (i % 2 === 0 ? above : below).push(d);
      });
  }
  return { above, below };
}

/**
 * The single-run colour scale: prefill and decode always (the live view shows both before any point
 * lands), and the verify series when there is one; a chart of verify passes alone names only it.
 */
function passColors(
  dots: readonly Dot[],
  verifyNames: readonly string[],
  peerNames: readonly string[] = [],
): Plot.ScaleOptions {
  const withVerify = verifyNames.length > 0;
  const passes = withVerify ? PASSES.filter((pass) => dots.some((d) => d.pass === pass)) : [...PASSES];
  return {
    domain: [...passes, ...verifyNames, ...peerNames],
    range: [
      ...passes.map((pass) => PASS_COLORS[pass]),
      ...verifyNames.map((_, i) => VERIFY_COLORS[i % VERIFY_COLORS.length]),
      ...peerNames.map((_, i) => PEER_COLORS[i % PEER_COLORS.length]),
    ],
    legend: true,
  };
}

function ridgeLabel(ridge: number): string {
  return `ridge ${formatIntensity(ridge)} FLOP/B`;
}

function ceilingLabel(c: OverheadCeiling): string {
  return `overhead ceiling, decode step (${c.dispatches} dispatches)`;
}

/** A label's or a mark's extent on screen, px. */
interface Box {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** Rough width of one character of a 12 px label and a label's height, px, to keep labels apart. */
const LABEL_CHAR_PX = 6.6;
const LABEL_HEIGHT_PX = 12;

/** A text's offsets from its anchor point, px, and which end of it sits there. */
interface Spot {
  dx: number;
  dy: number;
  anchor: 'start' | 'end';
}

/** Where a point's label may go, in order of preference: right above, right below, left above, left below. */
const LABEL_SPOTS: readonly Spot[] = [
  { dx: 8, dy: -9, anchor: 'start' },
  { dx: 8, dy: 13, anchor: 'start' },
  { dx: -8, dy: -9, anchor: 'end' },
  { dx: -8, dy: 13, anchor: 'end' },
];

/** The box of a text of `chars` characters at (x, y) moved by a spot's offsets. */
function labelBox(x: number, y: number, chars: number, spot: Spot): Box {
  const w = chars * LABEL_CHAR_PX;
  const x0 = spot.anchor === 'start' ? x + spot.dx : x + spot.dx - w;
  const yMid = y + spot.dy;
  return { x0, x1: x0 + w, y0: yMid - LABEL_HEIGHT_PX / 2, y1: yMid + LABEL_HEIGHT_PX / 2 };
}

function overlaps(a: Box, b: Box): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/** Whether the segment (x1, y1)–(x2, y2) passes through the box, sampled finely enough for 12 px text. */
function crosses(box: Box, x1: number, y1: number, x2: number, y2: number): boolean {
  const steps = Math.max(2, Math.ceil(Math.hypot(x2 - x1, y2 - y1) / 3));
  for (let i = 0; i <= steps; i++) {
    const x = x1 + ((x2 - x1) * i) / steps;
    const y = y1 + ((y2 - y1) * i) / steps;
    if (x > box.x0 && x < box.x1 && y > box.y0 && y < box.y1) return true;
  }
  return false;
}

/**
 * Labels of a chart with format series: the points of a series sit close together and the line
 * joining them runs through the usual alternate-side labels, so each label takes the first spot
 * (LABEL_SPOTS) clear of the series' lines, every point, the labels placed before it and the fixed
 * labels (`fixedBoxes`). A format's label with no clear spot is left out (on a phone a series can be
 * narrower than its labels; the tooltip and the table still name it); a pass's lead label takes the
 * first spot. Returns the dots per spot.
 */
function placeLabels(
  dots: readonly Dot[],
  joined: readonly Dot[],
  toPx: (d: { intensity: number; gflops: number }) => [number, number],
  fixedBoxes: readonly Box[],
): Dot[][] {
  const placed: Box[] = [...fixedBoxes];
  const marks = dots.map((d) => {
    const [x, y] = toPx(d);
    return { x0: x - 6, x1: x + 6, y0: y - 6, y1: y + 6 };
  });
  const segments = joined.slice(1).flatMap((d, i) => {
    const prev = joined[i];
    return prev.series === d.series ? [[...toPx(prev), ...toPx(d)] as const] : [];
  });
  const bySpot: Dot[][] = LABEL_SPOTS.map(() => []);
  for (const d of [...dots].sort((a, b) => a.intensity - b.intensity)) {
    const [x, y] = toPx(d);
    const boxes = LABEL_SPOTS.map((spot) => labelBox(x, y, d.label.length, spot));
    const clear = boxes.findIndex(
      (box) =>
        !placed.some((b) => overlaps(box, b)) &&
        !marks.some((b) => overlaps(box, b)) &&
        !segments.some(([x1, y1, x2, y2]) => crosses(box, x1, y1, x2, y2)),
    );
    if (clear < 0 && !d.lead) continue;
    const spot = Math.max(clear, 0);
    placed.push(boxes[spot]);
    bySpot[spot].push(d);
  }
  return bySpot;
}

/** The passes measured in several formats, each series ordered widest format first; empty otherwise. */
function formatSeries(dots: readonly Dot[]): Dot[] {
  const bySeries = new Map<string, Dot[]>();
  for (const d of dots) bySeries.set(d.series, [...(bySeries.get(d.series) ?? []), d]);
  return [...bySeries.values()].filter((g) => g.length > 1).flatMap((g) => g.sort((x, y) => x.rank - y.rank));
}

/** The weights the chart shows, in words for its subtitle, so an exported SVG says which they were. */
function formatNote(runs: readonly ChartRun[]): string {
  const formats = formatsIn(runs.flatMap((r) => r.points));
  if (formats.length === 0) return '';
  if (runs.some((r) => formatsIn(r.points).length > 1)) {
    return `Formats ${formats.join(', ')}, joined per pass.`;
  }
  return formats.length === 1 ? `Weights: ${formats[0]}.` : `Weights: ${formats.join(', ')}, by run.`;
}

function logSpan(lo: number, hi: number): number {
  return Math.max(1e-9, Math.log10(hi) - Math.log10(lo));
}

export function rooflineChart(runs: readonly ChartRun[], options: RooflineOptions): PlotNode | null {
  const single = runs.length === 1;
  const dots = runs.flatMap(pointDots);
  const kernels = options.showKernels ? runs.flatMap(kernelDots) : [];
  const verify = runs.flatMap(verifyDots);
  const peers = runs.flatMap(peerDots);
  const roofed = runs.flatMap((run) =>
    run.peaks && run.peaks.fmaGflops > 0 && run.peaks.copyGBps > 0
      ? [{ run, peaks: run.peaks, ridge: run.peaks.fmaGflops / run.peaks.copyGBps }]
      : [],
  );
  if (dots.length + verify.length + roofed.length === 0) return null;
  const ceilings = roofed.flatMap(({ run, peaks }) => {
    const c = overheadCeiling(run.points, peaks);
    return c ? [{ run: run.label, ...c }] : [];
  });

  const xs = [...dots, ...kernels, ...verify, ...peers]
    .map((d) => d.intensity)
    .concat(roofed.map((r) => r.ridge));
  const ys = [...dots, ...kernels, ...verify, ...peers]
    .map((d) => d.gflops)
    .concat(
      roofed.map((r) => r.peaks.fmaGflops),
      ceilings.map((c) => c.gflops),
    );
  const width = options.width;
  // On phones the roofline gets a square plot and only the FMA and ridge labels, which would
  // otherwise collide with the slope and ceiling labels; the caption and device card carry those.
  const compact = width < COMPACT_WIDTH;
  const height = compact ? Math.round(width) : chartHeight(width, 440);
  const base = baseOptions(width, height);
  const innerW = width - (base.marginLeft ?? 0) - (base.marginRight ?? 0);
  const innerH = height - (base.marginTop ?? 0) - (base.marginBottom ?? 0);

  const xDomain: [number, number] = [Math.min(...xs) / DOMAIN_PAD, Math.max(...xs) * DOMAIN_PAD];
  const yDomain: [number, number] = [Math.min(...ys) / DOMAIN_PAD, Math.max(...ys) * DOMAIN_PAD];
  if (single && roofed[0]) {
    // The ridge label reads rightward from the ridge: when nothing measured lies far beyond it (a
    // chart of decode or verify passes alone), reach far enough right for the label to fit.
    const a = Math.log10(roofed[0].ridge / xDomain[0]);
    const label = RIDGE_LABEL_PX < innerW ? (a * RIDGE_LABEL_PX) / (innerW - RIDGE_LABEL_PX) : 0;
    xDomain[1] = Math.max(xDomain[1], roofed[0].ridge * 10 ** label);
  }
  // The bandwidth slope has gradient 1 in log-log; on screen its angle depends on pixels per decade.
  const slopeAngle =
    (-Math.atan(innerH / logSpan(...yDomain) / (innerW / logSpan(...xDomain))) * 180) / Math.PI;

  const segments = roofed.flatMap(({ run, peaks, ridge }) => {
    // The slope starts where it enters the chart (left edge or bottom edge, whichever comes later).
    const x0 = Math.max(xDomain[0], yDomain[0] / peaks.copyGBps);
    return [
      { run: run.label, kind: 'bandwidth', x1: x0, y1: peaks.copyGBps * x0, x2: ridge, y2: peaks.fmaGflops },
      {
        run: run.label,
        kind: 'compute',
        x1: ridge,
        y1: peaks.fmaGflops,
        x2: xDomain[1],
        y2: peaks.fmaGflops,
      },
    ];
  });
  const ridges = roofed.map(({ run, peaks, ridge }) => ({ run: run.label, x: ridge, y: peaks.fmaGflops }));
  const roofStroke = single ? '#334155' : 'run';

  const marks: Plot.Markish[] = [
    Plot.link(segments, {
      x1: 'x1',
      y1: 'y1',
      x2: 'x2',
      y2: 'y2',
      stroke: roofStroke,
      strokeWidth: 2,
      className: 'roofline-roof',
    }),
    Plot.ruleY(ceilings, {
      y: 'gflops',
      stroke: single ? '#64748b' : 'run',
      strokeDasharray: '6,4',
      className: 'roofline-overhead',
    }),
    Plot.dot(ridges, { x: 'x', y: 'y', r: 4.5, stroke: roofStroke, fill: 'white', strokeWidth: 2 }),
  ];
  if (single) {
    // Roof values are written on the roofs; when comparing, the run list carries them instead.
    const r = roofed[0];
    const c = ceilings[0];
    if (r) {
      // Near the ridge, so it stays clear of the overhead ceiling's label at the left.
      const slopeStart = Math.max(xDomain[0], yDomain[0] / r.peaks.copyGBps);
      const xMidSlope = slopeStart ** 0.3 * r.ridge ** 0.7;
      marks.push(
        Plot.text([r], {
          x: () => xDomain[1],
          y: () => r.peaks.fmaGflops,
          text: () => `FMA peak ${formatNumber(r.peaks.fmaGflops)} GFLOP/s`,
          textAnchor: 'end',
          dy: -8,
          dx: -4,
          ...HALO,
          fill: '#334155',
        }),
        Plot.text([r], {
          x: () => r.ridge,
          y: () => r.peaks.fmaGflops,
          text: () => ridgeLabel(r.ridge),
          textAnchor: 'start',
          dx: 8,
          dy: 14,
          ...HALO,
          fill: '#334155',
        }),
      );
      if (!compact) {
        marks.push(
          Plot.text([r], {
            x: () => xMidSlope,
            y: () => r.peaks.copyGBps * xMidSlope,
            text: () => `copy ${formatNumber(r.peaks.copyGBps)} GB/s`,
            rotate: slopeAngle,
            dy: -8,
            ...HALO,
            fill: '#334155',
          }),
        );
      }
    }
    if (c && !compact) {
      marks.push(
        // Left end, above the line: decode points, the ones this ceiling concerns, usually sit
        // near it at low intensity, and the prefill points are usually far above it on the right.
        Plot.text([c], {
          x: () => xDomain[0],
          y: 'gflops',
          text: () => ceilingLabel(c),
          textAnchor: 'start',
          dx: 4,
          dy: -8,
          ...HALO,
          fill: '#475569',
        }),
      );
    }
  }
  if (kernels.length > 0) {
    marks.push(
      Plot.dot(kernels, {
        x: 'intensity',
        y: 'gflops',
        stroke: single ? 'pass' : 'run',
        ...(single ? {} : { symbol: 'pass' }),
        r: 3.5,
        strokeWidth: 1.25,
        fill: 'none',
        title: 'title',
        tip: true,
        className: 'roofline-kernel',
      }),
    );
  }
  if (verify.length > 0) {
    marks.push(
      Plot.line(verify, {
        x: 'intensity',
        y: 'gflops',
        z: 'series',
        stroke: single ? 'name' : 'run',
        strokeWidth: 1.75,
        className: 'roofline-verify-line',
      }),
      Plot.dot(verify, {
        x: 'intensity',
        y: 'gflops',
        fill: single ? 'name' : 'run',
        ...(single ? {} : { symbol: () => VERIFY_SERIES }),
        r: 4.5,
        stroke: 'white',
        strokeWidth: 1.25,
        title: 'title',
        tip: true,
        className: ROOFLINE_VERIFY_CLASS,
      }),
    );
    if (single) {
      // Above and left of each mark, where a climbing series leaves room; the last one below right,
      // since a verify split into chunks can sit level with the one before it.
      for (const last of [false, true]) {
        marks.push(
          Plot.text(
            verify.filter((v) => v.labelled && v.last === last),
            {
              x: 'intensity',
              y: 'gflops',
              text: 'label',
              dx: last ? 6 : -6,
              dy: last ? 12 : -9,
              textAnchor: last ? 'start' : 'end',
              ...HALO,
              fill: '#3b0764',
            },
          ),
        );
      }
    }
  }
  if (peers.length > 0) {
    // Hollow diamonds, outlined in the peer's colour: another engine's time on this run's FLOPs.
    marks.push(
      Plot.dot(peers, {
        x: 'intensity',
        y: 'gflops',
        stroke: single ? 'peer' : 'run',
        symbol: 'diamond',
        r: 6,
        strokeWidth: 2,
        fill: 'white',
        title: 'title',
        tip: true,
        className: ROOFLINE_PEER_CLASS,
      }),
    );
  }
  const joined = formatSeries(dots);
  if (joined.length > 0) {
    marks.push(
      Plot.line(joined, {
        x: 'intensity',
        y: 'gflops',
        z: 'series',
        stroke: single ? 'pass' : 'run',
        strokeWidth: 1.5,
        strokeOpacity: 0.75,
        className: 'roofline-format-line',
      }),
    );
  }
  marks.push(
    Plot.dot(dots, {
      x: 'intensity',
      y: 'gflops',
      fill: single ? 'pass' : 'run',
      ...(single ? {} : { symbol: 'pass' }),
      r: 5.5,
      stroke: 'white',
      strokeWidth: 1.25,
      title: 'title',
      tip: true,
      className: ROOFLINE_POINT_CLASS,
    }),
  );
  if (single && joined.length > 0) {
    // Screen position of a value on the log axes, as Plot places it, to keep labels clear.
    const left = base.marginLeft ?? 0;
    const top = base.marginTop ?? 0;
    const toPx = (d: { intensity: number; gflops: number }): [number, number] => [
      left + (innerW * Math.log10(d.intensity / xDomain[0])) / logSpan(...xDomain),
      top + innerH * (1 - Math.log10(d.gflops / yDomain[0]) / logSpan(...yDomain)),
    ];
    const r = roofed[0];
    const c = ceilings[0];
    const fixedBoxes: Box[] = [];
    if (r) {
      const [x, y] = toPx({ intensity: r.ridge, gflops: r.peaks.fmaGflops });
      fixedBoxes.push(labelBox(x, y, ridgeLabel(r.ridge).length, { dx: 8, dy: 14, anchor: 'start' }));
    }
    if (c && !compact) {
      const [, y] = toPx({ intensity: xDomain[0], gflops: c.gflops });
      fixedBoxes.push(labelBox(left, y, ceilingLabel(c).length, { dx: 4, dy: -8, anchor: 'start' }));
    }
    placeLabels(dots, joined, toPx, fixedBoxes).forEach((data, i) => {
      const spot = LABEL_SPOTS[i];
      marks.push(
        Plot.text(data, {
          x: 'intensity',
          y: 'gflops',
          text: 'label',
          dx: spot.dx,
          dy: spot.dy,
          textAnchor: spot.anchor,
          ...HALO,
          fill: '#0f172a',
        }),
      );
    });
  } else if (single) {
    const { above, below } = splitLabels(dots);
    const label = (data: Dot[], dy: number) =>
      Plot.text(data, {
        x: 'intensity',
        y: 'gflops',
        text: 'label',
        dx: 8,
        dy,
        textAnchor: 'start',
        ...HALO,
        fill: '#0f172a',
      });
    marks.push(label(above, -9), label(below, 13));
  }

  const node = Plot.plot({
    ...base,
    subtitle: [clockNote(runs, kernels.length > 0), formatNote(runs)].filter(Boolean).join(' '),
    x: {
      type: 'log',
      domain: xDomain,
      label: 'Arithmetic intensity (FLOP/byte) →',
      grid: true,
      tickFormat: LOG_TICKS,
    },
    y: { type: 'log', domain: yDomain, label: '↑ Achieved GFLOP/s', grid: true, tickFormat: LOG_TICKS },
    color: single
      ? passColors(dots, verify.length > 0 ? verifyNames(verifyDepths(runs)) : [], [
          ...new Set(peers.map((p) => p.peer)),
        ])
      : colorByRun(runs),
    ...(single
      ? {}
      : { symbol: { domain: verify.length > 0 ? [...PASSES, VERIFY_SERIES] : [...PASSES], legend: true } }),
    marks,
  });
  for (const el of node.querySelectorAll(`g.${ROOFLINE_POINT_CLASS} > *`))
    el.setAttribute('data-mark', 'point');
  for (const el of node.querySelectorAll(`g.${ROOFLINE_VERIFY_CLASS} > *`))
    el.setAttribute('data-mark', 'verify');
  for (const el of node.querySelectorAll(`g.${ROOFLINE_PEER_CLASS} > *`))
    el.setAttribute('data-mark', 'peer');
  return node;
}
