/**
 * Speculative decoding's charts: the verify-K curve (what verifying k tokens in one pass costs, in
 * decode steps, with its knee), the measured speed-up of each run against its acceptance rate beside
 * what a free drafter would reach, and each run's acceptance at each draft position. The verify
 * passes on the roofline are drawn by the roofline chart itself (ChartRun.verify).
 */
import * as Plot from '@observablehq/plot';
import { parseDrafterSpec } from '../../spec/drafter.ts';
import type { SpecResult, SpecRun } from '../../spec/workloads/speculative-result.ts';
import { curveAt, expectedAcceptanceLength, predictedSpeedup } from '../../speculative/predict.ts';
import { fixed, formatMs } from '../format.ts';
import { baseOptions, chartHeight, type PlotNode, RUN_COLORS } from './common.ts';

/** A white outline under chart text, so a line or grid passing behind a label does not hide it. */
const HALO = { stroke: 'white', strokeWidth: 3, paintOrder: 'stroke' } as const;

/** Below this width (px) point labels shrink to the prompt class; the legend names the drafter. */
const COMPACT_WIDTH = 560;

/** Below this width (px) the curve's knee rule is labelled by its ratio alone, clear of the climbing curve. */
const SHORT_RULE_LABEL_WIDTH = 380;

/** Rough width of one character of a 12 px label, px, to keep labels inside the plot. */
const CHAR_WIDTH = 6.6;

/** Height of a line of chart text (px): labels closer than this are pushed apart. */
const LABEL_PX = 14;

/** Values of α the free-drafter line is drawn through. */
const ALPHA_STEPS = 50;

/** Small multiples of the per-position chart: the least width of one (its name must fit), and its height, px. */
const FACET_MIN_WIDTH = 180;
const FACET_HEIGHT = 124;
/** Rough width of one character of a 12 px bold label, px. */
const BOLD_CHAR_WIDTH = 7.2;

/** Bars narrower than this (px) carry no value label. */
const VALUE_LABEL_MIN_PX = 26;

/** The symbols drafters get, in order (Plot's named symbols, distinct filled shapes first). */
const DRAFTER_SYMBOLS = [
  'circle',
  'square',
  'diamond2',
  'triangle2',
  'star',
  'cross',
  'wye',
  'plus',
] as const;

/** A run's name: its drafter's label and its prompt class. */
export function runName(run: SpecRun): string {
  return `${run.label} · ${run.promptClass}`;
}

/** The drafters of the runs, in order of first appearance, one colour and one symbol each. */
export function drafterScale(runs: readonly SpecRun[]): { domain: string[]; colors: string[] } {
  const domain = [...new Set(runs.map((r) => r.label))];
  return { domain, colors: domain.map((_, i) => RUN_COLORS[i % RUN_COLORS.length]) };
}

/**
 * The verify-K curve: verify time ÷ decode time against k, one line per depth, the knee rule
 * (kneeRatio decode steps) dashed and each depth's knee ringed.
 */
