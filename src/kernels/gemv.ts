import gemvCode from '../../shaders/gemv.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';

/** Shape limits baked into gemv.wgsl; the wrapper checks calls against them. */
export const GEMV_LIMITS = {
  /** Output columns per workgroup (const ROWS in the shader). */
  rowsPerWorkgroup: 4,
  /** Largest batch M (const MAX_M in the shader). */
  maxBatch: 8,
  /** Invocations per workgroup; at least maxBatch * rowsPerWorkgroup so the final write covers every output. */
  workgroupSize: 64,
} as const;

/** y[M, N] = x[M, K] · w[N, K]ᵀ for decode, M = 1 … 8 sequences, reading each weight once. */
export class GemvKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new GemvKernel(ctx, await ctx.pipelines.get('gemv', gemvCode, { WG: GEMV_LIMITS.workgroupSize }));
  }

  call(a: { x: GPUBuffer; w: GPUBuffer; y: GPUBuffer; M: number; N: number; K: number }): KernelCall {
    if (a.M < 1 || a.M > GEMV_LIMITS.maxBatch) {
      throw new Error(`gemv batch M=${a.M} is outside 1…${GEMV_LIMITS.maxBatch}`);
    }
    const grid = grid1d(Math.ceil(a.N / GEMV_LIMITS.rowsPerWorkgroup), this.ctx.gpu);
    return makeCall(this.ctx, 'gemv', this.pipeline, [a.M, a.N, a.K], [a.x, a.w, a.y], grid);
  }
}
