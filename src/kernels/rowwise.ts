import argmaxCode from '../../shaders/argmax.wgsl?raw';
import rmsnormCode from '../../shaders/rmsnorm.wgsl?raw';
import rmsnormRowwiseCode from '../../shaders/rmsnorm_rowwise.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { DEFAULT_VARIANTS, type RmsNormVariant } from './variants.ts';

/** Invocations per workgroup for one-workgroup-per-row kernels (a power of two for the tree reduction). */
const ROW_WG = 64;

/** HF LlamaRMSNorm over rows of width d. */
export class RmsNormKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: RmsNormVariant,
  ) {}

  static async create(ctx: KernelContext, variant: RmsNormVariant = DEFAULT_VARIANTS.rmsnorm) {
    const pipeline =
      variant.family === 'workgroup'
        ? await ctx.pipelines.get('rmsnorm', rmsnormCode, { WG: ROW_WG })
        : await ctx.pipelines.get('rmsnorm_rowwise', rmsnormRowwiseCode, { WG: ROW_WG });
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
    return makeCall(
      this.ctx,
      'rmsnorm',
      this.pipeline,
      [a.rows, a.d / 4, { f32: a.eps }],
      [a.x, a.weight, a.out],
      // workgroup: one workgroup per row; rowwise: one invocation per row.
      grid1d(this.variant.family === 'workgroup' ? a.rows : Math.ceil(a.rows / ROW_WG), this.ctx.gpu),
    );
  }
}

/** Greedy sampling: argmax of each row, lowest index on ties. */
export class ArgmaxKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new ArgmaxKernel(ctx, await ctx.pipelines.get('argmax', argmaxCode, { WG: ROW_WG }));
  }

  /** x: [rows, n] f32; out: u32[rows]. */
  call(a: { x: GPUBuffer; out: GPUBuffer; rows: number; n: number }): KernelCall {
    return makeCall(this.ctx, 'argmax', this.pipeline, [a.rows, a.n], [a.x, a.out], [a.rows, 1, 1]);
  }
}
