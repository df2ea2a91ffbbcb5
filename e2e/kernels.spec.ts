import { matmulTestSet, packedVariantSupported, VARIANT_CANDIDATES } from '../src/kernels/variants.ts';
import type { PackedFormat } from '../src/weight-format.ts';
import { expect, test } from './harness/client.ts';
import { check, expectPassed, LONG_TEST_TIMEOUT_MS, layouts } from './kernel-helpers.ts';

const LENGTHS = [1, 7, 33, 100, 257];

/**
 * Queries of a long prefill that run and are checked: the last ones, after context − 31 cached
 * tokens. Fewer than one workgroup of queries, because on SwiftShader every query of a long context
 * costs seconds; the short prefill tests cover queries spread over several workgroups.
 */
/** The KV element types besides f32, each read through the `kv` slot of every attention family. */
const KV_TYPES = ['f16', 'int8'] as const;

/** KV type and window pairs the attention families are checked at (f32 without a window is everywhere else). */
const KV_CELLS = [
  { kvDtype: 'f16', window: undefined },
  { kvDtype: 'int8', window: undefined },
  { kvDtype: 'f32', window: 24 },
  { kvDtype: 'int8', window: 24 },
] as const;

/** The packed weight formats, each with its own decode in the shared kernels. */
const PACKED: readonly PackedFormat[] = ['f16', 'int8', 'int4'];

/**
 * Packed shapes: the odd one (K = 136 ends in a part group of 8 weights, int4's K a multiple of 8),
 * and N = 509, no multiple of any tile or lane count, with a part group of one x vec4 (K = 260)
 * where the format allows it and of two for int4 (K = 264).
 */
const packedShapes = (format: PackedFormat) =>
  [
    { N: 67, K: 136 },
    { N: 509, K: format === 'int4' ? 264 : 260 },
  ] as const;

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

  // The KV element types and the sliding window through every attention family and layout. The
  // window's tables point the pages wholly before it at a poison page (checks/attention.ts), so a
  // family that read a page the window let go of would fail. f32 without a window is above.
  test('KV types f16 and int8, and a sliding window: kv-write, then every prefill and decode family at every layout', async ({
    harness,
  }) => {
    test.setTimeout(LONG_TEST_TIMEOUT_MS);
    for (const kvDtype of KV_TYPES) {
      for (const layout of layouts(512)) {
        expectPassed(
          await check(harness, 'kvWrite', {
            rows: 37,
            start: 13,
            kvHeads: 3,
            headDim: 8,
            ...layout,
            kvDtype,
          }),
        );
      }
    }
    for (const { kvDtype, window } of KV_CELLS) {
      for (const variant of VARIANT_CANDIDATES.attentionPrefill) {
        for (const layout of layouts(128)) {
          // 41 queries after 60 cached tokens: the window of 24 starts inside the cached part.
          const shape = { L: 41, start: 60, heads: 6, kvHeads: 2, headDim: 32, ...layout, variant };
          expectPassed(await check(harness, 'attentionPrefill', { ...shape, kvDtype, window }));
        }
      }
      for (const variant of VARIANT_CANDIDATES.attentionDecode) {
        for (const layout of layouts(257)) {
          const shape = { lengths: [1, 7, 33, 100, 257], heads: 6, kvHeads: 2, headDim: 32, ...layout };
          expectPassed(await check(harness, 'attentionDecode', { ...shape, variant, kvDtype, window }));
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

  test('packed GEMV (f16, int8, int4), every variant, batch 1 and 8, part groups, batched rows bit-identical to rows alone', async ({
    harness,
  }) => {
    const features = { hasF16: (await harness.call('kernels', 'features')).includes('shader-f16') };
    for (const format of PACKED) {
      for (const variant of VARIANT_CANDIDATES.packedGemv.filter((v) =>
        packedVariantSupported(v, format, features),
      )) {
        for (const M of [1, 8]) {
          for (const shape of packedShapes(format)) {
            expectPassed(await check(harness, 'packedGemv', { format, M, ...shape, variant }));
          }
        }
        const same = await harness.call('kernels', 'packedBatchInvariance', {
          format,
          variant,
          M: 8,
          N: 67,
          K: 136,
        });
        expect(same.differing, `${format} ${JSON.stringify(variant)}: ${JSON.stringify(same.first)}`).toBe(0);
        expect(same.rows).toBe(8);
      }
    }
  });

  test('packed matmul (f16, int8, int4), every variant; the f16 kernel without shader-f16 and int4 at K = 36 refused', async ({
    harness,
  }) => {
    const hasF16 = (await harness.call('kernels', 'features')).includes('shader-f16');
    for (const format of PACKED) {
      for (const variant of VARIANT_CANDIDATES.packedMatmul.filter((v) =>
        packedVariantSupported(v, format, { hasF16 }),
      )) {
        expectPassed(await check(harness, 'packedMatmul', { format, M: 33, N: 67, K: 136, variant }));
      }
    }
    // The shader-f16 reading runs where the device has the feature, and is refused by name elsewhere.
    const f16Native = { family: 'cols', cols: 8, wg: 16, shaderF16: true } as const;
    const native = check(harness, 'packedGemv', { format: 'f16', M: 1, N: 67, K: 136, variant: f16Native });
    if (hasF16) expectPassed(await native);
    else await expect(native).rejects.toThrow(/needs the "shader-f16" feature this adapter lacks/);
    // int4 packs eight weights per u32: K = 36 is refused before anything runs, naming the shape.
    await expect(check(harness, 'packedGemv', { format: 'int4', M: 1, N: 67, K: 36 })).rejects.toThrow(
      /inner width 36 is not a multiple of 8/,
    );
    await expect(check(harness, 'packedMatmul', { format: 'int4', M: 5, N: 67, K: 36 })).rejects.toThrow(
      /inner width 36 is not a multiple of 8/,
    );
  });
});
