/**
 * Successive halving: the autotuner's search over a space of kernel configurations, kept free of
 * the GPU so its bookkeeping can be tested with made-up timings.
 *
 * Rung 0 tries the candidates in the order given (nearest the space's centre first, see
 * variants.ts): each is compiled, checked against the CPU reference and timed with `reps0`
 * repetitions. A candidate that fails is recorded and never chosen. Rung r keeps the fastest
 * ⌈n / eta⌉ of the previous rung's n and times them again with reps0 · eta^r repetitions, until
 * one would be left. The budget bounds the whole search: once it is spent, rung 0 tries no further
 * candidate past the first `minTried` (they are recorded as skipped; one that passes is always
 * found first, if any does),
 * and a later rung runs only if its estimated cost fits in what is left. The winner is the fastest
 * of the last rung that ran, so it is compared only with candidates timed as often as it was.
 */

export interface HalvingOptions {
  /** Each rung keeps ⌈n / eta⌉ candidates and times them eta times as often. */
  eta: number;
  /** Timing repetitions at rung 0. */
  reps0: number;
  /** Milliseconds the whole search may take (compiles and checks included). */
  budgetMs: number;
  /**
   * The first this many candidates are tried whatever the budget (the families' centres), so a
   * slow start cannot leave a whole family untried (default 0).
   */
  minTried?: number;
  now: () => number;
}

/** Rung 0 of one candidate: compile, check against the reference, time with `reps` repetitions. */
export type FirstTrial = (reps: number) => Promise<{ valid: boolean; ms: number | null; error?: string }>;

export interface HalvingRecord<C> {
  candidate: C;
  valid: boolean;
  /** The median time of the last rung it ran in; null if it failed or was not tried. */
  ms: number | null;
  /** The last rung it was timed in (0 = the first timing); −1 if it was never timed. */
  rung: number;
  /** Not tried: the budget was spent before its turn. */
  skipped: boolean;
  error?: string;
}

export interface HalvingResult<C> {
  /** The fastest candidate of the last rung; undefined when none passed. */
  best: C | undefined;
  records: HalvingRecord<C>[];
  /** Rungs that ran (rung 0 included). */
  rungs: number;
  /** Whether the budget stopped the search early (skipped candidates or rungs). */
  budgetSpent: boolean;
}

export async function successiveHalving<C>(
  candidates: readonly C[],
  first: (c: C) => FirstTrial,
  again: (c: C, reps: number) => Promise<number>,
  o: HalvingOptions,
): Promise<HalvingResult<C>> {
  if (!(o.eta >= 2) || !(o.reps0 >= 1))
    throw new Error(`successiveHalving: eta ${o.eta} < 2 or reps0 ${o.reps0} < 1`);
  const t0 = o.now();
  const spent = () => o.now() - t0;
  const records: HalvingRecord<C>[] = candidates.map((candidate) => ({
    candidate,
    valid: false,
    ms: null,
    rung: -1,
    skipped: false,
  }));
  let budgetSpent = false;
  // Rung 0, in the order given.
  for (const [index, r] of records.entries()) {
    const anyValid = records.some((x) => x.valid);
    if (anyValid && index >= (o.minTried ?? 0) && spent() >= o.budgetMs) {
      r.skipped = true;
      budgetSpent = true;
      continue;
    }
    const res = await first(r.candidate)(o.reps0);
    r.valid = res.valid && res.ms !== null;
    r.ms = r.valid ? res.ms : null;
    r.rung = r.valid ? 0 : -1;
    if (res.error !== undefined) r.error = res.error;
  }
  let alive = records.filter((r) => r.valid);
  const byTime = (a: HalvingRecord<C>, b: HalvingRecord<C>) => (a.ms as number) - (b.ms as number);
  let rungs = alive.length > 0 ? 1 : 0;
  for (let rung = 1; alive.length > 1; rung++) {
    const keep = alive.sort(byTime).slice(0, Math.ceil(alive.length / o.eta));
    // One survivor is the winner already: timing it again would only spend the budget.
    if (keep.length <= 1) break;
    const reps = o.reps0 * o.eta ** rung;
    // The cost of this rung if each repetition costs what the survivors' last timing did.
    const timePerRep = keep.reduce((s, r) => s + (r.ms as number), 0) / keep.length;
    if (spent() + keep.length * reps * timePerRep > o.budgetMs) {
      budgetSpent = true;
      alive = keep;
      break;
    }
    for (const r of keep) {
      r.ms = await again(r.candidate, reps);
      r.rung = rung;
    }
    alive = keep;
    rungs = rung + 1;
  }
  // The winner among those timed in the last rung that ran.
  const last = Math.max(-1, ...records.map((r) => r.rung));
  const finalists = records.filter((r) => r.valid && r.rung === last).sort(byTime);
  return { best: finalists[0]?.candidate, records, rungs, budgetSpent };
}
