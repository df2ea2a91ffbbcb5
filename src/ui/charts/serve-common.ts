/**
 * What the load-test charts share: which arms they draw, the colours of request classes, arms and
 * request phases, and each request's timeline cut into queue, prefill and decode. Phases follow
 * vLLM's definitions (src/serve/metrics.ts): queue = admitted − arrival, TTFT = first token −
 * arrival, so TTFT = queue + prefill exactly and a stacked bar of the two is the TTFT.
 */
import type { ServeResult, ServeRun } from '../../spec/workloads/serve-result.ts';
import { PASS_COLORS, RUN_COLORS } from './common.ts';

export type ServeRequest = ServeRun['requests'][number];

/** A white outline under chart text, so a bar or grid passing behind a label does not hide it. */
export const HALO = { stroke: 'white', strokeWidth: 3, paintOrder: 'stroke' } as const;

/**
 * One colour per request class (Okabe–Ito, colour-blind safe), in the order of `classOrder`. They
 * differ in lightness as well as hue, so short and long stays still part in greyscale print.
 */
const CLASS_COLORS = [
  '#0072b2',
  '#e69f00',
  '#009e73',
  '#cc79a7',
  '#56b4e9',
  '#d55e00',
  '#7f7f7f',
  '#000000',
] as const;

/** The default mix's classes first, in the order the README lists them; any others after, by name. */
const KNOWN_CLASSES = [
  'short',
  'rag',
  'long-gen',
  'short-in/short-out',
  'short-in/long-out',
  'long-in/short-out',
  'long-in/long-out',
];

/** Colours of a request's phases: waiting is grey; prefill and decode keep the page's pass colours. */
export const PHASE_COLORS = {
  network: '#a855f7',
  queue: '#94a3b8',
  prefill: PASS_COLORS.prefill,
  decode: PASS_COLORS.decode,
} as const;

/** Mark of a stay or request that ended otherwise than finished. */
export const ALERT_COLOR = '#b91c1c';

/** Every class of the runs, the known ones in their usual order, the rest by name. */
export function classOrder(runs: readonly ServeRun[]): string[] {
  const names = new Set(runs.flatMap((r) => [...r.requests.map((q) => q.class), ...Object.keys(r.byClass)]));
  const rank = (c: string) => {
    const i = KNOWN_CLASSES.indexOf(c);
    return i < 0 ? KNOWN_CLASSES.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** Plot colour options for classes. */
export function classScale(classes: readonly string[]): { domain: string[]; range: string[] } {
  return { domain: [...classes], range: classes.map((_, i) => CLASS_COLORS[i % CLASS_COLORS.length]) };
}

/** Plot colour options for arms, one run colour each, by label. */
export function armScale(runs: readonly ServeRun[]): { domain: string[]; range: string[] } {
  return { domain: runs.map((r) => r.label), range: runs.map((_, i) => RUN_COLORS[i % RUN_COLORS.length]) };
}

/**
 * The arms the per-arm charts draw: the A/B arms (all on one trace, so they compare request for
 * request); without them the matrix cells or the swept rates; the calibration alone as a last resort.
 */
export function chartArms(s: ServeResult): ServeRun[] {
  for (const kind of ['ab', 'matrix', 'sweep', 'calibration'] as const) {
    const runs = s.runs.filter((r) => r.experiment === kind);
    if (runs.length > 0) return runs;
  }
  return [];
}

/** A finished request's timeline in phases (ms); null for one that did not finish. */
export interface Phases {
  arrivalMs: number;
  admittedMs: number;
  firstTokenMs: number;
  finishMs: number;
  queueMs: number;
  /** Admission to first token: prompt chunks, plus any wait after a preemption before it. */
  prefillMs: number;
  decodeMs: number;
  ttftMs: number;
  e2eMs: number;
  /** (E2E − TTFT) ÷ (tokens − 1); null with fewer than two tokens. */
  tpotMs: number | null;
}

export function phasesOf(q: ServeRequest): Phases | null {
  if (
    q.status !== 'finished' ||
    q.admittedMs === null ||
    q.finishMs === null ||
    q.tokenTimesMs.length === 0
  ) {
    return null;
  }
  const firstTokenMs = q.tokenTimesMs[0];
  const ttftMs = firstTokenMs - q.arrivalMs;
  const e2eMs = q.finishMs - q.arrivalMs;
  return {
    arrivalMs: q.arrivalMs,
    admittedMs: q.admittedMs,
    firstTokenMs,
    finishMs: q.finishMs,
    queueMs: q.admittedMs - q.arrivalMs,
    prefillMs: firstTokenMs - q.admittedMs,
    decodeMs: q.finishMs - firstTokenMs,
    ttftMs,
    e2eMs,
    tpotMs: q.outputTokens >= 2 ? (e2eMs - ttftMs) / (q.outputTokens - 1) : null,
  };
}

/** The longest arm's duration, s: per-arm charts share one time axis so arms line up. */
export function longestSeconds(runs: readonly ServeRun[]): number {
  return Math.max(1e-3, ...runs.map((r) => r.durationMs / 1000));
}

/** Rough width of one character of a 12 px label, px, to size margins for labels. */
export const CHAR_WIDTH = 6.6;
