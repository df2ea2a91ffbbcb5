import embeddingCode from '../../shaders/embedding.wgsl?raw';
import addCode from '../../shaders/residual_add.wgsl?raw';
import ropeCode from '../../shaders/rope.wgsl?raw';
import swigluCode from '../../shaders/swiglu.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { composeShader, defineParams, type ParamFields, type Shader } from './wgsl.ts';

/** Invocations per workgroup for the one-thread-per-element kernels; the same constant sizes the dispatch. */
const ELEMENTWISE_WG = 64;

/** Params of the kernels over n4 = n / 4 vec4s (residual add, SwiGLU). */
const N4_PARAMS = defineParams({ n4: 'u32' });

const SHADERS = {
  embedding: composeShader({
    label: 'embedding',
    code: embeddingCode,
    params: defineParams({ rows: 'u32', d4: 'u32', vocab: 'u32' }),
  }),
  rope: composeShader({
    label: 'rope',
    code: ropeCode,
    params: defineParams({ rows: 'u32', heads: 'u32', half: 'u32' }),
  }),
  residualAdd: composeShader({ label: 'residual_add', code: addCode, params: N4_PARAMS }),
  swiglu: composeShader({ label: 'swiglu', code: swigluCode, params: N4_PARAMS }),
} as const;

function elementwise<F extends ParamFields>(ctx: KernelContext, shader: Shader<F>) {
  return ctx.pipelines.get(shader.label, shader.code, { WG: ELEMENTWISE_WG });
}

/** out[l, :] = table[tokens[l], :]. */
export class EmbeddingKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new EmbeddingKernel(ctx, await elementwise(ctx, SHADERS.embedding));
  }

  /** tokens: u32[rows]; table: [vocab, d]; out: [rows, d]. */
  call(a: { tokens: GPUBuffer; table: GPUBuffer; out: GPUBuffer; rows: number; d: number; vocab: number }) {
    const d4 = a.d / 4;
    const grid = grid1d(Math.ceil((a.rows * d4) / ELEMENTWISE_WG), this.ctx.gpu);
    return makeCall(this.ctx, {
      name: 'embedding',
      pipeline: this.pipeline,
      params: SHADERS.embedding.params,
      values: { rows: a.rows, d4, vocab: a.vocab },
      buffers: [a.tokens, a.table, a.out],
      workgroups: grid,
    });
  }
}

/** Rotate-half RoPE in place on x[rows, heads, headDim]. */
export class RopeKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new RopeKernel(ctx, await elementwise(ctx, SHADERS.rope));
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
    return makeCall(this.ctx, {
      name: 'rope',
      pipeline: this.pipeline,
      params: SHADERS.rope.params,
      values: { rows: a.rows, heads: a.heads, half },
      buffers: [a.positions, a.cos, a.sin, a.x],
      workgroups: grid,
    });
  }
}

/** x += y over n elements (n a multiple of 4). */
export class ResidualAddKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new ResidualAddKernel(ctx, await elementwise(ctx, SHADERS.residualAdd));
  }

  call(a: { x: GPUBuffer; y: GPUBuffer; n: number }): KernelCall {
    const n4 = a.n / 4;
    const grid = grid1d(Math.ceil(n4 / ELEMENTWISE_WG), this.ctx.gpu);
    return makeCall(this.ctx, {
      name: 'residual_add',
      pipeline: this.pipeline,
      params: N4_PARAMS,
      values: { n4 },
      buffers: [a.y, a.x],
      workgroups: grid,
    });
  }
}

/** out = silu(gate) * up over n elements (n a multiple of 4). */
export class SwigluKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new SwigluKernel(ctx, await elementwise(ctx, SHADERS.swiglu));
  }

  call(a: { gate: GPUBuffer; up: GPUBuffer; out: GPUBuffer; n: number }): KernelCall {
    const n4 = a.n / 4;
    const grid = grid1d(Math.ceil(n4 / ELEMENTWISE_WG), this.ctx.gpu);
    return makeCall(this.ctx, {
      name: 'swiglu',
      pipeline: this.pipeline,
      params: N4_PARAMS,
      values: { n4 },
      buffers: [a.gate, a.up, a.out],
      workgroups: grid,
    });
  }
}
