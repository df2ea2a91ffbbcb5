import { matmulTestSet, VARIANT_CANDIDATES } from '../src/kernels/variants.ts';
import { expect, test } from './harness/client.ts';
import { check, expectPassed, layouts } from './kernel-helpers.ts';

const LENGTHS = [1, 7, 33, 100, 257];

test.describe('kernels against the CPU reference', () => {
  test('embedding, rmsnorm, residual add, swiglu, argmax', async ({ harness }) => {
    for (const rows of LENGTHS) {
      expectPassed(await check(harness, 'embedding', { rows, d: 20, vocab: 37 }));
      expectPassed(await check(harness, 'rmsnorm', { rows, d: 132, eps: 1e-5, scale: 3 }));
      expectPassed(await check(harness, 'residualAdd', { n: rows * 12 }));
      expectPassed(await check(harness, 'swiglu', { n: rows * 44 }));
      expectPassed(await check(harness, 'argmax', { rows, n: 1001 }));
    }
  });

  test('rope', async ({ harness }) => {
    for (const rows of LENGTHS) {
      for (const headDim of [8, 64]) {
        expectPassed(await check(harness, 'rope', { rows, heads: 3, headDim, start: 5, theta: 10000 }));
      }
    }
  });

  test('matmul, a cover of the tuning space (every value of every parameter), on non-tile-multiple shapes', async ({
    harness,
  }) => {
    // The space's product is dozens of pipelines; every point is validated on an odd shape by the
    // autotuner before it is timed, and this checks each parameter value at the shapes below.
    for (const variant of matmulTestSet()) {
      for (const M of LENGTHS) {
        for (const [N, K] of [
          [13, 20],
          [67, 132],
          [509, 4],
          [1, 260],
        ]) {
          expectPassed(await check(harness, 'matmul', { M, N, K, variant }));
        }
      }
    }
  });

  test('rmsnorm, every variant', async ({ harness }) => {
    for (const variant of VARIANT_CANDIDATES.rmsnorm) {
      for (const rows of LENGTHS) {
        for (const d of [4, 132]) {
          expectPassed(await check(harness, 'rmsnorm', { rows, d, eps: 1e-5, scale: 3, variant }));
        }
      }
    }
  });

  test('gemv for batch 1 to 8, every variant', async ({ harness }) => {
    for (const variant of VARIANT_CANDIDATES.gemv) {
      for (const M of [1, 2, 3, 8]) {
        for (const [N, K] of [
          [13, 20],
          [67, 132],
          [509, 260],
        ]) {
          expectPassed(await check(harness, 'gemv', { M, N, K, variant }));
        }
      }
    }
  });

  test('kv-write scatters into shuffled pages exactly where kv/layout.ts puts them', async ({ harness }) => {
    for (const layout of layouts(512)) {
      for (const [rows, start] of [
        [1, 0],
        [37, 13],
        [100, 200],
      ]) {
        expectPassed(await check(harness, 'kvWrite', { rows, start, kvHeads: 3, headDim: 8, ...layout }));
      }
    }
  });

  test('paged kv-write and causal prefill attention, every variant', async ({ harness }) => {
    for (const variant of VARIANT_CANDIDATES.attentionPrefill) {
      for (const L of LENGTHS) {
        for (const layout of layouts(512)) {
          const start = L % 2 === 0 ? 0 : 9;
          const shape = { L, start, heads: 4, kvHeads: 2, headDim: 16, ...layout, variant };
          expectPassed(await check(harness, 'attentionPrefill', shape));
        }
      }
    }
  });

  test('batched paged decode attention with different lengths, every variant', async ({ harness }) => {
    for (const variant of VARIANT_CANDIDATES.attentionDecode) {
      for (const layout of layouts(257)) {
        for (const lengths of [[1], [7, 33, 100, 257], [65, 2, 130]]) {
          const shape = { lengths, heads: 6, kvHeads: 2, headDim: 32, ...layout, variant };
          expectPassed(await check(harness, 'attentionDecode', shape));
        }
      }
    }
  });

  test('rmsnorm: eps matters where the mean square is comparable to it, every variant', async ({
    harness,
  }) => {
    for (const variant of VARIANT_CANDIDATES.rmsnorm) {
      for (const eps of [1e-5, 1e-6]) {
        // Inputs uniform in ±sqrt(3·eps) have a mean square near eps: dropping eps scales the
        // output by about √2, far outside the tolerance.
        const spec = { rows: 33, d: 132, eps, scale: Math.sqrt(3 * eps), variant };
        expectPassed(await check(harness, 'rmsnorm', spec));
        const withoutEps = await check(harness, 'rmsnorm', { ...spec, referenceEps: 0 });
        expect(
          withoutEps.passed,
          `rmsnorm ${withoutEps.variant} eps ${eps}: the reference without eps matches`,
        ).toBe(false);
        expect(withoutEps.maxRelErr).toBeGreaterThan(0.1);
      }
    }
  });

  test('rope against cos/sin from the closed form at every frequency, positions 0 to 4095', async ({
    harness,
  }) => {
    for (const headDim of [64, 128]) {
      for (const theta of [10000, 500000]) {
        expectPassed(await check(harness, 'rope', { rows: 4096, heads: 2, headDim, start: 0, theta }));
      }
    }
  });
});
