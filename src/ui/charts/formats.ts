/**
 * The format sweep's chart, and how the other charts tell formats apart.
 *
 * Format comparison: each format's TPOT (y) against the bytes one decode step reads (x), as one
 * connected series, beside two lines through the origin. "f32's bandwidth" is time ∝ bytes at the
 * bandwidth f32 achieved (its bytes ÷ its TPOT): a format on it saved exactly its share of bytes. The
 * copy roof is bytes ÷ the copy bandwidth measured in the same run, the fastest those bytes can be
 * read. A format above f32's line lost part of its saving to what does not shrink with the weights
 * (launches, submit, dequantization).
 *
 * Every other chart draws a run that swept several formats as one run per format (`splitByFormat`),
 * so their legends name the format; the roofline joins a pass's formats in one series itself.
 */
import * as Plot from '@observablehq/plot';
import type { FormatSummary } from '../../spec/workloads/formats.ts';
import { fixed, formatMs, formatNumber } from '../format.ts';
import { formatsIn, pointFormat } from '../formats/weights.ts';
import { baseOptions, type ChartRun, chartHeight, PASS_COLORS } from './common.ts';

const MiB = 2 ** 20;
/** Bytes per ms from GB/s. */
const PER_MS = 1e6;

const COLORS = { formats: PASS_COLORS.decode, f32Line: '#475569', roof: '#0f172a' } as const;
/** A white outline under chart text, so a line passing behind a label does not hide it. */
const HALO = { stroke: 'white', strokeWidth: 3, paintOrder: 'stroke' } as const;
/** Below this width (px) the lines' labels are shortened. */
const COMPACT_WIDTH = 520;

/** Test-visible class of the group holding one mark per format. */
export const FORMAT_POINT_CLASS = 'format-point';

export interface FormatLines {
  /** The bandwidth f32's decode step achieved, GB/s: its bytes ÷ its TPOT; null without an f32 row. */
  f32GBps: number | null;
  /** The copy bandwidth measured in the run, GB/s; null without one. */
  copyGBps: number | null;
}

export function formatLines(rows: readonly FormatSummary[], copyGBps: number | null): FormatLines {
  const f32 = rows.find((r) => r.format === 'f32');
  return {
    f32GBps: f32 && f32.tpotMs > 0 ? f32.decodeBytesPerToken / f32.tpotMs / PER_MS : null,
    copyGBps: copyGBps !== null && copyGBps > 0 ? copyGBps : null,
  };
}

/** The time, ms, that `bytes` take at `gbps`. */
export function msAt(bytes: number, gbps: number): number {
  return bytes / (gbps * PER_MS);
}

