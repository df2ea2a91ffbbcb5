/**
 * The model end to end under one set of kernel families (model.spec.ts runs the autotuned sets,
 * model-defaults.spec.ts the GPU-oriented defaults; both natively).
 */
import { DEFAULT_VARIANTS, graphFuses, type KernelVariants } from '../src/kernels/variants.ts';
import { expect, type Harness, test } from './harness/client.ts';

/** A prompt of n token ids below ci-tiny's vocab of 509, deterministic. */
export const prompt = (n: number, seed = 1) =>
  Array.from({ length: n }, (_, i) => (i * 131 + seed * 17 + 3) % 509);

/**
 * The kernel families the model tests run with: the GPU-oriented defaults, and the families the
 * autotuner actually picks on this adapter (searched once per runtime, in its first test), both
 * on the fused graph (src/kernels/fuse.ts); and the autotuned families on the unfused graph, the
 * fused one's reference.
 */
export const FAMILY_SETS = ['default', 'autotuned', 'autotuned, unfused'] as const;
const autotunedBy = new Map<Harness['runtime'], KernelVariants>();

export async function useFamilies(harness: Harness, name: (typeof FAMILY_SETS)[number]) {
  let families = name === 'default' ? DEFAULT_VARIANTS : autotunedBy.get(harness.runtime);
  if (!families) {
    families = await harness.call('model', 'autotuned');
    autotunedBy.set(harness.runtime, families);
  }
  const unfused = name === 'autotuned, unfused';
  const fused = await harness.call('model', 'useVariants', families, !unfused);
  // The defaults take the fusions; the autotuned families do where every one of them does.
  expect(fused, name).toBe(!unfused && graphFuses(families, false));
}

export function modelEndToEnd(familyName: (typeof FAMILY_SETS)[number]) {
  test.describe(`model end to end on the GPU (${familyName} kernels)`, () => {
    test.beforeEach(async ({ harness }) => {
      test.setTimeout(180_000);
      await useFamilies(harness, familyName);
    });

    test('prefill logits match the CPU reference (max rel err ≤ 1e-3), tied and untied', async ({
      harness,
    }) => {
      for (const untied of [false, true]) {
        for (const L of [1, 7, 33, 100]) {
          const r = await harness.call('model', 'prefillVsReference', prompt(L), untied);
          expect(r.maxRelErr, `L=${L} untied=${untied}: ${JSON.stringify(r)}`).toBeLessThanOrEqual(1e-3);
          expect(r.hasLmHead).toBe(untied);
          // The dispatches the engine recorded are the ones the cost model counts, role by role.
          expect(r.recorded).toEqual(r.assumed);
        }
      }
    });

    test('decode through the KV cache equals full recompute for 32 greedy steps', async ({ harness }) => {
      const r = await harness.call('model', 'decodeVsRecompute', prompt(11), 32);
      expect(r.tokenMismatches, JSON.stringify(r)).toEqual([]);
      expect(r.failedSteps, JSON.stringify(r)).toEqual([]);
      expect(new Set(r.tokens).size, 'generation should not collapse to one token').toBeGreaterThan(1);
    });

    // The unfused graph, the fused one's reference, is checked against the CPU forward and
    // recomputation; the paths below do not depend on the graph and run on the fused one.
    if (familyName === 'autotuned, unfused') return;

    // The default families (slow on SwiftShader: a minute here) run the batch below, whose rows
    // share every GEMV and attention dispatch; paged against contiguous and shared prefixes check
    // the cache's bookkeeping, which no family changes (every attention family reads every page
    // size against the CPU reference in kernels.spec.ts), and run with the autotuned families.
    if (familyName !== 'default') {
      test('paged caches (8/16/32) give identical results to the contiguous cache across page boundaries', async ({
        harness,
      }) => {
        // 21 prompt tokens + 12 generated = 33: past a page boundary for every page size, 32 included.
        const r = await harness.call('model', 'pagedVsContiguous', prompt(21), 12);
        expect(r.map((x) => x.pageSize)).toEqual([8, 16, 32]);
        for (const x of r) {
          expect(x.identicalTokens, `page ${x.pageSize}`).toBe(true);
          expect(x.identicalLogits, `page ${x.pageSize}`).toBe(true);
        }
      });

      test('two sequences sharing prefix pages, interleaved step by step, equal the same run apart', async ({
        harness,
      }) => {
        const r = await harness.call('model', 'sharedPrefix', prompt(13), prompt(5, 2), prompt(4, 3), 6, 8);
        // 13 tokens in pages of 8: two pages, both shared after the fork; the partly filled one is copied on write.
        expect(r.sharedPagesAfterFork).toBe(2);
        expect(r.stillShared).toBe(1);
        expect(r.pagesAfterDivergence).toBeGreaterThan(r.pagesAfterFork);
        expect(r.identicalA).toBe(true);
        expect(r.identicalB).toBe(true);
      });
    }

    // 5 rows: one partial GEMV chunk; 13 rows: two chunks (8 + 5) in one command buffer. Every
    // GEMV row count from 1 to 8 is checked kernel by kernel (kernels.spec, "gemv for batch 1 to 8").
    const batches = familyName === 'default' ? [13] : [5, 13];
    test(`a batch of ${batches.join(' and of ')} sequences of different lengths runs like each sequence alone`, async ({
      harness,
    }) => {
      for (const B of batches) {
        const prompts = Array.from({ length: B }, (_, i) => prompt(1 + ((i * 37) % 41), i + 1));
        // Two decode steps with the default families (each step of 13 rows, alone and batched, costs
        // seconds on SwiftShader), five with the autotuned ones.
        const r = await harness.call('model', 'batchVsAlone', prompts, familyName === 'default' ? 2 : 5);
        expect(r.identical, `B=${B}`).toEqual(Array(B).fill(true));
      }
    });
  });
}