export function verifyCurveChart(s: SpecResult, width: number): PlotNode | null {
  const curve = [...s.verifyCurve].sort((a, b) => a.depth - b.depth || a.k - b.k);
  if (curve.length === 0) return null;
  const depthName = (d: number) => `depth ${d}`;
  const depths = [...new Set(curve.map((p) => p.depth))];
  const ks = [...new Set(curve.map((p) => p.k))].sort((a, b) => a - b);
  const data = curve.map((p) => ({
    depth: depthName(p.depth),
    k: p.k,
    ratio: p.ratio,
    title: [
      `verify k=${p.k} at depth ${p.depth}: ${fixed(p.ratio, 2)}× a decode step`,
      `verify ${formatMs(p.verifyMs)} ms, decode ${formatMs(p.decodeMs)} ms (${p.timebase} clock, median of ${p.reps})`,
      `wall clock: verify ${formatMs(p.wallVerifyMs)} ms, decode ${formatMs(p.wallDecodeMs)} ms`,
      p.chunks > 1 ? `${p.chunks} chunks: each reads the weights again` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  }));
  // Each knee's label hangs under the 1× rule, where the curve never goes, on a dotted drop line
  // from its ring; the labels of several depths are stepped down so they do not overlap.
  const knees = s.kneeByDepth.flatMap(({ depth, k }) => {
    const p = curve.find((q) => q.depth === depth && q.k === k);
    return p && k !== null ? [{ depth: depthName(depth), k, ratio: p.ratio }] : [];
  });
  // A label reads away from the next knee's drop line: leftward for all but the last knee.
  const kneeLabels = knees.map((knee, i) => ({
    ...knee,
    labelY: 0.8 - (0.6 * i) / Math.max(1, knees.length),
    anchor: i < knees.length - 1 || knee.k > Math.sqrt(ks[0] * ks[ks.length - 1]) ? 'end' : 'start',
    text: depths.length > 1 ? `knee k=${knee.k} (${knee.depth})` : `knee k=${knee.k}`,
  }));
  const kMin = ks[0];
  const kMax = ks[ks.length - 1];
  // Log base 2: the usual k double, so each lands one step further right.
  const xDomain: [number, number] = [kMin / 1.3, kMax * 1.3];
  const yMax = Math.max(s.kneeRatio, ...curve.map((p) => p.ratio)) * 1.12;
  return Plot.plot({
    ...baseOptions(width, chartHeight(width, 320)),
    x: {
      type: 'log',
      base: 2,
      domain: xDomain,
      ticks: ks,
      tickFormat: (k: number) => String(k),
      label: 'Tokens verified in one pass, k →',
      grid: true,
    },
    y: {
      domain: [0, yMax],
      label: '↑ Verify time ÷ one decode step',
      grid: true,
      tickFormat: (v: number) => `${v}×`,
    },
    color: {
      domain: depths.map(depthName),
      range: depths.map((_, i) => RUN_COLORS[i % RUN_COLORS.length]),
      legend: true,
    },
    marks: [
      Plot.ruleY([1], { stroke: '#94a3b8' }),
      Plot.ruleY([s.kneeRatio], { stroke: '#b45309', strokeWidth: 1.5, strokeDasharray: '6,4' }),
      Plot.text(
        [
          width < SHORT_RULE_LABEL_WIDTH
            ? `knee rule ${fixed(s.kneeRatio, 1)}×`
            : `knee rule: ${fixed(s.kneeRatio, 1)}× a decode step`,
        ],
        {
          x: xDomain[0],
          y: s.kneeRatio,
          dx: 4,
          dy: -8,
          textAnchor: 'start',
          fill: '#b45309',
          fontWeight: 600,
          ...HALO,
        },
      ),
      Plot.line(data, { x: 'k', y: 'ratio', stroke: 'depth', strokeWidth: 2 }),
      Plot.dot(data, { x: 'k', y: 'ratio', fill: 'depth', r: 4, title: 'title', tip: true }),
      Plot.ruleX(kneeLabels, {
        x: 'k',
        y1: 'labelY',
        y2: 'ratio',
        stroke: '#0f172a',
        strokeDasharray: '1,3',
      }),
      Plot.dot(knees, { x: 'k', y: 'ratio', r: 9, stroke: '#0f172a', strokeWidth: 2, fill: 'none' }),
      ...(['start', 'end'] as const).map((anchor) =>
        Plot.text(
          kneeLabels.filter((l) => l.anchor === anchor),
          {
            x: 'k',
            y: 'labelY',
            text: 'text',
            dx: anchor === 'start' ? 4 : -4,
            textAnchor: anchor,
            fill: '#0f172a',
            fontWeight: 600,
            ...HALO,
          },
        ),
      ),
    ],
  });
}

/** The depth a run's prediction reads the curve at: its mean context, prompt plus half its tokens. */
function runContext(run: SpecRun): number {
  return run.promptTokens + run.tokens / 2;
}

/**
 * What a free drafter would gain at draft length K, for each K of the runs: each drafted token
 * accepted independently with probability α gives τ = expectedAcceptanceLength(α, K) tokens per
 * step, and accepted ÷ drafted = (τ − 1) ÷ K, the x of the measured points.
 */
export function freeDrafterLines(
  s: SpecResult,
): { k: number; depth: number; points: { rate: number; speedup: number }[] }[] {
  const ks = [...new Set(s.runs.map((r) => r.k))].sort((a, b) => a - b);
  return ks.flatMap((K) => {
    const runs = s.runs.filter((r) => r.k === K);
    const context = runs.reduce((sum, r) => sum + runContext(r), 0) / runs.length;
    const at = curveAt(s.verifyCurve, K + 1, context);
    if (!at) return [];
    const points = Array.from({ length: ALPHA_STEPS + 1 }, (_, i) => {
      const tau = expectedAcceptanceLength(i / ALPHA_STEPS, K);
      return {
        rate: (tau - 1) / K,
        speedup: predictedSpeedup({
          meanAcceptanceLength: tau,
          draftMs: 0,
          verifyMs: at.verifyMs,
          decodeMs: at.decodeMs,
        }),
      };
    });
    return [{ k: K, depth: at.depth, points }];
  });
}

/**
 * Pixel rows for labels so that none sits within LABEL_PX of another, nor on the rule at `rulePx`:
 * a label that would straddle the rule moves off it to its mark's side, then, sorted top to bottom,
 * each is pushed down below the one before it. `px` is where each label would sit.
 */
function spreadRows(px: readonly number[], rulePx: number): number[] {
  const clear = LABEL_PX / 2 + 1;
  const offRule = px.map((y) =>
    Math.abs(y - rulePx) >= clear ? y : y < rulePx ? rulePx - clear : rulePx + clear,
  );
  const order = offRule.map((y, i) => ({ y, i })).sort((a, b) => a.y - b.y);
  const out = new Array<number>(px.length);
  let last = Number.NEGATIVE_INFINITY;
  for (const { y, i } of order) {
    const placed = Math.max(y, last + LABEL_PX);
    out[i] = placed;
    last = placed;
  }
  return out;
}

/**
 * Speed-up against acceptance rate: one mark per run (colour and symbol per drafter), the line a
 * free drafter would reach at the runs' K, and a rule at 1 (plain decode).
 */
export function speedupChart(s: SpecResult, width: number): PlotNode | null {
  if (s.runs.length === 0) return null;
  const compact = width < COMPACT_WIDTH;
  const height = chartHeight(width, 340);
  const base = baseOptions(width, height);
  const margin = { top: 24, right: 24, bottom: 44, left: 56 };
  const innerW = width - margin.left - margin.right;
  const innerH = height - margin.top - margin.bottom;
  const lines = freeDrafterLines(s);
  const yMax =
    Math.max(1, ...s.runs.map((r) => r.speedup), ...lines.flatMap((l) => l.points.map((p) => p.speedup))) *
    1.12;
  const { domain, colors } = drafterScale(s.runs);
  const dots = s.runs.map((r) => ({
    drafter: r.label,
    rate: r.acceptanceRate,
    speedup: r.speedup,
    label: compact ? r.promptClass : runName(r),
    title: [
      runName(r),
      `accepted ${r.accepted} of ${r.drafted} drafted (${fixed(r.acceptanceRate * 100, 1)}%), τ = ${fixed(r.meanAcceptanceLength, 2)} tokens per step`,
      `speed-up ${fixed(r.speedup, 2)}× measured, ${fixed(r.predictedSpeedup, 2)}× predicted with its draft cost`,
      `TPOT ${formatMs(r.tpotMs)} ms against ${formatMs(r.baselineTpotMs)} ms plain decode`,
      r.synthetic ? 'synthetic drafter: calibration only' : '',
    ]
      .filter(Boolean)
      .join('\n'),
  }));
  // Labels beside their marks, right of them unless that would run off the plot; rows pushed apart.
  const xPx = (rate: number) => margin.left + rate * innerW;
  const yPx = (speedup: number) => margin.top + (1 - speedup / yMax) * innerH;
  const rows = spreadRows(
    dots.map((d) => yPx(d.speedup)),
    yPx(1),
  );
  const labels = dots.map((d, i) => {
    const right = xPx(d.rate) + 10 + d.label.length * CHAR_WIDTH <= width - 4;
    return {
      ...d,
      labelRate: d.rate,
      labelSpeedup: yMax * (1 - (rows[i] - margin.top) / innerH),
      anchor: right ? 'start' : 'end',
    };
  });
  const freeLine = lines.flatMap((l) =>
    l.points.map((p) => ({ ...p, series: `K = ${l.k}`, k: l.k, depth: l.depth })),
  );
  const lineEnds = lines.map((l) => ({
    ...l.points[l.points.length - 1],
    text: compact ? `free drafter, K=${l.k}` : `predicted, free drafter, K = ${l.k}`,
  }));
  return Plot.plot({
    ...base,
    marginTop: margin.top,
    marginRight: margin.right,
    marginBottom: margin.bottom,
    marginLeft: margin.left,
    x: {
      domain: [0, 1],
      label: 'Acceptance rate: accepted ÷ drafted tokens →',
      grid: true,
      tickFormat: '.0%',
    },
    y: {
      domain: [0, yMax],
      label: '↑ Speed-up over plain decode',
      grid: true,
      tickFormat: (v: number) => `${v}×`,
    },
    // One legend: the symbol legend takes the dots' colours, since fill and symbol share a channel.
    color: { domain, range: colors },
    symbol: {
      domain,
      range: domain.map((_, i) => DRAFTER_SYMBOLS[i % DRAFTER_SYMBOLS.length]),
      legend: true,
    },
    marks: [
      Plot.ruleY([1], { stroke: '#0f172a', strokeWidth: 1.25 }),
      // At the right end, under the rule: the free-drafter line is far above it there.
      Plot.text(['1× = plain decode'], {
        x: 1,
        y: 1,
        dx: -4,
        dy: 10,
        textAnchor: 'end',
        fill: '#334155',
        ...HALO,
      }),
      Plot.line(freeLine, {
        x: 'rate',
        y: 'speedup',
        z: 'series',
        stroke: '#64748b',
        strokeDasharray: '6,4',
      }),
      Plot.text(lineEnds, {
        x: 'rate',
        y: 'speedup',
        text: 'text',
        dx: -4,
        dy: -10,
        textAnchor: 'end',
        fill: '#475569',
        ...HALO,
      }),
      Plot.link(
        labels.filter((l) => Math.abs(yPx(l.labelSpeedup) - yPx(l.speedup)) > 4),
        {
          x1: 'rate',
          y1: 'speedup',
          x2: 'labelRate',
          y2: 'labelSpeedup',
          stroke: '#cbd5e1',
        },
      ),
      Plot.dot(dots, {
        x: 'rate',
        y: 'speedup',
        fill: 'drafter',
        symbol: 'drafter',
        r: 6,
        stroke: 'white',
        strokeWidth: 1.25,
        title: 'title',
        tip: true,
        className: 'spec-speedup-point',
      }),
      ...(['start', 'end'] as const).map((anchor) =>
        Plot.text(
          labels.filter((l) => l.anchor === anchor),
          {
            x: 'labelRate',
            y: 'labelSpeedup',
            text: 'label',
            dx: anchor === 'start' ? 10 : -10,
            textAnchor: anchor,
            fill: '#0f172a',
            ...HALO,
          },
        ),
      ),
    ],
  });
}

/**
 * Acceptance at each draft position, one small multiple per run, in a grid as wide as the chart
 * allows. For the synthetic oracle, a dash marks p^i, what it should reach at position i.
 */
export function acceptanceByPositionChart(s: SpecResult, width: number): PlotNode | null {
  const runs = s.runs.filter((r) => r.perPosition.length > 0);
  if (runs.length === 0) return null;
  const names = runs.map(runName);
  const facetMin = Math.max(FACET_MIN_WIDTH, 24 + BOLD_CHAR_WIDTH * Math.max(...names.map((n) => n.length)));
  const maxCols = Math.max(1, Math.floor(width / facetMin));
  const rowsCount = Math.ceil(runs.length / maxCols);
  const cols = Math.ceil(runs.length / rowsCount);
  const maxK = Math.max(...runs.map((r) => r.perPosition.length));
  const positions = Array.from({ length: maxK }, (_, i) => i + 1);
  const cell = (i: number) => ({ col: i % cols, row: Math.floor(i / cols) });
  /** The oracle's acceptance p, for the runs of the synthetic oracle. */
  const oracleP = (r: SpecRun): number | null => {
    const d = parseDrafterSpec(r.drafter);
    return typeof d !== 'string' && d.kind === 'oracle' ? d.p : null;
  };
  const bars = runs.flatMap((r, i) => {
    const p = oracleP(r);
    return r.perPosition.map((share, j) => {
      const expected = p === null ? null : p ** (j + 1);
      return {
        ...cell(i),
        drafter: r.label,
        position: j + 1,
        share,
        expected,
        // The value sits over the bar, or over the oracle's dash when that is higher.
        valueY: Math.max(share, expected ?? 0),
        value: `${Math.round(share * 100)}%`,
        title: `${runName(r)}\ndraft position ${j + 1}: ${fixed(share * 100, 1)}% of proposals accepted${expected === null ? '' : ` (p^${j + 1} = ${fixed(expected * 100, 1)}%)`}`,
      };
    });
  });
  const expected = bars.filter((b) => b.expected !== null);
  const nameMarks = names.map((text, i) => ({ ...cell(i), text }));
  const { domain, colors } = drafterScale(runs);
  const margin = { top: 18, right: 12, bottom: 40, left: 48 };
  const facetWidth = (width - margin.left - margin.right) / cols;
  const showValues = (facetWidth * 0.8) / maxK >= VALUE_LABEL_MIN_PX;
  return Plot.plot({
    ...baseOptions(width, margin.top + margin.bottom + rowsCount * FACET_HEIGHT),
    marginTop: margin.top,
    marginRight: margin.right,
    marginBottom: margin.bottom,
    marginLeft: margin.left,
    fx: { axis: null, padding: 0.14 },
    fy: { axis: null, padding: 0.22 },
    x: { type: 'band', domain: positions, padding: 0.2, label: 'Draft position →' },
    // Headroom above 100% holds each multiple's name, clear of the value over a full bar.
    y: { domain: [0, 1.5], ticks: [0, 0.5, 1], tickFormat: '.0%', label: '↑ Accepted', grid: true },
    color: { domain, range: colors, legend: true },
    marks: [
      Plot.frame({ stroke: '#e2e8f0' }),
      Plot.barY(bars, {
        fx: 'col',
        fy: 'row',
        x: 'position',
        y: 'share',
        fill: 'drafter',
        title: 'title',
        tip: true,
        className: 'spec-position-bar',
      }),
      Plot.tickY(expected, {
        fx: 'col',
        fy: 'row',
        x: 'position',
        y: 'expected',
        stroke: '#0f172a',
        strokeWidth: 2,
        strokeDasharray: '3,2',
      }),
      ...(showValues
        ? [
            Plot.text(bars, {
              fx: 'col',
              fy: 'row',
              x: 'position',
              y: 'valueY',
              text: 'value',
              dy: -7,
              fontSize: 10,
              fill: '#334155',
            }),
          ]
        : []),
      Plot.text(nameMarks, {
        fx: 'col',
        fy: 'row',
        text: 'text',
        frameAnchor: 'top-left',
        dx: 6,
        dy: 5,
        fontWeight: 600,
        fill: '#0f172a',
        ...HALO,
      }),
      Plot.ruleY([0], { stroke: '#94a3b8' }),
    ],
  });
}
