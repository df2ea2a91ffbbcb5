/**
 * The batch over time: one row per batch slot (a place in the running batch), one bar per stay of
 * a request in a slot, coloured by class; a cross where a stay ended by preemption (or failed, or
 * was cancelled). One panel per arm, on one time axis, stacked: static batching shows as columns
 * of bars that start together and leave idle slots until the longest one ends; continuous batching
 * refills a slot the step after it frees.
 */
import * as Plot from '@observablehq/plot';
import type { ServeRun } from '../../spec/workloads/serve-result.ts';
import { fixed } from '../format.ts';
import { baseOptions } from './common.ts';
import { ALERT_COLOR, classOrder, classScale, HALO, longestSeconds } from './serve-common.ts';
import { legendSvg, stackCharts } from './stack.ts';

/** Height of one slot row, px, and the margins of each arm's plot. */
const ROW_PX = 17;
const MARGIN = { top: 4, right: 16, bottom: 24, left: 52 } as const;
/** The last plot carries the x axis label too. */
const LAST_BOTTOM = 40;

/** Why a stay ended, in words, for its tooltip. */
const END_TEXT = {
  finished: 'finished',
  preempted: 'preempted (its pages freed; it recomputes later)',
  failed: 'failed',
  cancelled: 'cancelled (the run stopped)',
} as const;

function armPlot(run: ServeRun, classes: readonly string[], xMax: number, width: number, last: boolean) {
  const slots = Math.max(run.maxBatch, ...run.slots.map((s) => s.slot + 1));
  const stays = run.slots
    .filter((s) => s.slot >= 0)
    .map((s) => ({
      ...s,
      startS: s.startMs / 1000,
      endS: Math.max(s.endMs, s.startMs) / 1000,
      title: `request ${s.id} (${s.class}) in slot ${s.slot}\n${fixed(s.startMs, 0)} → ${fixed(s.endMs, 0)} ms (${fixed(s.endMs - s.startMs, 0)} ms): ${END_TEXT[s.end]}`,
    }));
  const ended = stays.filter(isEnded);
  const bottom = last ? LAST_BOTTOM : MARGIN.bottom;
  return Plot.plot({
    ...baseOptions(width, MARGIN.top + bottom + slots * ROW_PX),
    marginTop: MARGIN.top,
    marginRight: MARGIN.right,
    marginBottom: bottom,
    marginLeft: MARGIN.left,
    x: {
      domain: [0, xMax],
      label: last ? 'Time since the arm started (s) →' : null,
      grid: true,
    },
    y: {
      type: 'band',
      domain: Array.from({ length: slots }, (_, i) => i),
      padding: 0.12,
      label: 'slot',
      tickFormat: (i: number) => (slots > 12 && i % 2 === 1 ? '' : String(i)),
    },
    color: classScale(classes),
    marks: [
      Plot.frame({ stroke: '#e2e8f0' }),
      Plot.barX(stays, {
        x1: 'startS',
        x2: 'endS',
        y: 'slot',
        fill: 'class',
        // A white edge parts two stays of one class that meet in a slot.
        stroke: 'white',
        strokeWidth: 1,
        title: 'title',
        className: 'serve-stay',
      }),
      Plot.dot(ended, {
        x: 'endS',
        y: 'slot',
        symbol: 'times',
        r: 5,
        stroke: ALERT_COLOR,
        strokeWidth: 2.5,
        title: 'title',
        className: 'serve-stay-ended',
      }),
      ...(stays.length === 0
        ? [Plot.text(['no stays recorded'], { frameAnchor: 'middle', fill: '#64748b', ...HALO })]
        : []),
    ],
  });
}

function isEnded(s: { end: ServeRun['slots'][number]['end'] }): boolean {
  return s.end !== 'finished';
}

/** The timeline of each arm, stacked on one time axis, under a legend of the classes. */
export function slotTimelineChart(runs: readonly ServeRun[], width: number): SVGSVGElement | null {
  const withSlots = runs.filter((r) => r.slots.length > 0);
  if (withSlots.length === 0) return null;
  const classes = classOrder(withSlots);
  const scale = classScale(classes);
  const xMax = longestSeconds(withSlots);
  const ended = withSlots.some((r) => r.slots.some(isEnded));
  const legend = legendSvg(
    [
      ...scale.domain.map((label, i) => ({ label, color: scale.range[i] })),
      ...(ended
        ? [{ label: 'preempted (or failed) here', color: ALERT_COLOR, shape: 'cross' as const }]
        : []),
    ],
    width,
  );
  return stackCharts(
    [
      { chart: legend },
      ...withSlots.map((run, i) => ({
        heading: `${run.label}: ${run.maxBatch} slots, ${run.summary.completed} requests in ${fixed(run.durationMs / 1000, 2)} s`,
        chart: armPlot(run, classes, xMax, width, i === withSlots.length - 1),
      })),
    ],
    width,
  );
}
