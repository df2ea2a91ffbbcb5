import matmulCode from '../../shaders/matmul.wgsl?raw';
import tileCode from '../../shaders/matmul_tile.wgsl?raw';
import { KernelError } from '../errors.ts';
import {
  checkFusionCall,
  EPILOGUE_CODE,
  fusionName,
  type LinearFusion,
  PLAIN,
  prologueSlot,
} from './fuse.ts';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { unrollTile } from './unroll.ts';
import { DEFAULT_VARIANTS, familyFuses, type MatmulVariant } from './variants.ts';
import { composedOnce, composeShader, defineParams } from './wgsl.ts';

/** Params of every matmul shader: c[M, N] = a[M, K] · b[N, K]ᵀ; eps: the fused RMSNorm's (else 0). */
const MATMUL_PARAMS = defineParams({ M: 'u32', N: 'u32', K: 'u32', eps: 'f32', epilogue: 'u32' });

/** Binding of the fused RMSNorm's gamma in the matmul shaders (after params, a, b and c). */
const FUSE_BINDING = 4;

/** Largest register tile side the 'tile' family takes: a 16x16 tile already holds 256 accumulators. */
const MAX_TILE = 16;

/**
 * A matmul shader, composed once per family (per tile size for 'tile': its element lines unrolled,
 * its constants spliced in) and per prologue (fuse.ts).
 */
const shaderOf = composedOnce(
  (v: MatmulVariant, norm: boolean) =>
    v.family === 'tile' ? `tile ${v.tm}x${v.tn}x${v.ku}:${norm}` : `tiled:${norm}`,
  (v: MatmulVariant, norm: boolean) => {
    const slots = prologueSlot({ norm, epilogue: 'store' });
    return v.family === 'tile'
      ? composeShader({
          label: 'matmul_tile',
          code: unrollTile(tileCode, { rows: v.tm, cols: v.tn, unroll: v.ku }),
          params: MATMUL_PARAMS,
          constants: { TM: v.tm, TN: v.tn, KU: v.ku, FUSE_BINDING },
          slots,
        })
      : composeShader({
          label: 'matmul',
          code: matmulCode,
          params: MATMUL_PARAMS,
          constants: { FUSE_BINDING },
          slots,
        });
  },
);

/** Outputs per invocation along M and N: what the dispatch grid is sized with. */
export function matmulTile(v: MatmulVariant): { rows: number; cols: number } {
  return v.family === 'tile' ? { rows: v.tm, cols: v.tn } : { rows: 4, cols: 4 };
}

/**
 * c[M, N] = a[M, K] · b[N, K]ᵀ for prefill, where M = L is large. Two families: workgroup-memory
 * tiles (matmul.wgsl, 4x4 outputs per invocation) and barrier-free register tiles of any tm × tn
 * (matmul_tile.wgsl). A workgroup covers rows·wgY rows by cols·wgX columns. `fusion` (fuse.ts):
 * the RMSNorm before and the residual add or SwiGLU after the product.
 */
export class MatmulKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: MatmulVariant,
    readonly fusion: LinearFusion,
  ) {}

  static async create(
    ctx: KernelContext,
    variant: MatmulVariant = DEFAULT_VARIANTS.matmul,
    fusion: LinearFusion = PLAIN,
  ) {
    if (fusionName(fusion) !== 'plain' && !familyFuses('matmul', variant))
      throw new KernelError(`the ${matmulName(variant)} matmul cannot fuse ${fusionName(fusion)}`);
    if (variant.family === 'tiled') {
      if (variant.tileK % 4 !== 0)
        throw new KernelError(`matmul tileK must be a multiple of 4, got ${variant.tileK}`);
      const shader = shaderOf(variant, fusion.norm);
      const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
        WG_X: variant.wgX,
        WG_Y: variant.wgY,
        TILE_K: variant.tileK,
      });
      return new MatmulKernel(ctx, pipeline, variant, fusion);
    }
    const { tm, tn, ku } = variant;
    for (const [name, n, max] of [
      ['tm', tm, MAX_TILE],
      ['tn', tn, MAX_TILE],
      ['ku', ku, 4],
    ] as const) {
      if (!Number.isInteger(n) || n < 1 || n > max)
        throw new KernelError(`matmul tile ${name} must be an integer in 1…${max}, got ${n}`);
    }
    const shader = shaderOf(variant, fusion.norm);
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
      WG_X: variant.wgX,
      WG_Y: variant.wgY,
    });
    return new MatmulKernel(ctx, pipeline, variant, fusion);
  }

  /** With the kernel's fusion (fuse.ts): `gamma` and `eps` exactly when it fuses the norm. */
  call(a: {
    a: GPUBuffer;
    b: GPUBuffer;
    c: GPUBuffer;
    M: number;
    N: number;
    K: number;
    gamma?: GPUBuffer;
    eps?: number;
  }): KernelCall {
    checkFusionCall(`${matmulName(this.variant)} matmul`, this.fusion, a);
    const v = this.variant;
    const { rows, cols } = matmulTile(v);
    const grid = [Math.ceil(a.N / (cols * v.wgX)), Math.ceil(a.M / (rows * v.wgY)), 1] as const;
    return makeCall(this.ctx, {
      name: 'matmul',
      pipeline: this.pipeline,
      params: MATMUL_PARAMS,
      values: { M: a.M, N: a.N, K: a.K, eps: a.eps ?? 0, epilogue: EPILOGUE_CODE[this.fusion.epilogue] },
      buffers: a.gamma ? [a.a, a.b, a.c, a.gamma] : [a.a, a.b, a.c],
      workgroups: grid,
    });
  }
}

function matmulName(v: MatmulVariant): string {
  return v.family === 'tile' ? `${v.tm}x${v.tn} tile` : v.family;
}
