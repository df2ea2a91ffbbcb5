import embeddingCode from '../../shaders/embedding.wgsl?raw';
import addCode from '../../shaders/residual_add.wgsl?raw';
import ropeCode from '../../shaders/rope.wgsl?raw';
import swigluCode from '../../shaders/swiglu.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';

/** Invocations per workgroup for the one-thread-per-element kernels; the same constant sizes the dispatch. */
const ELEMENTWISE_WG = 64;

function elementwise(ctx: KernelContext, name: string, code: string) {
  return ctx.pipelines.get(name, code, { WG: ELEMENTWISE_WG });
}

/** out[l, :] = table[tokens[l], :]. */
export class EmbeddingKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new EmbeddingKernel(ctx, await elementwise(ctx, 'embedding', embeddingCode));
  }

  /** tokens: u32[rows]; table: [vocab, d]; out: [rows, d]. */
  call(a: { tokens: GPUBuffer; table: GPUBuffer; out: GPUBuffer; rows: number; d: number; vocab: number }) {
    const d4 = a.d / 4;
    const grid = grid1d(Math.ceil((a.rows * d4) / ELEMENTWISE_WG), this.ctx.gpu);
    return makeCall(
      this.ctx,
      'embedding',
      this.pipeline,
      [a.rows, d4, a.vocab],
      [a.tokens, a.table, a.out],
      grid,
    );
  }
}

/** Rotate-half RoPE in place on x[rows, heads, headDim]. */
export class RopeKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new RopeKernel(ctx, await elementwise(ctx, 'rope', ropeCode));
  }

  call(a: {
    x: GPUBuffer;
    positions: GPUBuffer;
    cos: GPUBuffer;
    sin: GPUBuffer;
    rows: number;
    heads: number;
    headDim: number;
  }): KernelCall {
    const half = a.headDim / 2;
    const grid = grid1d(Math.ceil((a.rows * a.heads * half) / ELEMENTWISE_WG), this.ctx.gpu);
    return makeCall(
      this.ctx,
      'rope',
      this.pipeline,
      [a.rows, a.heads, half],
      [a.positions, a.cos, a.sin, a.x],
      grid,
    );
  }
}

/** x += y over n elements (n a multiple of 4). */
export class ResidualAddKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new ResidualAddKernel(ctx, await elementwise(ctx, 'residual_add', addCode));
  }

  call(a: { x: GPUBuffer; y: GPUBuffer; n: number }): KernelCall {
    const n4 = a.n / 4;
    const grid = grid1d(Math.ceil(n4 / ELEMENTWISE_WG), this.ctx.gpu);
    return makeCall(this.ctx, 'residual_add', this.pipeline, [n4], [a.y, a.x], grid);
  }
}

/** out = silu(gate) * up over n elements (n a multiple of 4). */
export class SwigluKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new SwigluKernel(ctx, await elementwise(ctx, 'swiglu', swigluCode));
  }

  call(a: { gate: GPUBuffer; up: GPUBuffer; out: GPUBuffer; n: number }): KernelCall {
    const n4 = a.n / 4;
    const grid = grid1d(Math.ceil(n4 / ELEMENTWISE_WG), this.ctx.gpu);
    return makeCall(this.ctx, 'swiglu', this.pipeline, [n4], [a.gate, a.up, a.out], grid);
  }
}