export function formatComparisonChart(
  rows: readonly FormatSummary[],
  copyGBps: number | null,
  width: number,
): SVGSVGElement | HTMLElement | null {
  const data = rows
    .filter((r) => r.decodeBytesPerToken > 0)
    .map((r) => ({
      ...r,
      mib: r.decodeBytesPerToken / MiB,
      title: [
        `${r.format}: ${fixed(r.decodeBytesPerToken / MiB, 1)} MiB read per decode token`,
        `TPOT ${formatMs(r.tpotMs)} ms${r.tpotRatio === null ? '' : ` (${fixed(r.tpotRatio, 2)}× f32’s)`}, ${formatNumber(r.tokensPerSec)} tokens/s`,
      ].join('\n'),
    }));
  if (data.length === 0) return null;
  const lines = formatLines(rows, copyGBps);
  const compact = width < COMPACT_WIDTH;
  const height = chartHeight(width, 340);
  const base = baseOptions(width, height);
  const innerW = width - (base.marginLeft ?? 0) - (base.marginRight ?? 0);
  const innerH = height - (base.marginTop ?? 0) - (base.marginBottom ?? 0);

  const xMax = Math.max(...data.map((d) => d.mib)) * 1.12;
  const lineAt = (gbps: number, mib: number) => msAt(mib * MiB, gbps);
  const yMax =
    Math.max(
      ...data.map((d) => d.tpotMs),
      ...[lines.f32GBps, lines.copyGBps].map((g) => (g === null ? 0 : lineAt(g, xMax))),
    ) * 1.12;
  // A line's angle on screen, for its label: ms per MiB in pixels per pixel.
  const angle = (gbps: number) =>
    (-Math.atan((lineAt(gbps, 1) * (innerH / yMax)) / (innerW / xMax)) * 180) / Math.PI;

  const marks: Plot.Markish[] = [Plot.ruleX([0]), Plot.ruleY([0])];
  // Each line's label sits on it, where the formats' series is far above it (narrow formats sit
  // left and high): f32's above its line at a third of the way, the roof's below its own further on.
  const line = (
    gbps: number,
    stroke: string,
    dash: string | undefined,
    text: string,
    at: number,
    dy: number,
  ) => {
    // yMax holds both lines at xMax, so each runs corner to edge unclipped.
    const labelMib = xMax * at;
    marks.push(
      Plot.line(
        [
          { mib: 0, ms: 0 },
          { mib: xMax, ms: lineAt(gbps, xMax) },
        ],
        { x: 'mib', y: 'ms', stroke, strokeWidth: 1.75, ...(dash ? { strokeDasharray: dash } : {}) },
      ),
      Plot.text([text], {
        x: () => labelMib,
        y: () => lineAt(gbps, labelMib),
        text: (t: string) => t,
        rotate: angle(gbps),
        dy,
        fill: stroke,
        ...HALO,
        className: 'format-line-label',
      }),
    );
  };
  if (lines.f32GBps !== null) {
    const g = formatNumber(lines.f32GBps);
    line(
      lines.f32GBps,
      COLORS.f32Line,
      '6,4',
      compact ? `f32’s ${g} GB/s` : `f32’s bandwidth, ${g} GB/s: time ∝ bytes`,
      compact ? 0.5 : 0.42,
      -8,
    );
  }
  if (lines.copyGBps !== null) {
    const g = formatNumber(lines.copyGBps);
    line(
      lines.copyGBps,
      COLORS.roof,
      undefined,
      compact ? `copy roof ${g} GB/s` : `copy roof: bytes ÷ ${g} GB/s measured`,
      compact ? 0.72 : 0.68,
      14,
    );
  }
  marks.push(
    Plot.line(data, { x: 'mib', y: 'tpotMs', stroke: COLORS.formats, strokeWidth: 2 }),
    Plot.dot(data, {
      x: 'mib',
      y: 'tpotMs',
      r: 5.5,
      fill: COLORS.formats,
      stroke: 'white',
      strokeWidth: 1.25,
      title: 'title',
      tip: true,
      className: FORMAT_POINT_CLASS,
    }),
    // Up and left of each mark: the series climbs to the right, and f32's line leaves its point
    // up and to the right, so that corner is clear of both.
    Plot.text(data, {
      x: 'mib',
      y: 'tpotMs',
      text: 'format',
      textAnchor: 'end',
      dx: -7,
      dy: -10,
      fontWeight: 600,
      fill: '#7c2d12',
      ...HALO,
    }),
  );
  return Plot.plot({
    ...base,
    x: { domain: [0, xMax], label: 'Bytes read per decode token (MiB) →', grid: true },
    y: { domain: [0, yMax], label: '↑ Time per output token (ms)', grid: true },
    marks,
  });
}

/**
 * A run that measured several formats, as one run per format, so a chart with one series per run
 * names the format in its legend: `f32`, or `#1 Apple M2 Pro · f32` when runs are compared. A run
 * of one format keeps its points; compared, its label gains its format.
 */
export function splitByFormat(runs: readonly ChartRun[]): ChartRun[] {
  const compared = runs.length > 1;
  return runs.flatMap((run) => {
    const formats = formatsIn(run.points);
    if (formats.length <= 1) {
      return [formats.length === 1 && compared ? { ...run, label: `${run.label} · ${formats[0]}` } : run];
    }
    return formats.map((format) => ({
      label: compared ? `${run.label} · ${format}` : format,
      points: run.points.filter((p) => pointFormat(p) === format),
      peaks: run.peaks,
    }));
  });
}

/** Compared runs' labels with the formats each measured (`#1 Apple M2 Pro · f32, int8`); one run as it is. */
export function withFormats(runs: readonly ChartRun[]): ChartRun[] {
  if (runs.length <= 1) return [...runs];
  return runs.map((run) => {
    const formats = formatsIn(run.points);
    return formats.length > 0 ? { ...run, label: `${run.label} · ${formats.join(', ')}` } : run;
  });
}
