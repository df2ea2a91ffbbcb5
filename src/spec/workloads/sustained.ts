import { z } from 'zod';
import { fixed, MISSING, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { percentile } from '../../stats.ts';
import { nonNegative } from '../fields.ts';
import {
  type CommonOptions,
  decodePrompt,
  depth,
  length,
  MAX_TIMED_PASSES,
  pointNeeds,
  pointUnfit,
  type WorkloadDescriptor,
} from '../workload.ts';

/**
 * Sustained load: one prefill of L tokens and one decode generation at a depth, again and again for
 * the whole duration, with tok/s per window of wall time and the FMA and copy roofs measured again
 * every minute. A laptop that throttles after a minute looks fast in a 40-second run; this shows
 * when it slows down and whether its roofs fell with it.
 */
export const SustainedWorkloadSchema = z
  .object({
    kind: z.literal('sustained'),
    /** How long the passes repeat: seconds of load (the clock stops while the roofs are measured). */
    durationS: z.number().positive().max(86_400),
    /** The length of one tok/s window, seconds. */
    windowS: z.number().positive().max(3600),
    /** How often the FMA and copy roofs are measured again, seconds (also at the start and the end). */
    roofEveryS: z.number().positive().max(86_400),
    /** The prefill's prompt length L. */
    length,
    /** The decode generation's context before its first step. */
    depth,
    /** Tokens of each decode generation (its first comes from the depth prompt's prefill). */
    gen: z.number().int().min(2).max(MAX_TIMED_PASSES),
  })
  .strict()
  .refine((w) => w.windowS <= w.durationS, {
    message: 'the tok/s window must not be longer than the duration',
    path: ['windowS'],
  });

type SustainedWorkload = z.infer<typeof SustainedWorkloadSchema>;

/** What a drop means: tok/s more than this share below the first minute's. */
export const THROTTLE_DROP = 0.1;
/** The first minute: the baseline every later window is held against. */
export const BASELINE_S = 60;

export const SustainedWindowSchema = z
  .object({
    /** Seconds from the first pass to the window's start. */
    startS: nonNegative,
    pass: z.enum(['prefill', 'decode']),
    /** Tokens the pass produced in the window ÷ the wall time its passes took (roof checks excluded). */
    tokPerS: nonNegative,
    /** Passes of this kind that started in the window. */
    passes: z.number().int().positive(),
  })
  .strict();

export const SustainedSectionSchema = z
  .object({
    durationS: nonNegative,
    windowS: z.number().positive(),
    prefillTokens: z.number().int().positive(),
    decodeDepth: z.number().int().nonnegative(),
    windows: z.array(SustainedWindowSchema).max(100_000),
    roofs: z
      .array(z.object({ atS: nonNegative, fmaGflops: nonNegative, copyGBps: nonNegative }).strict())
      .max(10_000),
    throttling: z
      .object({
        detected: z.boolean(),
        /** When the slower stretch began, seconds from the start; null when none was found. */
        startS: nonNegative.nullable(),
        /**
         * How far the windows after the first minute fell below it, %: from the drop's start when one
         * was found, else over every later window (negative: faster); null without a later window.
         */
        dropPct: z.number().finite().nullable(),
        /** The pass it was found in (the larger drop when both fell), or the pass dropPct is of. */
        pass: z.enum(['prefill', 'decode']).nullable(),
        /** The first minute's median tok/s of each pass, the baseline. */
        baseline: z.object({ prefill: nonNegative.nullable(), decode: nonNegative.nullable() }).strict(),
      })
      .strict(),
  })
  .strict();

export type SustainedSection = z.infer<typeof SustainedSectionSchema>;
export type SustainedWindow = z.infer<typeof SustainedWindowSchema>;

const median = (xs: readonly number[]) => percentile(xs, 50);

/**
 * Throttling, from the windows: each pass's baseline is the median tok/s of its windows that start
 * in the first minute. A later window more than 10 % below it starts a drop when the window after
 * it (if there is one) is below too, so one noisy window is not a throttle; the drop's size is the
 * median of the windows from there on against the baseline.
 */
export function detectThrottling(windows: readonly SustainedWindow[]): SustainedSection['throttling'] {
  const baseline = { prefill: null as number | null, decode: null as number | null };
  let found: { startS: number; dropPct: number; pass: 'prefill' | 'decode' } | null = null;
  let overall: { dropPct: number; pass: 'prefill' | 'decode' } | null = null;
  for (const pass of ['prefill', 'decode'] as const) {
    const own = windows.filter((w) => w.pass === pass).sort((a, b) => a.startS - b.startS);
    const first = own.filter((w) => w.startS < BASELINE_S);
    if (first.length === 0) continue;
    const base = median(first.map((w) => w.tokPerS));
    baseline[pass] = base;
    const later = own.filter((w) => w.startS >= BASELINE_S);
    if (later.length === 0 || base <= 0) continue;
    const drop = (xs: readonly SustainedWindow[]) => 100 * (1 - median(xs.map((w) => w.tokPerS)) / base);
    const all = drop(later);
    if (!overall || all > overall.dropPct) overall = { dropPct: all, pass };
    const low = (w: SustainedWindow | undefined) => w === undefined || w.tokPerS < (1 - THROTTLE_DROP) * base;
    const i = later.findIndex((w, j) => low(w) && low(later[j + 1]));
    if (i < 0) continue;
    const d = drop(later.slice(i));
    if (!found || d > found.dropPct) found = { startS: later[i].startS, dropPct: d, pass };
  }
  if (found) return { detected: true, ...found, baseline };
  return {
    detected: false,
    startS: null,
    dropPct: overall?.dropPct ?? null,
    pass: overall?.pass ?? null,
    baseline,
  };
}

/** `60`, `60s`, `5m`, `1h` or `1.5m` as seconds; NaN when it is none of those. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$/.exec(text);
  if (!m) return Number.NaN;
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

export const SUSTAINED_DEFAULTS = {
  durationS: 300,
  windowS: 10,
  roofEveryS: 60,
  suite: { prefill: [128], depths: [128], gen: 32, reps: 3 },
} as const;

export const SUSTAINED_CAPTION =
  'Sustained load: tok/s per window (tokens ÷ the wall time of that pass in the window), and the FMA and copy roofs measured again during the run; times are seconds of load, the clock stopped while the roofs are measured';

/** What the throttling check found, in words, for the report and the page ("Throttling: …"). */
export function throttlingVerdict(t: SustainedSection['throttling']): string {
  if (t.detected)
    return `${t.pass} tok/s fell ${fixed(t.dropPct ?? 0, 1)} % below the first minute from ${fixed(t.startS ?? 0, 0)} s on.`;
  if (t.dropPct === null) return 'not judged: no window after the first minute (run longer than 60 s).';
  return `none: after the first minute, ${t.pass} tok/s was ${fixed(Math.abs(t.dropPct), 1)} % ${t.dropPct >= 0 ? 'below' : 'above'} it (the bar is ${THROTTLE_DROP * 100} %).`;
}

/** One row per window start: each pass's tok/s there (absent where that pass had no pass in it). */
export function windowRows(s: SustainedSection): { startS: number; prefill?: number; decode?: number }[] {
  const byStart = new Map<number, { prefill?: number; decode?: number }>();
  for (const w of s.windows) byStart.set(w.startS, { ...byStart.get(w.startS), [w.pass]: w.tokPerS });
  return [...byStart.entries()].sort((a, b) => a[0] - b[0]).map(([startS, v]) => ({ startS, ...v }));
}

function sustainedReport(s: SustainedSection): string[][] {
  return [
    [
      `**${SUSTAINED_CAPTION}.** ${fixed(s.durationS, 0)} s, windows of ${fixed(s.windowS, 0)} s; prefill L = ${s.prefillTokens}, decode at depth ${s.decodeDepth}.`,
      '',
      `**Throttling:** ${throttlingVerdict(s.throttling)}`,
      '',
      markdownRow(['window start s', 'prefill tok/s', 'decode tok/s']),
      markdownDelimiter('rrr'),
      ...windowRows(s).map((v) =>
        markdownRow([
          fixed(v.startS, 0),
          v.prefill === undefined ? MISSING : fixed(v.prefill, 1),
          v.decode === undefined ? MISSING : fixed(v.decode, 1),
        ]),
      ),
      '',
      markdownRow(['roofs at s', 'FMA GFLOP/s', 'copy GB/s']),
      markdownDelimiter('rrr'),
      ...s.roofs.map((r) => markdownRow([fixed(r.atS, 1), fixed(r.fmaGflops, 1), fixed(r.copyGBps, 1)])),
    ],
  ];
}

const section = {
  /** tok/s over time and the roofs measured again (`--suite sustained`). */
  sustained: SustainedSectionSchema.optional(),
};

/** Sustained load: the passes repeat for a duration; tok/s per window, roofs every minute, throttling. */
export const sustained = {
  kind: 'sustained',
  settings: SustainedWorkloadSchema,
  unitName: 'windows',
  units: (w) => Math.ceil(w.durationS / w.windowS),
  label: (w) =>
    `sustained load for ${fixed(w.durationS, 0)} s (prefill L = ${w.length}, decode at depth ${w.depth}, tok/s per ${fixed(w.windowS, 0)} s)`,
  unfit: pointUnfit,
  fit: (w, maxSeqLen) => (pointUnfit(w, maxSeqLen).length === 0 ? w : null),
  modelErrors: () => [],
  // The run's own model, one sequence at a time.
  needs: (w) => ({
    ...pointNeeds(w),
    maxSequences: 1,
    maxBatch: 1,
    gemvBatches: [1],
    decodeContext: decodePrompt(w.depth) + w.gen - 1,
  }),
  section,
  suite: {
    name: 'sustained' as const,
    help: `sustained load: a prefill of L=${SUSTAINED_DEFAULTS.suite.prefill[0]} and ${SUSTAINED_DEFAULTS.suite.gen} tokens at depth ${SUSTAINED_DEFAULTS.suite.depths[0]}, again and again for --duration (default ${SUSTAINED_DEFAULTS.durationS / 60} min); tok/s per --interval window (default ${SUSTAINED_DEFAULTS.windowS} s), the FMA and copy roofs measured again every --roofs-every seconds (default ${SUSTAINED_DEFAULTS.roofEveryS}), and throttling: a drop of more than ${THROTTLE_DROP * 100} % from the first minute (--prefill, --depth, --gen: the passes)`,
    defaults: SUSTAINED_DEFAULTS.suite,
    weightList: false,
    build: (
      o: CommonOptions & { durationS?: number; windowS?: number; roofEveryS?: number },
    ): SustainedWorkload[] => [
      {
        kind: 'sustained',
        durationS: o.durationS ?? SUSTAINED_DEFAULTS.durationS,
        windowS: o.windowS ?? SUSTAINED_DEFAULTS.windowS,
        roofEveryS: o.roofEveryS ?? SUSTAINED_DEFAULTS.roofEveryS,
        length: o.prefill?.[0] ?? SUSTAINED_DEFAULTS.suite.prefill[0],
        depth: o.depths?.[0] ?? SUSTAINED_DEFAULTS.suite.depths[0],
        gen: o.gen ?? SUSTAINED_DEFAULTS.suite.gen,
      },
    ],
  },
  report: (s) => (s.sustained ? sustainedReport(s.sustained) : []),
} satisfies WorkloadDescriptor<SustainedWorkload, typeof section>;
