import { expect, test } from '@playwright/test';
import { DEFAULT_VARIANTS, type KernelVariants } from '../src/kernels/variants.ts';

/** A prompt of n token ids below ci-tiny's vocab of 509, deterministic. */
const prompt = (n: number, seed = 1) => Array.from({ length: n }, (_, i) => (i * 131 + seed * 17 + 3) % 509);

/** The GPU-oriented defaults and the barrier-free families the autotuner picks on CPU-backed adapters. */
const FAMILY_SETS = {
  default: DEFAULT_VARIANTS,
  'barrier-free': {
    matmul: { family: 'register', wgX: 8, wgY: 8 },
    gemv: { family: 'rowwise', wg: 64 },
    rmsnorm: { family: 'rowwise' },
    attentionPrefill: { family: 'direct4' },
    attentionDecode: { family: 'direct' },
  },
} as const satisfies Record<string, KernelVariants>;

for (const [familyName, variants] of Object.entries(FAMILY_SETS))
  test.describe(`model end to end on the GPU (${familyName} kernels)`, () => {
    test.beforeEach(async ({ page }) => {
      await page.goto('/e2e/harness/index.html');
      await page.evaluate(async (v) => {
        (await window.harness).model.variants = v;
      }, variants);
    });

    test('prefill logits match the CPU reference (max rel err ≤ 1e-3)', async ({ page }) => {
      for (const L of [1, 7, 33, 100]) {
        const r = await page.evaluate(
          async (t) => (await window.harness).model.prefillVsReference(t),
          prompt(L),
        );
        expect(r.maxRelErr, `L=${L}: ${JSON.stringify(r)}`).toBeLessThanOrEqual(1e-3);
      }
    });

    test('decode through the KV cache equals full recompute for 32 greedy steps', async ({ page }) => {
      const r = await page.evaluate(
        async (p) => (await window.harness).model.decodeVsRecompute(p, 32),
        prompt(11),
      );
      expect(r.tokenMismatches, JSON.stringify(r)).toEqual([]);
      expect(r.failedSteps, JSON.stringify(r)).toEqual([]);
      expect(new Set(r.tokens).size, 'generation should not collapse to one token').toBeGreaterThan(1);
    });

    test('paged caches (8/16/32) give identical results to the contiguous cache', async ({ page }) => {
      const r = await page.evaluate(
        async (p) => (await window.harness).model.pagedVsContiguous(p, 12),
        prompt(21),
      );
      expect(r.map((x) => x.pageSize)).toEqual([8, 16, 32]);
      for (const x of r) {
        expect(x.identicalTokens, `page ${x.pageSize}`).toBe(true);
        expect(x.identicalLogits, `page ${x.pageSize}`).toBe(true);
      }
    });

    test('two sequences sharing prefix pages equal the same sequences run apart', async ({ page }) => {
      const r = await page.evaluate(
        async ([p, a, b]) => (await window.harness).model.sharedPrefix(p, a, b, 6, 8),
        [prompt(13), prompt(5, 2), prompt(4, 3)],
      );
      // 13 tokens in pages of 8: two pages, both shared after the fork; the partly filled one is copied on write.
      expect(r.sharedPagesAfterFork).toBe(2);
      expect(r.stillShared).toBe(1);
      expect(r.pagesAfterDivergence).toBeGreaterThan(r.pagesAfterFork);
      expect(r.identicalA).toBe(true);
      expect(r.identicalB).toBe(true);
    });

    test('a batch of sequences with different lengths decodes like each alone', async ({ page }) => {
      const r = await page.evaluate(
        async (ps) => (await window.harness).model.batchVsAlone(ps, 5),
        [prompt(3), prompt(40, 2), prompt(17, 3), prompt(1, 4)],
      );
      expect(r.identical).toEqual([true, true, true, true]);
    });
  });
