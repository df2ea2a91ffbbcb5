import type { LinearFusion } from '../src/kernels/fuse.ts';
import { FUSABLE_FAMILIES, familyFuses, matmulTestSet, VARIANT_CANDIDATES } from '../src/kernels/variants.ts';
import type { PackedFormat } from '../src/weight-format.ts';
import { expect, test } from './harness/client.ts';
import { check, expectPassed } from './kernel-helpers.ts';

/** The fused kernels of src/kernels/fuse.ts against the float64 reference of the ops they replace. */

/** The three fusions the fused graph runs: norm → product, product → residual add, norm → gate/up → SwiGLU. */
const FUSIONS: readonly LinearFusion[] = [
  { norm: true, epilogue: 'store' },
  { norm: false, epilogue: 'add' },
  { norm: true, epilogue: 'swiglu' },
];

/** N even (SwiGLU pairs) but no multiple of 8, so the last column quad is a part quad; K no tile multiple. */
const SHAPE = { N: 70, K: 132 } as const;
const PACKED_K = 136; // a part group of 8 weights (and int4's K a multiple of 8)
const PACKED: readonly PackedFormat[] = ['f16', 'int8', 'int4'];

const fusable = <V extends { family: string }>(candidates: readonly V[], families: readonly string[]) =>
  candidates.filter((v) => families.includes(v.family) && !('shaderF16' in v));

test.describe('fused kernels against the unfused references', () => {
  test('matmul: every fusable family (the register tile at every tm, tn and K step), each fusion', async ({
    harness,
  }) => {
    // The tuning space's test cover, less its workgroup shapes (they do not touch the fusions) and
    // the tiles the fusions refuse (tn not a whole number of column quads).
    const seen = new Set<string>();
    const cover = matmulTestSet().filter((v) => {
      const key = v.family === 'tile' ? `${v.tm} ${v.tn} ${v.ku}` : 'tiled';
      if (!familyFuses('matmul', v) || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    expect(cover.length).toBeGreaterThan(3);
    for (const variant of cover)
      for (const fusion of FUSIONS)
        expectPassed(
          await check(harness, 'fusedLinear', { linear: 'matmul', variant, fusion, M: 37, ...SHAPE }),
        );
  });

  test('GEMV at batch 1 and 3: every fusable family, each fusion', async ({ harness }) => {
    for (const variant of fusable(VARIANT_CANDIDATES.gemv, FUSABLE_FAMILIES.gemv))
      for (const M of [1, 3])
        for (const fusion of FUSIONS)
          expectPassed(await check(harness, 'fusedLinear', { linear: 'gemv', variant, fusion, M, ...SHAPE }));
  });

  test('packed GEMV and matmul (f16, int8, int4): every fusable family, each fusion', async ({ harness }) => {
    for (const format of PACKED) {
      for (const variant of fusable(VARIANT_CANDIDATES.packedGemv, FUSABLE_FAMILIES.packedGemv))
        for (const fusion of FUSIONS)
          expectPassed(
            await check(harness, 'fusedLinear', {
              linear: 'packedGemv',
              format,
              variant,
              fusion,
              M: 2,
              N: SHAPE.N,
              K: PACKED_K,
            }),
          );
      const [matmulVariant] = VARIANT_CANDIDATES.packedMatmul;
      for (const fusion of FUSIONS)
        expectPassed(
          await check(harness, 'fusedLinear', {
            linear: 'packedMatmul',
            format,
            variant: matmulVariant,
            fusion,
            M: 11,
            N: SHAPE.N,
            K: PACKED_K,
          }),
        );
    }
  });

  test('a family that cannot fuse refuses to, and the norm needs its gamma', async ({ harness }) => {
    const r = await check(harness, 'fusedLinear', {
      linear: 'gemv',
      variant: { family: 'rowwise', wg: 64 },
      fusion: { norm: false, epilogue: 'add' },
      M: 1,
      ...SHAPE,
    }).catch((e: Error) => e);
    expect(String(r)).toContain('cannot fuse');
  });

  test('RoPE + KV write: q rotated, k rotated and v copied into shuffled pages (GQA, odd row counts)', async ({
    harness,
  }) => {
    for (const shape of [
      { rows: 1, start: 37, heads: 4, kvHeads: 2, headDim: 32, pageSize: 16 },
      { rows: 19, start: 5, heads: 9, kvHeads: 3, headDim: 64, pageSize: 8 },
      { rows: 7, start: 0, heads: 4, kvHeads: 4, headDim: 128, pageSize: 32 },
    ])
      for (const kvDtype of ['f32', 'f16', 'int8'] as const)
        expectPassed(await check(harness, 'ropeKvWrite', { ...shape, kvDtype }));
  });
});
