import gemvCode from '../../shaders/gemv.wgsl?raw';
import rowwiseCode from '../../shaders/gemv_rowwise.wgsl?raw';
import subgroupCode from '../../shaders/gemv_subgroup.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { GEMV_LIMITS } from './limits.ts';
import { DEFAULT_VARIANTS, type GemvVariant } from './variants.ts';

export { GEMV_LIMITS };

/**
 * y[M, N] = x[M, K] · w[N, K]ᵀ for decode, M = 1 … 8 sequences, reading each weight once.
 * 'reduce' (gemv.wgsl): a workgroup per 4 output columns reducing over K, coalesced on GPUs.
 * 'rowwise' (gemv_rowwise.wgsl): an invocation per column, no barriers; compiled per batch size.
 * 'subgroup' (gemv_subgroup.wgsl): a subgroup per column with subgroupAdd; needs `subgroups`.
 */
export class GemvKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: GemvVariant,
    /** The batch the pipeline was compiled for (rowwise), or undefined when any M works. */
    private readonly batch: number | undefined,
  ) {}

  static async create(ctx: KernelContext, variant: GemvVariant = DEFAULT_VARIANTS.gemv, batch = 1) {
    if (variant.family === 'reduce') {
      const pipeline = await ctx.pipelines.get('gemv', gemvCode, { WG: GEMV_LIMITS.workgroupSize });
      return new GemvKernel(ctx, pipeline, variant, undefined);
    }
    if (variant.family === 'subgroup' && !ctx.gpu.hasSubgroups) {
      throw new Error('the subgroup GEMV needs the "subgroups" feature, which this adapter lacks');
    }
    const maxSubgroup = ctx.gpu.adapter.subgroupMaxSize ?? 128;
    if (variant.family === 'subgroup' && variant.wg < maxSubgroup) {
      throw new Error(
        `the subgroup GEMV needs a workgroup of at least one subgroup (${maxSubgroup}), got ${variant.wg}`,
      );
    }
    const [name, code] =
      variant.family === 'rowwise' ? ['gemv_rowwise', rowwiseCode] : ['gemv_subgroup', subgroupCode];
    const pipeline = await ctx.pipelines.get(name, code, { WG: variant.wg, BATCH: batch });
    return new GemvKernel(ctx, pipeline, variant, batch);
  }

  call(a: { x: GPUBuffer; w: GPUBuffer; y: GPUBuffer; M: number; N: number; K: number }): KernelCall {
    if (a.M < 1 || a.M > GEMV_LIMITS.maxBatch) {
      throw new Error(`gemv batch M=${a.M} is outside 1…${GEMV_LIMITS.maxBatch}`);
    }
    if (this.batch !== undefined && a.M !== this.batch) {
      throw new Error(`this rowwise gemv was compiled for batch ${this.batch}, called with M=${a.M}`);
    }
    // Columns per workgroup: 4 (reduce), one per invocation (rowwise), one per subgroup (subgroup;
    // sized for the largest subgroup the adapter may pick, so smaller ones only leave spare groups).
    const v = this.variant;
    const maxSubgroup = this.ctx.gpu.adapter.subgroupMaxSize ?? 128;
    const perGroup =
      v.family === 'reduce'
        ? GEMV_LIMITS.rowsPerWorkgroup
        : v.family === 'rowwise'
          ? v.wg
          : Math.max(1, Math.floor(v.wg / maxSubgroup));
    const grid = grid1d(Math.ceil(a.N / perGroup), this.ctx.gpu);
    return makeCall(this.ctx, 'gemv', this.pipeline, [a.M, a.N, a.K], [a.x, a.w, a.y], grid);
  }
}
