import type { KernelContext } from '../kernels/kernel.ts';
import { isQuantFormat, type PackedFormat } from '../weight-format.ts';
import { attentionDecodeCase, attentionPrefillCase, kvWriteCase } from './attention.ts';
import type { KernelCase } from './case.ts';
import {
  argmaxCase,
  embeddingCase,
  residualAddCase,
  rmsNormCase,
  ropeCase,
  swigluCase,
} from './elementwise.ts';
import { fusedLinearCase, headPrepCase, ropeKvWriteCase } from './fused.ts';
import { gemvCase, matmulCase } from './linear.ts';
import { packedEmbeddingCase, packedGemvCase, packedMatmulCase } from './packed.ts';

/**
 * Every kernel case by name: what the browser tests run at test shapes, the kernel suite at the
 * model's shapes, and the autotuner at both. Each builder takes the kernel context and a plain,
 * serializable spec (the shape, the variant, and what the check covers).
 */
export const KERNEL_CASES = {
  embedding: embeddingCase,
  rmsnorm: rmsNormCase,
  rope: ropeCase,
  residualAdd: residualAddCase,
  swiglu: swigluCase,
  argmax: argmaxCase,
  matmul: matmulCase,
  gemv: gemvCase,
  packedMatmul: packedMatmulCase,
  packedGemv: packedGemvCase,
  kvWrite: kvWriteCase,
  attentionPrefill: attentionPrefillCase,
  attentionDecode: attentionDecodeCase,
  fusedLinear: fusedLinearCase,
  ropeKvWrite: ropeKvWriteCase,
  headPrep: headPrepCase,
  packedEmbedding: packedEmbeddingCase,
} as const;

export type CaseName = keyof typeof KERNEL_CASES;
export type CaseSpec<N extends CaseName> = Parameters<(typeof KERNEL_CASES)[N]>[1];

/** The case `name` at `spec`, for callers that pick the case by name (the browser-test harness). */
export function kernelCase<N extends CaseName>(ctx: KernelContext, name: N, spec: CaseSpec<N>): KernelCase {
  // TypeScript cannot tie KERNEL_CASES[N] to CaseSpec<N> for a generic N; the signature above does.
  const build = KERNEL_CASES[name] as (ctx: KernelContext, spec: CaseSpec<N>) => KernelCase;
  return build(ctx, spec);
}

/**
 * Small shapes that are no multiple of any tile or workgroup size, nor (with pages of 16) of the
 * page size, with every row checked: where a candidate kernel is validated before it is timed on
 * the model's shapes. Attention takes the model's head geometry, which its pipeline compiles in.
 */
export const ODD_SHAPES = {
  matmul: { M: 33, N: 67, K: 132 },
  /** At the decode batch M, which the rowwise family compiles in. */
  gemv: { N: 67, K: 132 },
  /**
   * Packed weights: K = 136 ends in a part group of 8 weights (int4 needs K a multiple of 8), which
   * for f16 leaves three of the last group's four word vectors past K.
   */
  packedMatmul: { M: 33, N: 67, K: 136 },
  /** At the decode batch M, which both packed GEMV families compile in. */
  packedGemv: { N: 67, K: 136 },
  /**
   * A GGUF block type's rows are whole blocks (of 256 for the K-quants): K = 512 is two of them
   * and sixteen of the legacy types' 32 (oddShapesFor picks it).
   */
  quantK: 512,
  rmsnorm: { rows: 33, d: 132 },
  /** 33 queries after 9 cached tokens: queries and pages both end part-full. */
  attentionPrefill: { L: 33, start: 9 },
  /** One length per sequence of the decode batch (up to 8). */
  attentionDecode: { lengths: [65, 2, 130, 33, 7, 257, 100, 1] },
} as const;

/** The odd packed shapes for `format`: K = 136 (a part group) where the format allows it, else whole blocks. */
export function packedOddShapes(format: PackedFormat) {
  const K = isQuantFormat(format) ? ODD_SHAPES.quantK : ODD_SHAPES.packedGemv.K;
  return { matmul: { ...ODD_SHAPES.packedMatmul, K }, gemv: { ...ODD_SHAPES.packedGemv, K } };
}
