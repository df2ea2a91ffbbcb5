import gemvCode from '../../shaders/gemv.wgsl?raw';
import cols4Code from '../../shaders/gemv_cols4.wgsl?raw';
import cols8Code from '../../shaders/gemv_cols8.wgsl?raw';
import rowwiseCode from '../../shaders/gemv_rowwise.wgsl?raw';
import subgroupCode from '../../shaders/gemv_subgroup.wgsl?raw';
import { KernelError } from '../errors.ts';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { GEMV_LIMITS } from './limits.ts';
import { DEFAULT_VARIANTS, type GemvVariant } from './variants.ts';
import { composeShader, defineParams } from './wgsl.ts';

export { GEMV_LIMITS };

/** Params of every GEMV shader: y[M, N] = x[M, K] · w[N, K]ᵀ. */
const GEMV_PARAMS = defineParams({ M: 'u32', N: 'u32', K: 'u32' });

const SHADERS = {
  reduce: composeShader({
    label: 'gemv',
    code: gemvCode,
    params: GEMV_PARAMS,
    constants: { ROWS: GEMV_LIMITS.rowsPerWorkgroup, MAX_M: GEMV_LIMITS.maxBatch },
  }),
  rowwise: composeShader({
    label: 'gemv_rowwise',
    code: rowwiseCode,
    params: GEMV_PARAMS,
    constants: { MAX_M: GEMV_LIMITS.maxBatch },
  }),
  cols4: composeShader({
    label: 'gemv_cols4',
    code: cols4Code,
    params: GEMV_PARAMS,
    constants: { MAX_M: GEMV_LIMITS.maxBatch },
  }),
  cols8: composeShader({
    label: 'gemv_cols8',
    code: cols8Code,
    params: GEMV_PARAMS,
    constants: { MAX_M: GEMV_LIMITS.maxBatch },
  }),
  subgroup: composeShader({
    label: 'gemv_subgroup',
    code: subgroupCode,
    params: GEMV_PARAMS,
    constants: { MAX_M: GEMV_LIMITS.maxBatch },
  }),
} as const;

/**
 * y[M, N] = x[M, K] · w[N, K]ᵀ for decode, M = 1 … 8 sequences, reading each weight once.
 * 'reduce' (gemv.wgsl): a workgroup per 4 output columns reducing over K, coalesced on GPUs.
 * 'rowwise' (gemv_rowwise.wgsl): an invocation per column, no barriers; compiled per batch size.
 * 'cols4' (gemv_cols4.wgsl): an invocation per four columns, sharing each x load between them;
 * compiled per batch size. Fewer loads per product, which is what batched decode on CPUs lacks.
 * 'cols8' (gemv_cols8.wgsl): the same with eight columns per invocation.
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
    const shader = SHADERS[variant.family];
    if (variant.family === 'reduce') {
      const pipeline = await ctx.pipelines.get(shader.label, shader.code, { WG: GEMV_LIMITS.workgroupSize });
      return new GemvKernel(ctx, pipeline, variant, undefined);
    }
    if (variant.family === 'subgroup' && !ctx.gpu.hasSubgroups) {
      throw new KernelError('the subgroup GEMV needs the "subgroups" feature, which this adapter lacks');
    }
    const maxSubgroup = ctx.gpu.adapter.subgroupMaxSize ?? 128;
    if (variant.family === 'subgroup' && variant.wg < maxSubgroup) {
      throw new KernelError(
        `the subgroup GEMV needs a workgroup of at least one subgroup (${maxSubgroup}), got ${variant.wg}`,
      );
    }
    if (batch < 1 || batch > GEMV_LIMITS.maxBatch) {
      throw new KernelError(`gemv batch ${batch} is outside 1…${GEMV_LIMITS.maxBatch}`);
    }
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, { WG: variant.wg, BATCH: batch });
    return new GemvKernel(ctx, pipeline, variant, batch);
  }

  call(a: { x: GPUBuffer; w: GPUBuffer; y: GPUBuffer; M: number; N: number; K: number }): KernelCall {
    if (a.M < 1 || a.M > GEMV_LIMITS.maxBatch) {
      throw new KernelError(`gemv batch M=${a.M} is outside 1…${GEMV_LIMITS.maxBatch}`);
    }
    if (this.batch !== undefined && a.M !== this.batch) {
      throw new KernelError(
        `this ${this.variant.family} gemv was compiled for batch ${this.batch}, called with M=${a.M}`,
      );
    }
    // Columns per workgroup: 4 (reduce), one per invocation (rowwise), 4 or 8 per invocation
    // (cols4, cols8), one per subgroup (subgroup;
    // sized for the largest subgroup the adapter may pick, so smaller ones only leave spare groups).
    const v = this.variant;
    const maxSubgroup = this.ctx.gpu.adapter.subgroupMaxSize ?? 128;
    const perGroup =
      v.family === 'reduce'
        ? GEMV_LIMITS.rowsPerWorkgroup
        : v.family === 'rowwise'
          ? v.wg
          : v.family === 'cols4'
            ? 4 * v.wg
            : v.family === 'cols8'
              ? 8 * v.wg
              : Math.max(1, Math.floor(v.wg / maxSubgroup));
    const grid = grid1d(Math.ceil(a.N / perGroup), this.ctx.gpu);
    return makeCall(this.ctx, {
      name: 'gemv',
      pipeline: this.pipeline,
      params: GEMV_PARAMS,
      values: { M: a.M, N: a.N, K: a.K },
      buffers: [a.x, a.w, a.y],
      workgroups: grid,
    });
  }
}
