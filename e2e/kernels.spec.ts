import { expect, type Page, test } from '@playwright/test';
import type { CaseName, CaseSpec } from '../src/kernels/cases/catalogue.ts';
import { VARIANT_CANDIDATES } from '../src/kernels/variants.ts';
import type { CheckResult } from './harness/kernel-checks.ts';

/** Opens the harness and waits for a real adapter; a missing adapter fails the suite, it is never skipped. */
async function openHarness(page: Page) {
  await page.goto('/e2e/harness/index.html');
  const adapter = await page.evaluate(async () => (await window.harness).adapter);
  expect(adapter.vendor.length + adapter.architecture.length).toBeGreaterThan(0);
  return adapter;
}

/** Runs one catalogue case in the page and returns its comparison with the float64 reference. */
function check<N extends CaseName>(page: Page, name: N, spec: CaseSpec<N>): Promise<CheckResult> {
  return page.evaluate(async ([n, s]) => (await window.harness).kernels.check(n, s), [name, spec] as const);
}

function expectPassed(r: CheckResult) {
  expect(
    r.passed,
    `${r.kernel} ${r.variant} ${r.shape}: maxAbsErr ${r.maxAbsErr}, first mismatches ${JSON.stringify(r.mismatches)}`,
  ).toBe(true);
}

const LENGTHS = [1, 7, 33, 100, 257];

/** Every page size the paged cache supports, and the contiguous cache with a slot of `capacity` tokens. */
const layouts = (capacity: number) =>
  [
    { paged: true, pageSize: 8 },
    { paged: true, pageSize: 16 },
    { paged: true, pageSize: 32 },
    { paged: false, pageSize: capacity },
  ] as const;

test.describe('kernels against the CPU reference', () => {
  test.beforeEach(async ({ page }) => {
    await openHarness(page);
  });

  test('embedding, rmsnorm, residual add, swiglu, argmax', async ({ page }) => {
    for (const rows of LENGTHS) {
      expectPassed(await check(page, 'embedding', { rows, d: 20, vocab: 37 }));
      expectPassed(await check(page, 'rmsnorm', { rows, d: 132, eps: 1e-5, scale: 3 }));
      expectPassed(await check(page, 'residualAdd', { n: rows * 12 }));
      expectPassed(await check(page, 'swiglu', { n: rows * 44 }));
      expectPassed(await check(page, 'argmax', { rows, n: 1001 }));
    }
  });

  test('rope', async ({ page }) => {
    for (const rows of LENGTHS) {
      for (const headDim of [8, 64]) {
        expectPassed(await check(page, 'rope', { rows, heads: 3, headDim, start: 5, theta: 10000 }));
      }
    }
  });

  test('matmul, every variant the autotuner can choose, on non-tile-multiple shapes', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.matmul) {
      for (const M of LENGTHS) {
        for (const [N, K] of [
          [13, 20],
          [67, 132],
          [509, 4],
          [1, 260],
        ]) {
          expectPassed(await check(page, 'matmul', { M, N, K, variant }));
        }
      }
    }
  });

  test('rmsnorm, every variant', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.rmsnorm) {
      for (const rows of LENGTHS) {
        for (const d of [4, 132]) {
          expectPassed(await check(page, 'rmsnorm', { rows, d, eps: 1e-5, scale: 3, variant }));
        }
      }
    }
  });

  test('gemv for batch 1 to 8, every variant', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.gemv) {
      for (const M of [1, 2, 3, 8]) {
        for (const [N, K] of [
          [13, 20],
          [67, 132],
          [509, 260],
        ]) {
          expectPassed(await check(page, 'gemv', { M, N, K, variant }));
        }
      }
    }
  });

  test('kv-write scatters into shuffled pages exactly where kv/layout.ts puts them', async ({ page }) => {
    for (const layout of layouts(512)) {
      for (const [rows, start] of [
        [1, 0],
        [37, 13],
        [100, 200],
      ]) {
        expectPassed(await check(page, 'kvWrite', { rows, start, kvHeads: 3, headDim: 8, ...layout }));
      }
    }
  });

  test('paged kv-write and causal prefill attention, every variant', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.attentionPrefill) {
      for (const L of LENGTHS) {
        for (const layout of layouts(512)) {
          const start = L % 2 === 0 ? 0 : 9;
          const shape = { L, start, heads: 4, kvHeads: 2, headDim: 16, ...layout, variant };
          expectPassed(await check(page, 'attentionPrefill', shape));
        }
      }
    }
  });

  test('batched paged decode attention with different lengths, every variant', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.attentionDecode) {
      for (const layout of layouts(257)) {
        for (const lengths of [[1], [7, 33, 100, 257], [65, 2, 130]]) {
          const shape = { lengths, heads: 6, kvHeads: 2, headDim: 32, ...layout, variant };
          expectPassed(await check(page, 'attentionDecode', shape));
        }
      }
    }
  });
});
