import { attentionDecodeCase, attentionPrefillCase } from '../checks/attention.ts';
import type { KernelCase } from '../checks/case.ts';
import { embeddingCase, residualAddCase, rmsNormCase, ropeCase, swigluCase } from '../checks/elementwise.ts';
import { gemvCase, matmulCase } from '../checks/linear.ts';
import { packedGemvCase } from '../checks/packed.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import {
  type KernelVariants,
  packedVariantSupported,
  VARIANT_CANDIDATES,
  variantSupported,
} from '../kernels/variants.ts';
import { dims, type ModelConfig } from '../model/config.ts';
import { weightBytes } from '../quant/formats.ts';
import { BYTES } from '../weight-format.ts';
import {
  attentionCost,
  type Cost,
  embeddingCost,
  linearCost,
  residualCost,
  rmsNormCost,
  ropeCost,
  swigluCost,
} from './cost.ts';

/** The kernel suite's sweep: the presets' real shapes, at sizes a software adapter finishes in minutes. */
export const KERNEL_SUITE = {
  prefillLengths: [64, 256, 1024],
  gemvBatches: [1, 4, 8],
  decodeDepths: [256, 1023],
  decodeBatches: [1, 4],
  /** A GEMV whose weights (128 MiB of f32) dwarf any cache: the decode bandwidth target is judged here. */
  largeGemv: { N: 8192, K: 4096 },
  /** Page size of the paged attention cases; the contiguous ones give each sequence one exact-fit slot. */
  pageSize: 16,
  /**
   * Long-context decode attention, batch 1, at the model's head geometry whatever its maxSeqLen (a
   * kernel-level shape): the direct family against every split-K candidate, in block tables as wide
   * as `capacity`, for the split-K target.
   */
  longDecode: { depth: 4000, capacity: 4096 },
} as const;

/** A catalogue case as the suite reports it: its name, its shape in the report's terms, its cost. */
export interface SuiteCase {
  name: string;
  /** {M, K, N} for matmul-like kernels, {L, depth, batch, heads, headDim} for attention. */
  shape: Record<string, number>;
  cost: Cost;
  kase: KernelCase;
}

function linearCases(ctx: KernelContext, c: ModelConfig, variants: KernelVariants): SuiteCase[] {
  const { d, ffn, vocab, qWidth, kvWidth } = dims(c);
  const projections = [
    ['q proj', qWidth, d],
    ['k/v proj', kvWidth, d],
    ['o proj', d, qWidth],
    ['gate/up proj', ffn, d],
    ['down proj', d, ffn],
    ['lm head', vocab, d],
  ] as const;
  const linear = (name: string, kase: KernelCase, M: number, N: number, K: number): SuiteCase => ({
    name,
    shape: { M, K, N },
    cost: linearCost(M, N, K),
    kase,
  });
  const cases: SuiteCase[] = [];
  for (const M of KERNEL_SUITE.prefillLengths.filter((L) => L <= c.maxSeqLen)) {
    for (const [name, N, K] of projections) {
      const kase = matmulCase(ctx, { M, N, K, variant: variants.matmul, rows: 'sampled' });
      cases.push(linear(`matmul ${name}`, kase, M, N, K));
    }
  }
  for (const M of KERNEL_SUITE.gemvBatches) {
    for (const [name, N, K] of projections) {
      const kase = gemvCase(ctx, { M, N, K, variant: variants.gemv, rows: 'sampled' });
      cases.push(linear(`gemv ${name}`, kase, M, N, K));
    }
  }
  // The bandwidth target is judged on this shape, so every GEMV family is timed on it: the
  // autotuner's pick on the model's small shapes need not be the best for a cache-busting one.
  const { N, K } = KERNEL_SUITE.largeGemv;
  for (const variant of VARIANT_CANDIDATES.gemv.filter((v) => variantSupported(v, ctx.gpu))) {
    cases.push(linear('gemv large', gemvCase(ctx, { M: 1, N, K, variant, rows: 'sampled' }), 1, N, K));
  }
  // The same product with int4 weights, every packed family: its bytes are what int4 moves (the
  // packed words and their scales, x and y), so its share of the copy roof says how close
  // dequantizing in registers comes to streaming the smaller weights.
  for (const variant of VARIANT_CANDIDATES.packedGemv.filter((v) =>
    packedVariantSupported(v, 'int4', ctx.gpu),
  )) {
    cases.push({
      name: 'gemv large int4',
      shape: { M: 1, K, N },
      cost: { flops: 2 * N * K, bytes: weightBytes('int4', N, K) + (K + N) * BYTES.f32 },
      kase: packedGemvCase(ctx, { format: 'int4', M: 1, N, K, variant, rows: 'sampled' }),
    });
  }
  return cases;
}

