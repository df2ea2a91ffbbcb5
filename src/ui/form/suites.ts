/**
 * What each suite does to the run form: its name in the suite select (or none, for the suites the
 * page does not offer), which fields it shows, what choosing it fills the sweep fields with, and
 * what those fields are called in it. One entry per suite name, so a new suite does not compile
 * until it has one here. The defaults of the fields no suite sets are here too.
 */
import { PRESET_NAMES } from '../../model/config.ts';
import { SPEC_DEFAULTS, SUITE_NAMES, SUITES, type SuiteName } from '../../spec/suites.ts';
import { SERVE_DEFAULTS } from '../../spec/workloads/serve-settings.ts';
import { SUSTAINED_DEFAULTS } from '../../spec/workloads/sustained.ts';
import { WEIGHT_FORMATS } from '../../weight-format.ts';
import type { FieldName } from './fields.ts';

/** The fields that hold a sweep's values; their labels and hints change with the suite. */
export const SWEEP_FIELDS = ['prefill', 'depths', 'gen', 'reps'] as const;
type SweepField = (typeof SWEEP_FIELDS)[number];

/**
 * What comes and goes with the suite: these fields, and the speculative suite's and the load
 * test's own fieldsets.
 */
export const TOGGLED = [
  ...SWEEP_FIELDS,
  'profile',
  'batch',
  'weights',
  'weightsList',
  'specFields',
  'serveFields',
  'sustainedFields',
] as const;
export type Toggled = (typeof TOGGLED)[number];

interface FieldText {
  label: string;
  hint: string;
}

/** A suite's sweep values, as SUITES holds them. */
interface SweepValues {
  prefill: readonly number[];
  depths: readonly number[];
  gen: number;
  reps: number;
}

/**
 * What the sweep fields hold while a suite is chosen:
 * - `named`: the suite's values, filled in when it is chosen; typing others makes it the named
 *   suite they match, or custom, and a named suite is sent by its name alone;
 * - `own`: the suite's values as it means them (the speculative curve's depths, B-scaling's one
 *   depth, the format sweep's one length and depth), filled in when it is chosen and sent as
 *   typed: typing keeps the suite, and a value the model cannot hold is an error, not dropped;
 * - `custom`: what was typed, sent as typed;
 * - `none`: the load test has no sweep.
 */
type Sweep = { kind: 'named' | 'own'; values: SweepValues } | { kind: 'custom' | 'none' };

interface SuiteForm {
  /** Its name in the suite select. */
  option: string;
  sweep: Sweep;
  /** What it shows of what comes and goes with the suite; the rest is hidden. */
  shows: readonly Toggled[];
  /** Labels and hints of the sweep fields; one left out keeps what it had (it is hidden). */
  text: Partial<Record<SweepField, FieldText>>;
}

/** A sweep's fields (the quick and full suites', and a custom one's) and their words. */
const SWEEP_SHOWS = ['prefill', 'depths', 'gen', 'reps', 'profile', 'batch', 'weights'] as const;
export const SWEEP_TEXT = {
  prefill: { label: 'Prefill lengths L', hint: 'Prompt lengths, comma-separated.' },
  depths: { label: 'Decode depths', hint: 'Context tokens before generation.' },
  gen: { label: 'Tokens to generate', hint: '' },
  reps: { label: 'Repetitions', hint: '' },
} as const;

/**
 * The suites, in SUITE_NAMES' order (the select's). Prefill lengths, per-kernel profiling and the
 * decode batch are the sweeps': the speculative workload has none of them, B-scaling sets the
 * batch itself, and the load test has no sweep; the format sweep times one sequence without a
 * profile, and takes a list of formats instead of one.
 */
