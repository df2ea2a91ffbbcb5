import matmulCode from '../../shaders/matmul.wgsl?raw';
import tileCode from '../../shaders/matmul_tile.wgsl?raw';
import { KernelError } from '../errors.ts';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { unrollTile } from './unroll.ts';
import { DEFAULT_VARIANTS, type MatmulVariant } from './variants.ts';
import { composeShader, defineParams } from './wgsl.ts';

/** Params of every matmul shader: c[M, N] = a[M, K] · b[N, K]ᵀ. */
const MATMUL_PARAMS = defineParams({ M: 'u32', N: 'u32', K: 'u32' });

const TILED = composeShader({ label: 'matmul', code: matmulCode, params: MATMUL_PARAMS });

/** Largest register tile side the 'tile' family takes: a 16x16 tile already holds 256 accumulators. */
const MAX_TILE = 16;

/** The register-tile shader for one tile size: its element lines unrolled, its constants spliced in. */
function tileShader(tm: number, tn: number, ku: number) {
  return composeShader({
    label: 'matmul_tile',
    code: unrollTile(tileCode, { rows: tm, cols: tn, unroll: ku }),
    params: MATMUL_PARAMS,
    constants: { TM: tm, TN: tn, KU: ku },
  });
}

/** Outputs per invocation along M and N: what the dispatch grid is sized with. */
export function matmulTile(v: MatmulVariant): { rows: number; cols: number } {
  return v.family === 'tile' ? { rows: v.tm, cols: v.tn } : { rows: 4, cols: 4 };
}

/**
 * c[M, N] = a[M, K] · b[N, K]ᵀ for prefill, where M = L is large. Two families: workgroup-memory
 * tiles (matmul.wgsl, 4x4 outputs per invocation) and barrier-free register tiles of any tm × tn
 * (matmul_tile.wgsl). A workgroup covers rows·wgY rows by cols·wgX columns.
 */
export class MatmulKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: MatmulVariant,
  ) {}

  static async create(ctx: KernelContext, variant: MatmulVariant = DEFAULT_VARIANTS.matmul) {
    if (variant.family === 'tiled') {
      if (variant.tileK % 4 !== 0)
        throw new KernelError(`matmul tileK must be a multiple of 4, got ${variant.tileK}`);
      const pipeline = await ctx.pipelines.get(TILED.label, TILED.code, {
        WG_X: variant.wgX,
        WG_Y: variant.wgY,
        TILE_K: variant.tileK,
      });
      return new MatmulKernel(ctx, pipeline, variant);
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
    const shader = tileShader(tm, tn, ku);
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
      WG_X: variant.wgX,
      WG_Y: variant.wgY,
    });
    return new MatmulKernel(ctx, pipeline, variant);
  }

  call(a: { a: GPUBuffer; b: GPUBuffer; c: GPUBuffer; M: number; N: number; K: number }): KernelCall {
    const v = this.variant;
    const { rows, cols } = matmulTile(v);
    const grid = [Math.ceil(a.N / (cols * v.wgX)), Math.ceil(a.M / (rows * v.wgY)), 1] as const;
    return makeCall(this.ctx, {
      name: 'matmul',
      pipeline: this.pipeline,
      params: MATMUL_PARAMS,
      values: { M: a.M, N: a.N, K: a.K },
      buffers: [a.a, a.b, a.c],
      workgroups: grid,
    });
  }
}