function attentionCases(ctx: KernelContext, c: ModelConfig, variants: KernelVariants): SuiteCase[] {
  const dm = dims(c);
  const geometry = { heads: dm.heads, kvHeads: dm.kvHeads, headDim: dm.headDim };
  const layouts = (tokens: number) => [
    { paged: true, pageSize: KERNEL_SUITE.pageSize },
    { paged: false, pageSize: tokens },
  ];
  const cases: SuiteCase[] = [];
  for (const L of KERNEL_SUITE.prefillLengths.filter((x) => x <= c.maxSeqLen)) {
    for (const layout of layouts(L)) {
      const spec = { ...geometry, ...layout, L, start: 0, variant: variants.attentionPrefill };
      cases.push({
        name: 'attention prefill',
        shape: { L, depth: 0, batch: 1, heads: dm.heads, headDim: dm.headDim },
        cost: attentionCost(dm, L, (L * (L + 1)) / 2, L),
        kase: attentionPrefillCase(ctx, { ...spec, rows: 'sampled' }),
      });
    }
  }
  for (const depth of KERNEL_SUITE.decodeDepths.filter((x) => x + 1 <= c.maxSeqLen)) {
    const len = depth + 1;
    for (const B of KERNEL_SUITE.decodeBatches) {
      for (const layout of layouts(len)) {
        const lengths = Array<number>(B).fill(len);
        cases.push({
          name: 'attention decode',
          shape: { L: 1, depth, batch: B, heads: dm.heads, headDim: dm.headDim },
          cost: attentionCost(dm, B, B * len, B * len),
          kase: attentionDecodeCase(ctx, {
            ...geometry,
            ...layout,
            lengths,
            variant: variants.attentionDecode,
          }),
        });
      }
    }
  }
  const { depth, capacity } = KERNEL_SUITE.longDecode;
  const len = depth + 1;
  const long = VARIANT_CANDIDATES.attentionDecode.filter(
    (v) => v.family === 'direct' || v.family === 'split',
  );
  for (const variant of long) {
    cases.push({
      name: 'attention decode long',
      shape: { L: 1, depth, batch: 1, heads: dm.heads, headDim: dm.headDim },
      cost: attentionCost(dm, 1, len, len),
      kase: attentionDecodeCase(ctx, {
        ...geometry,
        paged: true,
        pageSize: KERNEL_SUITE.pageSize,
        lengths: [len],
        capacity,
        variant,
      }),
    });
  }
  return cases;
}

function elementwiseCases(ctx: KernelContext, c: ModelConfig, variants: KernelVariants): SuiteCase[] {
  const { d, ffn, heads, headDim, vocab } = dims(c);
  const L = Math.min(256, c.maxSeqLen);
  // A slice of the table is enough to gather from.
  const tableRows = Math.min(vocab, 4096);
  return [
    {
      name: 'rmsnorm',
      shape: { M: L, K: d, N: d },
      cost: rmsNormCost(L, d),
      kase: rmsNormCase(ctx, { rows: L, d, eps: c.rmsNormEps, variant: variants.rmsnorm }),
    },
    {
      name: 'rope',
      shape: { M: L, K: headDim, N: heads },
      cost: ropeCost(L, heads, headDim),
      kase: ropeCase(ctx, { rows: L, heads, headDim, start: 0, theta: c.ropeTheta }),
    },
    {
      name: 'swiglu',
      shape: { M: L, K: ffn, N: ffn },
      cost: swigluCost(L * ffn),
      kase: swigluCase(ctx, { n: L * ffn }),
    },
    {
      name: 'residual add',
      shape: { M: L, K: d, N: d },
      cost: residualCost(L * d),
      kase: residualAddCase(ctx, { n: L * d }),
    },
    {
      name: 'embedding',
      shape: { M: L, K: d, N: vocab },
      cost: embeddingCost(L, d),
      kase: embeddingCase(ctx, { rows: L, d, vocab: tableRows }),
    },
  ];
}

/** Every case of the suite at the model's shapes, in report order. */
export function suiteCases(ctx: KernelContext, config: ModelConfig, variants: KernelVariants): SuiteCase[] {
  return [
    ...linearCases(ctx, config, variants),
    ...attentionCases(ctx, config, variants),
    ...elementwiseCases(ctx, config, variants),
  ];
}
