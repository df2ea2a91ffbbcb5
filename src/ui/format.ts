/**
 * Number formats of the page. The results table must read exactly like the CLI's Markdown report,
 * so the point formats come from src/results/export.ts itself.
 */

import { fixed, formatIntensity, formatMs, MISSING } from '../markdown.ts';
import { HIGH_VARIANCE_LEGEND, HIGH_VARIANCE_MARK, pointSize } from '../results/export.ts';
import type { Point } from '../results/schema.ts';

export { fixed, formatIntensity, formatMs, HIGH_VARIANCE_LEGEND, HIGH_VARIANCE_MARK, MISSING, pointSize };

/** A short, human label of a point: `L=64` for prefill, `d=512` (or `d=512 ×4`) for decode. */
export function pointLabel(
  p: Pick<Point, 'pass' | 'tokens' | 'depth' | 'batch'> & Partial<Pick<Point, 'graph'>>,
): string {
  // The fusion workload's points name their graph: beside the sweep's L=256 they are "L=256 fused"
  // and "L=256 unfused", not two more "L=256".
  return `${p.pass === 'prefill' ? 'L' : 'd'}=${pointSize(p)}${p.graph ? ` ${p.graph}` : ''}`;
}

/** Seconds as m:ss, for elapsed time and ETA. */
export function formatClock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** A byte count in binary units, for device limits (1 GiB, 32 KiB). */
export function formatBinaryBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[u]}`;
}

/** A parameter count: 428.3k, 135.0M, 1.24B. */
export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** A rate or size with about three significant digits, for chart labels and cards. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return MISSING;
  const a = Math.abs(n);
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  if (a >= 1) return n.toFixed(2);
  return n.toPrecision(2);
}

/** A local date and time, for history entries (ISO strings from files are shown as given when unparsable). */
export function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? iso
    : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * An exact count with thousands separators (1,114,112,000), the same in every locale, so a figure
 * on the page can be checked digit by digit against a hand calculation.
 */
export function formatExact(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Unit ladders of `formatBytes`: decimal (SI, powers of 1000) and binary (IEC, powers of 1024). */
const BYTE_UNITS = {
  decimal: { base: 1000, units: ['B', 'kB', 'MB', 'GB', 'TB', 'PB'] },
  binary: { base: 1024, units: ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] },
} as const;

/**
 * A byte count to two decimals in the largest unit under it: 137.95 GB (decimal) or 128.48 GiB
 * (binary). Memory is sold in GB and reported by drivers in GiB; the page shows both, labelled,
 * because the 7% between them is the size of a typical headroom mistake.
 */
export function formatBytes(n: number, system: keyof typeof BYTE_UNITS): string {
  if (!Number.isFinite(n)) return MISSING;
  const { base, units } = BYTE_UNITS[system];
  let v = Math.abs(n);
  let u = 0;
  while (v >= base && u < units.length - 1) {
    v /= base;
    u++;
  }
  return `${n < 0 ? '−' : ''}${u === 0 ? v.toFixed(0) : v.toFixed(2)} ${units[u]}`;
}