const SUITE_FORMS = {
  quick: {
    option: 'quick',
    sweep: { kind: 'named', values: SUITES.quick },
    shows: SWEEP_SHOWS,
    text: SWEEP_TEXT,
  },
  full: {
    option: 'full',
    sweep: { kind: 'named', values: SUITES.full },
    shows: SWEEP_SHOWS,
    text: SWEEP_TEXT,
  },
  // The kernel suite is a CLI job (npm run bench -- --suite kernels), and so is the capacity probe,
  // whose pool has no field here (--pool-mib).
  kernels: null,
  capacity: null,
  spec: {
    option: 'speculative',
    sweep: { kind: 'own', values: SUITES.spec },
    shows: ['depths', 'gen', 'reps', 'weights', 'specFields'],
    // The depths and the tokens to generate are the verify-K curve's depths and the tokens per
    // prompt, as in buildSpec.
    text: {
      depths: { label: 'Verify-curve depths', hint: 'Context tokens before each verify pass of the curve.' },
      gen: { label: 'Tokens per prompt', hint: 'Generated per prompt, by plain decode and by each drafter.' },
      reps: { label: 'Repetitions', hint: 'Timed samples of each curve point.' },
    },
  },
  serve: {
    option: 'load test',
    sweep: { kind: 'none' },
    shows: ['weights', 'serveFields'],
    text: SWEEP_TEXT,
  },
  case: {
    option: 'case study',
    sweep: { kind: 'none' },
    shows: ['weights'],
    text: SWEEP_TEXT,
  },
  batch: {
    option: 'B-scaling',
    sweep: { kind: 'own', values: SUITES.batch },
    shows: ['depths', 'gen', 'reps', 'profile', 'weights'],
    text: {
      depths: { label: 'Depth', hint: 'Context tokens of every sequence before its timed decode steps.' },
      gen: { label: 'Tokens to generate', hint: 'Decode steps of B sequences each repetition times.' },
      reps: { label: 'Repetitions', hint: 'Timed samples at each B.' },
    },
  },
  formats: {
    option: 'weight formats',
    sweep: { kind: 'own', values: SUITES.formats },
    shows: ['prefill', 'depths', 'gen', 'reps', 'weightsList'],
    text: {
      prefill: { label: 'Prompt length L', hint: 'One length: each format’s timed prefill.' },
      depths: { label: 'Decode depth', hint: 'One depth: context tokens before each format’s decode steps.' },
      gen: { label: 'Tokens to generate', hint: '' },
      reps: { label: 'Repetitions', hint: 'Timed samples of each format’s prefill and decode.' },
    },
  },
  // Fused against unfused graph alone is a CLI job too (--suite fusion); the quick suite ends with it.
  fusion: null,
  sustained: {
    option: 'sustained load',
    sweep: { kind: 'own', values: SUITES.sustained },
    shows: ['prefill', 'depths', 'gen', 'weights', 'sustainedFields'],
    text: {
      prefill: { label: 'Prompt length L', hint: 'One length: the prefill repeated all along.' },
      depths: { label: 'Decode depth', hint: 'One depth: context tokens before each decode generation.' },
      gen: { label: 'Tokens to generate', hint: 'Per decode generation.' },
    },
  },
  // The KV matrix is a CLI job too (--suite kv: its lists of KV heads, types and windows); the page
  // shows its section, and any run takes one KV type and window from the Advanced fields.
  kv: null,
  custom: {
    option: 'custom',
    sweep: { kind: 'custom' },
    shows: SWEEP_SHOWS,
    text: SWEEP_TEXT,
  },
} as const satisfies { readonly [S in SuiteName]: SuiteForm | null };

/** The suites the page offers. */
export type PageSuite = {
  [S in SuiteName]: (typeof SUITE_FORMS)[S] extends null ? never : S;
}[SuiteName];

export const PAGE_SUITES = SUITE_NAMES.filter((s): s is PageSuite => SUITE_FORMS[s] !== null);

export function suiteForm(suite: PageSuite): SuiteForm {
  return SUITE_FORMS[suite];
}

/** Whether a suite shows a field (or fieldset) of those that come and go with the suite. */
export function shows(suite: PageSuite, name: Toggled): boolean {
  return suiteForm(suite).shows.includes(name);
}

/** Defaults of the fields a suite does not set: the spec's own, so the CLI and the page agree. */
export const FIELD_DEFAULTS = {
  preset: PRESET_NAMES[0],
  seed: SPEC_DEFAULTS.seed,
  weights: 'f32',
  weightsList: WEIGHT_FORMATS.join(', '),
  warmup: SPEC_DEFAULTS.warmup,
  pageSize: SPEC_DEFAULTS.pageSize,
  kvMode: SPEC_DEFAULTS.kvMode,
  kvDtype: SPEC_DEFAULTS.kvDtype,
  // Empty: full attention.
  window: '',
  batch: SPEC_DEFAULTS.batch,
  profile: SPEC_DEFAULTS.profile,
  autotune: SPEC_DEFAULTS.autotune,
  fuse: SPEC_DEFAULTS.fuse,
  drafters: SPEC_DEFAULTS.drafters.join(', '),
  k: SPEC_DEFAULTS.draftK,
  adaptiveK: false,
  verifyKs: SPEC_DEFAULTS.verifyKs.join(', '),
  // Empty: greedy.
  temperature: '',
  rate: '',
  requests: SERVE_DEFAULTS.requests,
  batching: 'both',
  prefixCache: 'off',
  prefixTokens: 0,
  slo: '',
  maxBatch: SERVE_DEFAULTS.maxBatch,
  tokenBudget: SERVE_DEFAULTS.tokenBudget,
  sweep: 0,
  durationS: `${SUSTAINED_DEFAULTS.durationS / 60}m`,
  windowS: SUSTAINED_DEFAULTS.windowS,
} as const satisfies Partial<Record<FieldName, string | number | boolean>>;
