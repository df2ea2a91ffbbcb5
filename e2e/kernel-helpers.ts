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
