import { expect, type Page, test } from '@playwright/test';
import { VARIANT_CANDIDATES } from '../src/kernels/variants.ts';

/** Opens the harness and waits for a real adapter; a missing adapter fails the suite, it is never skipped. */
async function openHarness(page: Page) {
  await page.goto('/e2e/harness/index.html');
  const adapter = await page.evaluate(async () => (await window.harness).adapter);
  expect(adapter.vendor.length + adapter.architecture.length).toBeGreaterThan(0);
  return adapter;
}

type Check = { kernel: string; shape: string; passed: boolean; maxAbsErr: number; mismatches: unknown[] };

function expectPassed(r: Check) {
  expect(
    r.passed,
    `${r.kernel} ${r.shape}: maxAbsErr ${r.maxAbsErr}, first mismatches ${JSON.stringify(r.mismatches)}`,
  ).toBe(true);
}

const LENGTHS = [1, 7, 33, 100, 257];

test.describe('kernels against the CPU reference', () => {
  test.beforeEach(async ({ page }) => {
    await openHarness(page);
  });

  test('embedding, rmsnorm, residual add, swiglu, argmax', async ({ page }) => {
    for (const rows of LENGTHS) {
      const results = await page.evaluate(async (rows) => {
        const k = (await window.harness).kernels;
        return [
          await k.embedding({ rows, d: 20, vocab: 37 }),
          await k.rmsnorm({ rows, d: 132 }),
          await k.residualAdd({ n: rows * 12 }),
          await k.swiglu({ n: rows * 44 }),
          await k.argmax({ rows, n: 1001 }),
        ];
      }, rows);
      results.forEach(expectPassed);
    }
  });

  test('rope', async ({ page }) => {
    for (const rows of LENGTHS) {
      for (const headDim of [8, 64]) {
        const r = await page.evaluate(async (s) => (await window.harness).kernels.rope(s), {
          rows,
          heads: 3,
          headDim,
          start: 5,
          maxSeqLen: 512,
        });
        expectPassed(r);
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
          const shape = { M, N, K, variant };
          expectPassed(await page.evaluate(async (s) => (await window.harness).kernels.matmul(s), shape));
        }
      }
    }
  });

  test('rmsnorm, every variant', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.rmsnorm) {
      for (const rows of LENGTHS) {
        for (const d of [4, 132]) {
          const shape = { rows, d, variant };
          expectPassed(await page.evaluate(async (s) => (await window.harness).kernels.rmsnorm(s), shape));
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
          const shape = { M, N, K, variant };
          expectPassed(await page.evaluate(async (s) => (await window.harness).kernels.gemv(s), shape));
        }
      }
    }
  });

  test('paged kv-write and causal prefill attention, every variant', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.attentionPrefill)
      for (const L of LENGTHS) {
        for (const [pageSize, paged] of [
          [8, true],
          [16, true],
          [32, true],
          [0, false],
        ] as const) {
          const shape = {
            L,
            start: L % 2 === 0 ? 0 : 9,
            heads: 4,
            kvHeads: 2,
            headDim: 16,
            pageSize,
            paged,
            variant,
          };
          expectPassed(
            await page.evaluate(async (s) => (await window.harness).kernels.attentionPrefill(s), shape),
          );
        }
      }
  });

  test('batched paged decode attention with different lengths, every variant', async ({ page }) => {
    for (const variant of VARIANT_CANDIDATES.attentionDecode)
      for (const [pageSize, paged] of [
        [8, true],
        [16, true],
        [32, true],
        [0, false],
      ] as const) {
        for (const lengths of [[1], [7, 33, 100, 257], [65, 2, 130]]) {
          const shape = { lengths, heads: 6, kvHeads: 2, headDim: 32, pageSize, paged, variant };
          expectPassed(
            await page.evaluate(async (s) => (await window.harness).kernels.attentionDecode(s), shape),
          );
        }
      }
  });
});
