import gemvCode from '../../shaders/gemv.wgsl?raw';
import cols4Code from '../../shaders/gemv_cols4.wgsl?raw';
import cols8Code from '../../shaders/gemv_cols8.wgsl?raw';
import rowwiseCode from '../../shaders/gemv_rowwise.wgsl?raw';
import subgroupCode from '../../shaders/gemv_subgroup.wgsl?raw';
import { KernelError } from '../errors.ts';
import {
  checkFusionCall,
  EPILOGUE_CODE,
  fusionName,
  type LinearFusion,
  PLAIN,
  prologueSlot,
} from './fuse.ts';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { GEMV_LIMITS } from './limits.ts';
import { DEFAULT_VARIANTS, FUSABLE_FAMILIES, familyFuses, type GemvVariant } from './variants.ts';
import { composedOnce, composeShader, defineParams } from './wgsl.ts';

export { GEMV_LIMITS };

/** Params of every GEMV shader: y[M, N] = x[M, K] · w[N, K]ᵀ; eps is the fused RMSNorm's (else 0). */
const GEMV_PARAMS = defineParams({ M: 'u32', N: 'u32', K: 'u32', eps: 'f32', epilogue: 'u32' });

/** Binding of the fused RMSNorm's gamma in the fusable GEMV shaders (after params, x, w and y). */
const FUSE_BINDING = 4;

/** Each family's shader source and its `//#const` values. */
const SOURCES = {
  reduce: {
    label: 'gemv',
    code: gemvCode,
    constants: { ROWS: GEMV_LIMITS.rowsPerWorkgroup, MAX_M: GEMV_LIMITS.maxBatch },
  },
  rowwise: { label: 'gemv_rowwise', code: rowwiseCode, constants: { MAX_M: GEMV_LIMITS.maxBatch } },
  cols4: { label: 'gemv_cols4', code: cols4Code, constants: { MAX_M: GEMV_LIMITS.maxBatch } },
  cols8: { label: 'gemv_cols8', code: cols8Code, constants: { MAX_M: GEMV_LIMITS.maxBatch } },
  subgroup: { label: 'gemv_subgroup', code: subgroupCode, constants: { MAX_M: GEMV_LIMITS.maxBatch } },
} as const satisfies Record<GemvVariant['family'], unknown>;

/** A family's shader; one that takes the fusions (FUSABLE_FAMILIES) with its prologue slot filled. */
const shaderOf = composedOnce(
  (family: GemvVariant['family'], norm: boolean) => `${family}:${norm}`,
  (family: GemvVariant['family'], norm: boolean) => {
    const source = SOURCES[family];
    if (!(FUSABLE_FAMILIES.gemv as readonly string[]).includes(family))
      return composeShader({ ...source, params: GEMV_PARAMS });
    return composeShader({
      ...source,
      params: GEMV_PARAMS,
      constants: { ...source.constants, FUSE_BINDING },
      slots: prologueSlot({ norm, epilogue: 'store' }),
    });
  },
);

/**
 * y[M, N] = x[M, K] · w[N, K]ᵀ for decode, M = 1 … 8 sequences, reading each weight once.
 * 'reduce' (gemv.wgsl): a workgroup per 4 output columns reducing over K, coalesced on GPUs.
 * 'rowwise' (gemv_rowwise.wgsl): an invocation per column, no barriers; compiled per batch size.
 * 'cols4' (gemv_cols4.wgsl): an invocation per four columns, sharing each x load between them;
 * compiled per batch size. Fewer loads per product, which is what batched decode on CPUs lacks.
 * 'cols8' (gemv_cols8.wgsl): the same with eight columns per invocation.
 * 'subgroup' (gemv_subgroup.wgsl): a subgroup per column with subgroupAdd; needs `subgroups`.
 * `fusion` (fuse.ts): reduce, cols4 and cols8 can fuse the RMSNorm before and the residual add or
 * SwiGLU after the product; rowwise and subgroup only run it plain.
 */
export class GemvKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: GemvVariant,
    /** The batch the pipeline was compiled for (rowwise), or undefined when any M works. */
    private readonly batch: number | undefined,
    readonly fusion: LinearFusion,
  ) {}

  static async create(
    ctx: KernelContext,
    variant: GemvVariant = DEFAULT_VARIANTS.gemv,
    batch = 1,
    fusion: LinearFusion = PLAIN,
  ) {
    if (fusionName(fusion) !== 'plain' && !familyFuses('gemv', variant)) {
      throw new KernelError(`the ${variant.family} GEMV cannot fuse ${fusionName(fusion)}`);
    }
    const shader = shaderOf(variant.family, fusion.norm);
    if (variant.family === 'reduce') {
      const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
        WG: GEMV_LIMITS.workgroupSize,
      });
      return new GemvKernel(ctx, pipeline, variant, undefined, fusion);
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
    const overrides: Record<string, number> = { WG: variant.wg, BATCH: batch };
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, overrides);
    return new GemvKernel(ctx, pipeline, variant, batch, fusion);
  }

  /**
   * y = x · wᵀ with the kernel's fusion: `gamma` and `eps` are the fused RMSNorm's (exactly when it
   * has one); with the SwiGLU epilogue y is [M, N / 2], with 'add' y is added to.
   */
  call(a: {
    x: GPUBuffer;
    w: GPUBuffer;
    y: GPUBuffer;
    M: number;
    N: number;
    K: number;
    gamma?: GPUBuffer;
    eps?: number;
  }): KernelCall {
    checkFusionCall(`${this.variant.family} gemv`, this.fusion, a);
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
      values: { M: a.M, N: a.N, K: a.K, eps: a.eps ?? 0, epilogue: EPILOGUE_CODE[this.fusion.epilogue] },
      buffers: a.gamma ? [a.x, a.w, a.y, a.gamma] : [a.x, a.w, a.y],
      workgroups: grid,
    });
  }
}
