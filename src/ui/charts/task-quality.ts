/**
 * The trained model's task quality as a chart: one row per held-out slice, one mark per weight
 * format at its score (exact match, JSON validity or next-token accuracy, 0–100%), with its 95%
 * Wilson interval as a bar through it. What the table says in numbers, drawn so that a format
 * whose interval leaves f32's stands out, and one whose bar overlaps it does not, whatever its
 * point estimate: the seed's "judge by slice, not by the average", with the noise in sight.
 */
import * as Plot from '@observablehq/plot';
import { type TaskQuality, taskVariant } from '../../spec/workloads/formats.ts';
import { fixed } from '../format.ts';
import { baseOptions, RUN_COLORS } from './common.ts';

/** Test-visible class of each format's marks. */
export const TASK_POINT_CLASS = 'task-point';

/** Vertical px between two formats' marks within a slice's row. */
const STEP = 7;

export function taskQualityChart(
  rows: readonly TaskQuality[],
  width: number,
): SVGSVGElement | HTMLElement | null {
  if (rows.length === 0) return null;
  const slices = [...new Set(rows.map((r) => r.slice))];
  // The variants: weight formats, or (the kv suite) KV caches.
  const formats = [...new Set(rows.map(taskVariant))];
  const rowHeight = Math.max(22, formats.length * STEP + 10);
  const base = baseOptions(width, 0);
  const height = slices.length * rowHeight + (base.marginTop ?? 0) + (base.marginBottom ?? 0) + 24;
  const marks: Plot.Markish[] = [Plot.ruleX([0])];
  formats.forEach((format, i) => {
    const dy = (i - (formats.length - 1) / 2) * STEP;
    const data = rows
      .filter((r) => taskVariant(r) === format)
      .map((r) => ({
        ...r,
        pct: r.score * 100,
        lo: r.score95[0] * 100,
        hi: r.score95[1] * 100,
        title: [
          `${r.slice}, ${format}: ${r.metric} ${fixed(r.score * 100, 1)}% of ${r.cases} ${r.kind === 'text' ? 'tokens' : 'cases'}`,
          `95% interval ${fixed(r.score95[0] * 100, 1)}–${fixed(r.score95[1] * 100, 1)}%`,
          r.deltaPoints === null
            ? 'the reference'
            : `${r.deltaPoints >= 0 ? '+' : ''}${fixed(r.deltaPoints, 1)} points against the reference: ${r.verdict}`,
        ].join('\n'),
      }));
    marks.push(
      Plot.ruleY(data, { y: 'slice', x1: 'lo', x2: 'hi', stroke: () => format, strokeWidth: 2, dy }),
      Plot.dot(data, {
        y: 'slice',
        x: 'pct',
        fill: () => format,
        stroke: 'white',
        r: 3.5,
        dy,
        title: 'title',
        tip: true,
        className: TASK_POINT_CLASS,
      }),
    );
  });
  return Plot.plot({
    ...base,
    height,
    marginLeft: 128,
    x: { domain: [0, 100], label: 'Score (%) with its 95% interval →', grid: true },
    y: { domain: slices, label: null },
    color: { domain: formats, range: RUN_COLORS.slice(0, formats.length), legend: true },
    marks,
  });
}
