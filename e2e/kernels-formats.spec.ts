import { packedVariantSupported, VARIANT_CANDIDATES } from '../src/kernels/variants.ts';
import type { PackedFormat } from '../src/weight-format.ts';
import { expect, test } from './harness/client.ts';
import { check, expectPassed, LONG_TEST_TIMEOUT_MS, layouts } from './kernel-helpers.ts';

/**
 * The kernels' other number formats against the CPU reference: the KV cache's f16 and int8 (and a
 * sliding window) in every attention family, and the packed weight formats in every GEMV and matmul
 * family. Natively only, through the Node harness: the shaders and the adapter are the page's, and
 * on SwiftShader these kernel-by-kernel sweeps took 93 s in the page against 52 s natively.
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

test.describe('kernels in their other number formats against the CPU reference', () => {
  // The KV element types and the sliding window through every attention family and layout. The
  // window's tables point the pages wholly before it at a poison page (checks/attention.ts), so a
  // family that read a page the window let go of would fail. f32 without a window is above.
  test('KV types f16 and int8, and a sliding window: kv-write, then every prefill and decode family, the layouts in a Latin square', async ({
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
    // Every family with every KV cell, each pair at one layout, the layout turning with both
    // (a Latin square): every family meets every layout, and so does every KV cell. Each layout is
    // an indexing of the same shader, and f32 runs every family at every layout (kernels.spec);
    // the full cube took 23 s more of SwiftShader for no pair this leaves out.
    for (const [c, { kvDtype, window }] of KV_CELLS.entries()) {
      for (const [f, variant] of VARIANT_CANDIDATES.attentionPrefill.entries()) {
        // 41 queries after 60 cached tokens: the window of 24 starts inside the cached part.
        const layout = layouts(128)[(c + f) % 4];
        const shape = { L: 41, start: 60, heads: 6, kvHeads: 2, headDim: 32, ...layout, variant };
        expectPassed(await check(harness, 'attentionPrefill', { ...shape, kvDtype, window }));
      }
      for (const [f, variant] of VARIANT_CANDIDATES.attentionDecode.entries()) {
        const layout = layouts(257)[(c + f) % 4];
        const shape = { lengths: [1, 7, 33, 100, 257], heads: 6, kvHeads: 2, headDim: 32, ...layout };
        expectPassed(await check(harness, 'attentionDecode', { ...shape, variant, kvDtype, window }));
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
