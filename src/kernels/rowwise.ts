import argmaxCode from '../../shaders/argmax.wgsl?raw';
import rmsnormCode from '../../shaders/rmsnorm.wgsl?raw';
import rmsnormRowwiseCode from '../../shaders/rmsnorm_rowwise.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { DEFAULT_VARIANTS, type RmsNormVariant } from './variants.ts';
import { composeShader, defineParams } from './wgsl.ts';

/** Invocations per workgroup for one-workgroup-per-row kernels (a power of two for the tree reduction). */
const ROW_WG = 64;

const RMSNORM_PARAMS = defineParams({ rows: 'u32', d4: 'u32', eps: 'f32' });

const RMSNORM_SHADERS = {
  workgroup: composeShader({ label: 'rmsnorm', code: rmsnormCode, params: RMSNORM_PARAMS }),
  rowwise: composeShader({ label: 'rmsnorm_rowwise', code: rmsnormRowwiseCode, params: RMSNORM_PARAMS }),
} as const;

const ARGMAX_SHADER = composeShader({
  label: 'argmax',
  code: argmaxCode,
  params: defineParams({ rows: 'u32', n: 'u32' }),
});

/** HF LlamaRMSNorm over rows of width d. */
export class RmsNormKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: RmsNormVariant,
  ) {}

  static async create(ctx: KernelContext, variant: RmsNormVariant = DEFAULT_VARIANTS.rmsnorm) {
    const shader = RMSNORM_SHADERS[variant.family];
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, { WG: ROW_WG });
    return new RmsNormKernel(ctx, pipeline, variant);
  }

  /** x: [rows, d]; weight: [d]; out: [rows, d]. */
  call(a: {
    x: GPUBuffer;
    weight: GPUBuffer;
    out: GPUBuffer;
    rows: number;
    d: number;
    eps: number;
  }): KernelCall {
    return makeCall(this.ctx, {
      name: 'rmsnorm',
      pipeline: this.pipeline,
      params: RMSNORM_PARAMS,
      values: { rows: a.rows, d4: a.d / 4, eps: a.eps },
      buffers: [a.x, a.weight, a.out],
      // workgroup: one workgroup per row; rowwise: one invocation per row.
      workgroups: grid1d(
        this.variant.family === 'workgroup' ? a.rows : Math.ceil(a.rows / ROW_WG),
        this.ctx.gpu,
      ),
    });
  }
}

/** Greedy sampling: argmax of each row, lowest index on ties. */
export class ArgmaxKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    const pipeline = await ctx.pipelines.get(ARGMAX_SHADER.label, ARGMAX_SHADER.code, { WG: ROW_WG });
    return new ArgmaxKernel(ctx, pipeline);
  }

  /** x: [rows, n] f32; out: u32[rows]. */
  call(a: { x: GPUBuffer; out: GPUBuffer; rows: number; n: number }): KernelCall {
    return makeCall(this.ctx, {
      name: 'argmax',
      pipeline: this.pipeline,
      params: ARGMAX_SHADER.params,
      values: { rows: a.rows, n: a.n },
      buffers: [a.x, a.out],
      workgroups: [a.rows, 1, 1],
    });
  }
}
