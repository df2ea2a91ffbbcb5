import type { CaseName, CaseSpec } from '../src/checks/catalogue.ts';
import { expect, type Harness } from './harness/client.ts';
import type { CheckResult } from './harness/kernel-checks.ts';

/** Runs one catalogue case in the runtime under test and returns its comparison with the float64 reference. */
export function check<N extends CaseName>(
  harness: Harness,
  name: N,
  spec: CaseSpec<N>,
): Promise<CheckResult> {
  return harness.call('kernels', 'check', name, spec);
}

/** Fails with the case, its error and its first mismatches unless the check passed. */
export function expectPassed(r: CheckResult) {
  expect(
    r.passed,
    `${r.kernel} ${r.variant} ${r.shape}: maxAbsErr ${r.maxAbsErr}, first mismatches ${JSON.stringify(r.mismatches)}`,
  ).toBe(true);
}

/** Every page size the paged cache supports, and the contiguous cache with a slot of `capacity` tokens. */
export const layouts = (capacity: number) =>
  [
    { paged: true, pageSize: 8 },
    { paged: true, pageSize: 16 },
    { paged: true, pageSize: 32 },
    { paged: false, pageSize: capacity },
  ] as const;

/** GQA ratios 1, 3 and 8 (heads / kvHeads), and an odd head count. */
export const GQA = [
  { heads: 4, kvHeads: 4 },
  { heads: 9, kvHeads: 3 },
  { heads: 8, kvHeads: 1 },
] as const;

/** The long-context tests take up to a minute on SwiftShader, more when other jobs share its cores. */
export const LONG_TEST_TIMEOUT_MS = 240_000;
