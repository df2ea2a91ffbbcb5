import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import { attentionDecodeCase, attentionPrefillCase } from '../kernels/cases/attention.ts';
import type { KernelCase } from '../kernels/cases/case.ts';
import {
  embeddingCase,
  residualAddCase,
  rmsNormCase,
  ropeCase,
  swigluCase,
} from '../kernels/cases/elementwise.ts';
import { gemvCase, matmulCase } from '../kernels/cases/linear.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import { KernelRig } from '../kernels/rig.ts';
import { type KernelVariants, VARIANT_CANDIDATES, variantSupported } from '../kernels/variants.ts';
import { dims, type ModelConfig } from '../model/config.ts';
import type { KernelPoint } from '../results/schema.ts';
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
import { KernelTimer } from './kernel-timer.ts';
import { placeKernel, type Roofs } from './roofline.ts';
import { percentile } from './stats.ts';

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
  warmup: 1,
  reps: 3,
} as const;

/** A catalogue case as the suite reports it: its name, its shape in the report's terms, its cost. */
interface SuiteCase {
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

export interface KernelSuiteProgress {
  done: number;
  total: number;
  label: string;
  point?: KernelPoint;
}

/**
 * Times each kernel alone at the shapes the model really uses, after checking its output against
 * the CPU reference on the same inputs (sampled rows for large outputs). A kernel that fails the
 * check is recorded as failed and not timed. An aborted `signal` stops the suite between cases
 * with the signal's reason; the points finished so far have gone out through `onProgress`.
 */
export async function runKernelSuite(
  gpu: Gpu,
  pipelines: PipelineCache,
  config: ModelConfig,
  variants: KernelVariants,
  roofs: Roofs,
  options: { onProgress?: (p: KernelSuiteProgress) => void; signal?: AbortSignal } = {},
): Promise<{ points: KernelPoint[]; failures: string[]; skipped: string[]; checked: number }> {
  const ctx: KernelContext = { gpu, pipelines };
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  const all = [
    ...linearCases(ctx, config, variants),
    ...attentionCases(ctx, config, variants),
    ...elementwiseCases(ctx, config, variants),
  ];
  const label = (c: SuiteCase) => `${c.name} ${JSON.stringify(c.shape)}`;
  const cases = all.filter((c) => c.kase.bufferBytes <= limit);
  const skipped = all.filter((c) => c.kase.bufferBytes > limit).map(label);
  const points: KernelPoint[] = [];
  const failures: string[] = [];
  const profiler = new GpuProfiler(gpu, 1);
  try {
    for (const [i, c] of cases.entries()) {
      options.signal?.throwIfAborted();
      const rig = new KernelRig(gpu, `kernel suite: ${c.name}`);
      try {
        const { setup, call, check } = await c.kase.prepare(rig);
        await rig.run(...setup);
        const result = await check();
        if (!result.passed) {
          failures.push(
            `${label(c)} (${c.kase.variant}) differs from the CPU reference: maxAbsErr ${result.maxAbsErr}, ` +
              `first mismatches ${JSON.stringify(result.mismatches.slice(0, 3))}`,
          );
          continue;
        }
        const samplesMs = await new KernelTimer(rig, profiler, KERNEL_SUITE).samples(call);
        const medianMs = percentile(samplesMs, 50);
        const point: KernelPoint = {
          name: c.name,
          variant: c.kase.variant,
          shape: c.shape,
          medianMs,
          samplesMs,
          flops: c.cost.flops,
          bytes: c.cost.bytes,
          gflops: medianMs > 0 ? c.cost.flops / (medianMs * 1e6) : 0,
          gbps: medianMs > 0 ? c.cost.bytes / (medianMs * 1e6) : 0,
          ...placeKernel(c.cost.flops, c.cost.bytes, medianMs, roofs),
        };
        points.push(point);
        options.onProgress?.({ done: i + 1, total: cases.length, label: label(c), point });
      } finally {
        rig.destroy();
      }
    }
  } finally {
    profiler.destroy();
  }
  return { points, failures, skipped, checked: points.length + failures.length };
}
