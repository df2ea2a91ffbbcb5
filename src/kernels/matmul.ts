import matmulCode from '../../shaders/matmul.wgsl?raw';
import registerCode from '../../shaders/matmul_regtile.wgsl?raw';
import register8Code from '../../shaders/matmul_regtile8.wgsl?raw';
import { KernelError } from '../errors.ts';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { DEFAULT_VARIANTS, type MatmulVariant } from './variants.ts';
import { composeShader, defineParams } from './wgsl.ts';

/** Params of every matmul shader: c[M, N] = a[M, K] · b[N, K]ᵀ. */
const MATMUL_PARAMS = defineParams({ M: 'u32', N: 'u32', K: 'u32' });

const SHADERS = {
  tiled: composeShader({ label: 'matmul', code: matmulCode, params: MATMUL_PARAMS }),
  register: composeShader({ label: 'matmul_regtile', code: registerCode, params: MATMUL_PARAMS }),
  register8: composeShader({ label: 'matmul_regtile8', code: register8Code, params: MATMUL_PARAMS }),
} as const;

/**
 * c[M, N] = a[M, K] · b[N, K]ᵀ for prefill, where M = L is large. Two families: workgroup-memory
 * tiles (matmul.wgsl) and barrier-free register tiles (matmul_regtile.wgsl, 4x4 per invocation;
 * matmul_regtile8.wgsl, 8x8). A workgroup covers tile·wgY rows by tile·wgX columns.
 */
export class MatmulKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: MatmulVariant,
  ) {}

  static async create(ctx: KernelContext, variant: MatmulVariant = DEFAULT_VARIANTS.matmul) {
    const shader = SHADERS[variant.family];
    if (variant.family === 'tiled') {
      if (variant.tileK % 4 !== 0)
        throw new KernelError(`matmul tileK must be a multiple of 4, got ${variant.tileK}`);
      const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
        WG_X: variant.wgX,
        WG_Y: variant.wgY,
        TILE_K: variant.tileK,
      });
      return new MatmulKernel(ctx, pipeline, variant);
    }
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
      WG_X: variant.wgX,
      WG_Y: variant.wgY,
    });
    return new MatmulKernel(ctx, pipeline, variant);
  }

  call(a: { a: GPUBuffer; b: GPUBuffer; c: GPUBuffer; M: number; N: number; K: number }): KernelCall {
    const v = this.variant;
    const tile = v.family === 'register8' ? 8 : 4; // outputs per invocation along each axis
    const grid = [Math.ceil(a.N / (tile * v.wgX)), Math.ceil(a.M / (tile * v.wgY)), 1] as const;
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
