/**
 * The weight format of points and results, in the words the page uses. A point or file from before
 * formats existed carries none: it ran f32, the only format there was.
 */

import type { BenchResult, Point } from '../../results/schema.ts';
import { TENSOR_FORMATS } from '../../weight-format.ts';

export type PointFormat = NonNullable<Point['weightFormat']>;

export function pointFormat(p: Pick<Point, 'weightFormat'>): PointFormat {
  return p.weightFormat ?? 'f32';
}

/** The formats among `points`, widest first (f32, f16, int8, int4, the GGUF types, then mixed). */
export function formatsIn(points: readonly Pick<Point, 'weightFormat'>[]): PointFormat[] {
  const order: readonly PointFormat[] = [...TENSOR_FORMATS, 'mixed'];
  const present = new Set(points.map(pointFormat));
  return order.filter((f) => present.has(f));
}

/** Rank of a format in the sweep's order, so a series runs from the widest format to the narrowest. */
export function formatRank(f: PointFormat): number {
  return f === 'mixed' ? TENSOR_FORMATS.length : TENSOR_FORMATS.indexOf(f);
}

/**
 * What a result's linear weights were: the formats of its points when it swept several, else the
 * model's own format (a GGUF file may mix them), else f32.
 */
export function resultWeights(r: BenchResult): string {
  const formats = formatsIn(r.points);
  if (formats.length > 1) return `${formats.join(', ')} (format sweep)`;
  return r.model.weightFormat ?? formats[0] ?? r.spec.weights ?? 'f32';
}

/**
 * The bits per weight of a file's mix: the whole model's and each type's, as llama.cpp reports a
 * file (" (4.95 bits per weight: q4_k 4.50, q6_k 6.56, …)"); nothing for an all-f32 model or a
 * result from before.
 */
export function bitsText(r: BenchResult): string {
  const types = r.model.weightTypes;
  if (!types || r.model.bitsPerWeight === undefined || types.every((t) => t.format === 'f32')) return '';
  const byType = types.map((t) => `${t.format} ${t.bitsPerWeight.toFixed(2)}`).join(', ');
  return ` (${r.model.bitsPerWeight.toFixed(2)} bits per weight: ${byType})`;
}
