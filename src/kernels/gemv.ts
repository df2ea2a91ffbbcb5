import gemvCode from '../../shaders/gemv.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { GEMV_LIMITS } from './limits.ts';

export { GEMV_LIMITS };

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
