import matmulCode from '../../shaders/matmul.wgsl?raw';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';

/** Tiling of the prefill matmul; each invocation owns a 4x4 register tile (fixed in the shader). */
export interface MatmulTiling {
  /** Invocations along N; the workgroup covers 4·wgX output columns. */
  wgX: number;
  /** Invocations along M; the workgroup covers 4·wgY output rows. */
  wgY: number;
  /** K step staged in workgroup memory per barrier pair; a multiple of 4. */
  tileK: number;
}

/** Default tiling: 64x64 output tile, 256 invocations, 8 KiB of workgroup memory. */
export const DEFAULT_MATMUL_TILING = { wgX: 16, wgY: 16, tileK: 16 } as const satisfies MatmulTiling;

/** c[M, N] = a[M, K] · b[N, K]ᵀ through workgroup-memory tiles; for prefill, where M = L is large. */
export class MatmulKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly tiling: MatmulTiling,
  ) {}

  static async create(ctx: KernelContext, tiling: MatmulTiling = DEFAULT_MATMUL_TILING) {
    if (tiling.tileK % 4 !== 0) throw new Error(`matmul tileK must be a multiple of 4, got ${tiling.tileK}`);
    const pipeline = await ctx.pipelines.get('matmul', matmulCode, {
      WG_X: tiling.wgX,
      WG_Y: tiling.wgY,
      TILE_K: tiling.tileK,
    });
    return new MatmulKernel(ctx, pipeline, tiling);
  }

  call(a: { a: GPUBuffer; b: GPUBuffer; c: GPUBuffer; M: number; N: number; K: number }): KernelCall {
    const grid = [Math.ceil(a.N / (4 * this.tiling.wgX)), Math.ceil(a.M / (4 * this.tiling.wgY)), 1] as const;
    return makeCall(this.ctx, 'matmul', this.pipeline, [a.M, a.N, a.K], [a.a, a.b, a.c], grid);
  }
}
