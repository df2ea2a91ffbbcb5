import { InputError } from '../errors.ts';
import {
  type AttentionConfig,
  PagedAttentionDecodeKernel,
  PagedAttentionPrefillKernel,
} from '../kernels/attention.ts';
import { EmbeddingKernel, ResidualAddKernel, RopeKernel, SwigluKernel } from '../kernels/elementwise.ts';
import { GemvKernel } from '../kernels/gemv.ts';
import { HeadPrepKernel, type QkvPrep } from '../kernels/head-prep.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import { KvWriteKernel, RopeKvWriteKernel } from '../kernels/kv-write.ts';
import { MatmulKernel } from '../kernels/matmul.ts';
import { PackedEmbeddingKernel, PackedGemvKernel, PackedMatmulKernel } from '../kernels/packed.ts';
import { ArgmaxKernel, RmsNormKernel } from '../kernels/rowwise.ts';
import type { KernelVariants } from '../kernels/variants.ts';
import type { WeightFormat } from '../weight-format.ts';
import { FUSIONS, type FusionKey, type Kernels, type LinearCall } from './graph.ts';

/** Compiles the kernels the graph calls besides the linear ones, in the chosen families. */
export async function createKernels(
  ctx: KernelContext,
  variants: KernelVariants,
  /** The attention kernels' shape: the model's heads and the KV cache's layout. */
  attention: AttentionConfig,
  /** What the architecture does to q, k and v before RoPE (archFeatures): a bias, a head norm. */
  prep: QkvPrep,
  /** The embedding table's format: a packed one is looked up by its own gather. */
  embedding: WeightFormat,
): Promise<Kernels> {
  return {
    ...(embedding === 'f32' ? {} : { packedEmbedding: await PackedEmbeddingKernel.create(ctx, embedding) }),
    // The unfused graph's preparations: of q and k (the bias and the norm), and of v (its bias alone).
    ...(prep.bias || prep.norm ? { headPrepQk: await HeadPrepKernel.create(ctx, prep) } : {}),
    ...(prep.bias ? { headPrepV: await HeadPrepKernel.create(ctx, { bias: true, norm: false }) } : {}),
    embedding: await EmbeddingKernel.create(ctx),
    rmsNorm: await RmsNormKernel.create(ctx, variants.rmsnorm),
    rope: await RopeKernel.create(ctx),
    add: await ResidualAddKernel.create(ctx),
    swiglu: await SwigluKernel.create(ctx),
    argmax: await ArgmaxKernel.create(ctx),
    kvWrite: await KvWriteKernel.create(ctx, attention.kvDtype),
    ropeKvWrite: await RopeKvWriteKernel.create(ctx, attention.kvDtype, prep),
    attentionPrefill: await PagedAttentionPrefillKernel.create(ctx, attention, variants.attentionPrefill),
    attentionDecode: await PagedAttentionDecodeKernel.create(ctx, attention, variants.attentionDecode),
  };
}

/** Gets (compiling on first use) the kernel `key` of a per-model kernel map. */
async function cached<T>(map: Map<string, T>, key: string, make: () => Promise<T>): Promise<T> {
  let kernel = map.get(key);
  if (!kernel) {
    kernel = await make();
    map.set(key, kernel);
  }
  return kernel;
}

/** The kernel of `map` under `key`, which the plan builder compiled before recording. */
function built<T>(map: Map<string, T>, key: string, what: string): T {
  const kernel = map.get(key);
  if (!kernel) throw new InputError(`no ${what} kernel was built for ${key}`);
  return kernel;
}

/**
 * A model's linear kernels, compiled as the plans need them (per pass shape and fusion of its
 * graph) and kept for the model's life.
 */
export class LinearKernels {
  /** The f32 prefill matmuls, by fusion key. */
  private readonly matmul = new Map<string, MatmulKernel>();
  /** The f32 decode GEMVs, by batch and fusion key (compiled per batch). */
  private readonly gemv = new Map<string, GemvKernel>();
  /** The packed formats' prefill matmuls, by format and fusion key. */
  private readonly packedMatmul = new Map<string, PackedMatmulKernel>();
  /** The packed formats' decode GEMVs, by format, batch and fusion key (compiled per batch). */
  private readonly packedGemv = new Map<string, PackedGemvKernel>();

  constructor(
    private readonly ctx: KernelContext,
    private readonly variants: KernelVariants,
    /**
     * The formats of the model's linear weights on the GPU (linearFormatsOf): only their kernels
     * are compiled. A fully packed model compiles no f32 matmul or GEMV; on SwiftShader those took
     * 0.55 s of an 11 s trained-4m generate.
     */
    private readonly formats: ReadonlySet<WeightFormat>,
    /** The fusion keys the model's graph runs (graphFusions). */
    private readonly fusionKeys: readonly FusionKey[],
    /** The fused RMSNorm's epsilon (the model's rmsNormEps). */
    private readonly eps: number,
  ) {}

  /** The prefill projection for L rows: the f32 matmul or the packed format's, with the graph's fusions. */
  async matmulLinear(L: number): Promise<LinearCall> {
    for (const key of this.fusionKeys) {
      for (const format of this.formats) {
        if (format === 'f32')
          await cached(this.matmul, key, () =>
            MatmulKernel.create(this.ctx, this.variants.matmul, FUSIONS[key]),
          );
        else
          await cached(this.packedMatmul, `${format}:${key}`, () =>
            PackedMatmulKernel.create(this.ctx, format, this.variants.packedMatmul, FUSIONS[key]),
          );
      }
    }
    const eps = this.eps;
    return (a, w, c, N, K, fuse = { key: 'plain' }) => {
      const norm = fuse.gamma ? { gamma: fuse.gamma, eps } : {};
      if (w.format === 'f32')
        return built(this.matmul, fuse.key, 'matmul').call({ a, b: w.w, c, M: L, N, K, ...norm });
      return built(this.packedMatmul, `${w.format}:${fuse.key}`, `${w.format} matmul`).call({
        a,
        w: w.w,
        scales: w.scales,
        c,
        M: L,
        N,
        K,
        ...norm,
      });
    };
  }

  /**
   * The decode projection for B rows: the f32 GEMV or the packed format's, each compiled for its
   * batch size (the rowwise families unroll it) and the graph's fusions, and kept.
   */
  async gemvLinear(B: number): Promise<LinearCall> {
    for (const key of this.fusionKeys) {
      for (const format of this.formats) {
        if (format === 'f32')
          await cached(this.gemv, `${B}:${key}`, () =>
            GemvKernel.create(this.ctx, this.variants.gemv, B, FUSIONS[key]),
          );
        else
          await cached(this.packedGemv, `${format}:${B}:${key}`, () =>
            PackedGemvKernel.create(this.ctx, format, this.variants.packedGemv, B, FUSIONS[key]),
          );
      }
    }
    const eps = this.eps;
    return (x, w, y, N, K, fuse = { key: 'plain' }) => {
      const norm = fuse.gamma ? { gamma: fuse.gamma, eps } : {};
      if (w.format === 'f32')
        return built(this.gemv, `${B}:${fuse.key}`, 'GEMV').call({ x, w: w.w, y, M: B, N, K, ...norm });
      return built(this.packedGemv, `${w.format}:${B}:${fuse.key}`, `${w.format} GEMV`).call({
        x,
        w: w.w,
        scales: w.scales,
        y,
        M: B,
        N,
        K,
        ...norm,
      });
    };
  }
}
