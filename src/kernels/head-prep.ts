import headPrepCode from '../../shaders/head_prep.wgsl?raw';
import { KernelError } from '../errors.ts';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { composedOnce, composeShader, defineParams, type WgslLibraryName } from './wgsl.ts';

/** Invocations per workgroup, one per (token, head) row; the same constant sizes the dispatch. */
const HEAD_PREP_WG = 64;

/** Bindings of the optional buffers, after params (0) and x (1) in head_prep, after the pool (7) in rope_kv_write. */
export const QKV_PREP_BINDINGS = {
  headPrep: { BIAS_BINDING: 2, NORM_BINDING: 3 },
  ropeKvWrite: { BIAS_BINDING: 8, NORM_BINDING: 9 },
} as const;

/** What an architecture does to q, k and v between the projection and RoPE (see archFeatures). */
export interface QkvPrep {
  /** Add the projection's bias (qwen2). */
  bias: boolean;
  /** RMS-normalize each q and k head with its weight (qwen3). */
  norm: boolean;
}

/** The bias and norm buffers a preparation binds, checked present exactly when it needs them. */
export function qkvPrepBuffers(
  name: string,
  prep: QkvPrep,
  a: { bias?: GPUBuffer; norm?: GPUBuffer },
): [GPUBuffer | undefined, GPUBuffer | undefined] {
  if (prep.bias !== Boolean(a.bias))
    throw new KernelError(`${name}: ${prep.bias ? 'needs a bias buffer' : 'was built without biases'}`);
  if (prep.norm !== Boolean(a.norm))
    throw new KernelError(
      `${name}: ${prep.norm ? 'needs the head-norm weights' : 'was built without head norms'}`,
    );
  return [a.bias, a.norm];
}

/** The snippets filling the `qkv_bias` and `head_norm` slots for a preparation. */
export function qkvPrepSlots(prep: QkvPrep): { qkv_bias: WgslLibraryName; head_norm: WgslLibraryName } {
  return {
    qkv_bias: prep.bias ? 'qkv_bias_add' : 'qkv_bias_none',
    head_norm: prep.norm ? 'head_norm_rms' : 'head_norm_none',
  };
}

const HEAD_PREP_PARAMS = defineParams({
  rows: 'u32',
  heads: 'u32',
  headDim: 'u32',
  normAt: 'u32',
  eps: 'f32',
});

const HEAD_PREP_SHADER = composedOnce(
  (prep: QkvPrep) => `${prep.bias}:${prep.norm}`,
  (prep: QkvPrep) =>
    composeShader({
      label: 'head_prep',
      code: headPrepCode,
      params: HEAD_PREP_PARAMS,
      constants: QKV_PREP_BINDINGS.headPrep,
      slots: qkvPrepSlots(prep),
    }),
);

/**
 * The unfused graph's preparation of one projection's heads, in place (head_prep.wgsl): its bias
 * added, then, for q and k of a qwen3, each head RMS-normalized. The fused graph does the same
 * inside its RoPE + KV write; this kernel is that fusion's reference.
 */
export class HeadPrepKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly prep: QkvPrep,
  ) {}

  static async create(ctx: KernelContext, prep: QkvPrep): Promise<HeadPrepKernel> {
    const { label, code } = HEAD_PREP_SHADER(prep);
    return new HeadPrepKernel(ctx, await ctx.pipelines.get(label, code, { WG: HEAD_PREP_WG }), prep);
  }

  /**
   * x: [rows, heads, headDim], prepared in place; bias: [heads · headDim] (with `prep.bias`);
   * norm: [2, headDim], q's weights then k's, and `normAt` 0 for q, headDim for k (with `prep.norm`).
   */
  call(a: {
    x: GPUBuffer;
    rows: number;
    heads: number;
    headDim: number;
    bias?: GPUBuffer;
    norm?: GPUBuffer;
    normAt?: number;
    eps?: number;
  }): KernelCall {
    return makeCall(this.ctx, {
      name: 'head_prep',
      pipeline: this.pipeline,
      params: HEAD_PREP_PARAMS,
      values: { rows: a.rows, heads: a.heads, headDim: a.headDim, normAt: a.normAt ?? 0, eps: a.eps ?? 0 },
      buffers: [a.x, ...qkvPrepBuffers('head prep', this.prep, a)],
      workgroups: grid1d(Math.ceil((a.rows * a.heads) / HEAD_PREP_WG), this.ctx.gpu),
    });
  }
}
