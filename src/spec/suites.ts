import type { SuiteDefaults } from './workload.ts';
import { CAPACITY_MIX, CAPACITY_POOL_MIB } from './workloads/capacity.ts';
import { WORKLOADS } from './workloads/index.ts';
import { SPECULATIVE_DEFAULTS } from './workloads/speculative.ts';

/**
 * The suites: named lists of workloads, the one place the CLI and the page take them and their
 * defaults from. A workload with a suite of its own brings it in its descriptor (`--suite kernels`,
 * `spec`, `serve`, …); the suites here combine workloads.
 */

/** Suites of several workloads, with their sweep values. `quick` finishes in a couple of minutes on a software adapter with ci-tiny. */
export const COMBINED_SUITES = {
  /** The prefill and decode sweeps, then the fused graph against the unfused one at the largest L and first depth. */
  quick: { prefill: [16, 32, 64, 128, 256], depths: [16, 128, 512], gen: 16, reps: 3 },
  full: { prefill: [16, 32, 64, 128, 256, 512, 1024], depths: [0, 256, 1024], gen: 32, reps: 5 },
} as const satisfies Record<string, SuiteDefaults>;

type OwnSuiteName = NonNullable<(typeof WORKLOADS)[number]['suite']>['name'];

/** Every suite a person can name; 'custom' is what a suite becomes when sweep values are given. */
export const SUITE_NAMES = [
  'quick',
  'full',
  ...WORKLOADS.flatMap((d) => (d.suite ? [d.suite.name] : [])),
  'custom',
] as [
  keyof typeof COMBINED_SUITES | OwnSuiteName | 'custom',
  ...(keyof typeof COMBINED_SUITES | OwnSuiteName | 'custom')[],
];
export type SuiteName = (typeof SUITE_NAMES)[number];

/** Every named suite's sweep values and repetitions. */
export const SUITES = {
  ...COMBINED_SUITES,
  ...Object.fromEntries(WORKLOADS.flatMap((d) => (d.suite ? [[d.suite.name, d.suite.defaults]] : []))),
} as Record<Exclude<SuiteName, 'custom'>, SuiteDefaults> & typeof COMBINED_SUITES;

/** The workload that is a suite alone, by the suite's name; undefined for combined suites. */
export function ownSuite(name: SuiteName) {
  return WORKLOADS.find((d) => d.suite?.name === name)?.suite ?? undefined;
}

/** Defaults of every setting a suite does not fix. */
export const SPEC_DEFAULTS = {
  preset: 'ci-tiny',
  seed: 0,
  suite: 'quick',
  warmup: 1,
  pageSize: 16,
  kvMode: 'paged',
  /** The KV element type (`--kv-dtype`); no window (`--window`) is full attention. */
  kvDtype: 'f32',
  batch: 1,
  profile: false,
  autotune: true,
  fuse: true,
  /** The capacity probe's pool, MiB: enough for a few hundred ci-tiny sequences, quick to verify on a CPU. */
  poolMiB: CAPACITY_POOL_MIB,
  longShare: CAPACITY_MIX.longShare,
  longFactor: CAPACITY_MIX.longFactor,
  verifyKs: SPECULATIVE_DEFAULTS.verifyKs,
  drafters: SPECULATIVE_DEFAULTS.drafters,
  draftK: SPECULATIVE_DEFAULTS.draftK,
  specPromptTokens: SPECULATIVE_DEFAULTS.promptTokens,
  specPrompts: SPECULATIVE_DEFAULTS.prompts,
} as const;
