import type { LinearFusion } from '../src/kernels/fuse.ts';
import { DEFAULT_VARIANTS, defaultVariants, VARIANT_CANDIDATES } from '../src/kernels/variants.ts';
import { QUANT_FORMATS, type QuantFormat } from '../src/weight-format.ts';
import { expect, test } from './harness/client.ts';
import { check, expectPassed } from './kernel-helpers.ts';

/**
 * Each GGUF block type's snippet (shaders/lib/weights_q*.wgsl) in every kernel that reads it, on
 * random blocks (every bit pattern of quants, scales and masks; sane f16 scales), against the
 * float64 product with ggml's dequantization of the same blocks (src/quant, checked bit for bit
 * against ggml's C and gguf-py). Natively only: the same shaders on the same adapter as the browser.
 * The packed kernels' shared machinery (tiles, lanes, part groups, every variant) is checked on the
 * project's formats in kernels.spec.ts; here each type's decode, through both GEMV families and the
 * matmul, and the fusions on a type with mins (Q4_K) and one of 16-weight groups (Q6_K).
 */

/** N = 67: no multiple of a tile or of the lanes; K = 512: two K-quant blocks, sixteen legacy ones. */
const SHAPE = { N: 67, K: 512 } as const;

const FUSIONS: readonly LinearFusion[] = [
  { norm: true, epilogue: 'store' },
  { norm: false, epilogue: 'add' },
  { norm: true, epilogue: 'swiglu' },
];

test('every GGUF block type: the reduce GEMV, the cols GEMV at batch 1 and 5, and the matmul; batched rows bit-identical to rows alone', async ({
  harness,
}) => {
  test.setTimeout(240_000);
  const reduce = DEFAULT_VARIANTS.packedGemv;
  const cols = defaultVariants(true).packedGemv;
  const [matmul] = VARIANT_CANDIDATES.packedMatmul;
  for (const format of QUANT_FORMATS) {
    // The block's decode in each family; the batch rows in one of them (how a family lays out
    // batch rows is the same for every format, and every family's is checked on the project's
    // formats in kernels-formats.spec.ts).
    expectPassed(await check(harness, 'packedGemv', { format, M: 1, ...SHAPE, variant: reduce }));
    for (const M of [1, 5])
      expectPassed(await check(harness, 'packedGemv', { format, M, ...SHAPE, variant: cols }));
    const same = await harness.call('kernels', 'packedBatchInvariance', {
      format,
      variant: cols,
      M: 5,
      ...SHAPE,
    });
    expect(same.differing, `${format} ${JSON.stringify(cols)}: ${JSON.stringify(same.first)}`).toBe(0);
    expectPassed(await check(harness, 'packedMatmul', { format, M: 33, ...SHAPE, variant: matmul }));
  }
});

test("the packed embedding gather: every GGUF block type and the project's packed formats, ids clamped", async ({
  harness,
}) => {
  for (const format of [...QUANT_FORMATS, 'f16', 'int8', 'int4'] as const)
    expectPassed(await check(harness, 'packedEmbedding', { format, rows: 9, d: 512, vocab: 37 }));
});

test('GGUF types in the fused kernels (Q4_K, Q6_K) and a row that is no whole number of blocks refused', async ({
  harness,
}) => {
  const cols = defaultVariants(true).packedGemv;
  const [matmul] = VARIANT_CANDIDATES.packedMatmul;
  const fused: QuantFormat[] = ['q4_k', 'q6_k'];
  for (const format of fused)
    for (const fusion of FUSIONS) {
      // SwiGLU pairs gate/up columns: an even N.
      const shape = { N: 70, K: SHAPE.K };
      expectPassed(
        await check(harness, 'fusedLinear', {
          linear: 'packedGemv',
          format,
          variant: cols,
          fusion,
          M: 2,
          ...shape,
        }),
      );
      expectPassed(
        await check(harness, 'fusedLinear', {
          linear: 'packedMatmul',
          format,
          variant: matmul,
          fusion,
          M: 11,
          ...shape,
        }),
      );
    }
  await expect(check(harness, 'packedGemv', { format: 'q4_k', M: 1, N: 67, K: 288 })).rejects.toThrow(
    /rows of 288 weights are not a whole number of Q4_K blocks \(256 weights each\)/,
  );
});

test("the architectures' q/k/v preparation: qwen2's bias and qwen3's head norm, in the fused RoPE + KV write and alone", async ({
  harness,
}) => {
  for (const prep of [
    { bias: true, norm: false },
    { bias: false, norm: true },
    { bias: true, norm: true },
  ]) {
    for (const kvDtype of ['f32', 'int8'] as const)
      expectPassed(
        await check(harness, 'ropeKvWrite', {
          rows: 7,
          start: 5,
          heads: 4,
          kvHeads: 2,
          headDim: 64,
          pageSize: 8,
          kvDtype,
          prep,
        }),
      );
    for (const normAt of [0, 1] as const)
      expectPassed(await check(harness, 'headPrep', { rows: 5, heads: 3, headDim: 64, prep, normAt }));
  }
});
