import { VARIANT_CANDIDATES, variantName } from '../src/kernels/variants.ts';
import { expect, test } from './harness/client.ts';
import { check, expectPassed, GQA, LONG_TEST_TIMEOUT_MS, layouts } from './kernel-helpers.ts';

/**
 * The kernels at long contexts (past a thousand tokens, and split-K to 4001): run natively only.
 * The shaders and the adapter (SwiftShader) are the same in both runtimes, and every family, layout
 * and GQA ratio is checked in the browser's harness page at the short shapes of kernels.spec.ts;
 * on a CPU-backed adapter each long context costs seconds, twice over if both runtimes ran it.
 */

/** Head dims and contexts of real models, past a thousand tokens, none a multiple of a page. */
const LONG = [
  { headDim: 64, context: 1100 },
  { headDim: 128, context: 2100 },
  { headDim: 128, context: 1100 },
  { headDim: 64, context: 2100 },
] as const;

/** Capacity of the contiguous slot in the long-context tests: room past the longest context. */
const LONG_SLOT = 2304;

/** Tokens the split-K tests' block tables (and contiguous slots) hold: past their longest context, 4001. */
const SPLIT_CAPACITY = 4352;

const LONG_PREFILL_QUERIES = 31;

test.describe('kernels against the CPU reference at long contexts', () => {
  // Every variant at every layout and GQA ratio; the (head dim, context) pair turns with the layout,
  // so each variant also meets every GQA ratio at every head dim and context.
  for (const variant of VARIANT_CANDIDATES.attentionPrefill) {
    test(`long-context prefill attention (${variantName(variant)}): the last ${LONG_PREFILL_QUERIES} queries over 1100 and 2100 tokens`, async ({
      harness,
    }) => {
      test.setTimeout(LONG_TEST_TIMEOUT_MS);
      for (const [g, gqa] of GQA.entries()) {
        for (const [l, layout] of layouts(LONG_SLOT).entries()) {
          const { headDim, context } = LONG[(g + l) % LONG.length];
          const L = LONG_PREFILL_QUERIES;
          const shape = { L, start: context - L, ...gqa, headDim, ...layout, variant };
          expectPassed(await check(harness, 'attentionPrefill', shape));
        }
      }
    });
  }

  test('split-K decode attention at contexts 1 to 4001, alone and in one mixed batch, in tables wider than every context', async ({
    harness,
  }) => {
    test.setTimeout(LONG_TEST_TIMEOUT_MS);
    // Depths 0, 1, 255, 1000 and 4000 (contexts one more): a single token, slice and page
    // boundaries (256 = 8 slices of 32 = 16 pages of 16) and a slice of one token past them (4001).
    // The tables hold SPLIT_CAPACITY tokens, as a model's replayed plan does, so the grid covers
    // slices past every sequence's length, which must be skipped by the slices and by the merge.
    const splits = VARIANT_CANDIDATES.attentionDecode.filter((v) => v.family === 'split');
    expect(splits.length).toBeGreaterThan(0);
    const contexts = [1, 2, 256, 1001, 4001];
    // Alone: the shortest and the longest (one slice, and a slice of one token past 4000); every
    // context runs in the mixed batch, whose grid holds each one's slices beside the others'.
    const alone = [1, 4001];
    for (const variant of splits) {
      for (const [gqa, headDim] of [
        [GQA[0], 64],
        [GQA[1], 64],
        [GQA[2], 128],
      ] as const) {
        for (const layout of [
          { paged: true, pageSize: 16 },
          { paged: false, pageSize: SPLIT_CAPACITY },
        ]) {
          const spec = { ...gqa, headDim, ...layout, capacity: SPLIT_CAPACITY, variant };
          for (const n of alone) {
            expectPassed(await check(harness, 'attentionDecode', { ...spec, lengths: [n] }));
          }
          expectPassed(
            await check(harness, 'attentionDecode', { ...spec, lengths: [...contexts].reverse() }),
          );
        }
      }
    }
  });

  test('long-context decode attention: contexts 2100 and 1100 in one batch, every variant, layout, GQA ratio and head dim', async ({
    harness,
  }) => {
    test.setTimeout(LONG_TEST_TIMEOUT_MS);
    // The head dim turns with the layout, as in the prefill test: each GQA ratio meets both head
    // dims, and each head dim every layout.
    for (const variant of VARIANT_CANDIDATES.attentionDecode) {
      for (const [g, gqa] of GQA.entries()) {
        for (const [l, layout] of layouts(LONG_SLOT).entries()) {
          const headDim = (g + l) % 2 === 0 ? 64 : 128;
          const shape = { lengths: [2100, 1100], ...gqa, headDim, ...layout, variant };
          expectPassed(await check(harness, 'attentionDecode', shape));
        }
      }
    }
  });
});
