import kvWriteCode from '../../shaders/kv_write.wgsl?raw';
import ropeKvCode from '../../shaders/rope_kv_write.wgsl?raw';
import { KernelError } from '../errors.ts';
import type { KvDtype } from '../kv/format.ts';
import { kvSlot } from './attention.ts';
import { QKV_PREP_BINDINGS, type QkvPrep, qkvPrepBuffers, qkvPrepSlots } from './head-prep.ts';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { composedOnce, composeShader, defineParams } from './wgsl.ts';

/** Invocations per workgroup, one per row written; the same constant sizes the dispatch. */
const KV_WRITE_WG = 64;

const KV_WRITE_PARAMS = defineParams({ rows: 'u32', kvHeads: 'u32', hd4: 'u32', pageSize: 'u32' });

const KV_WRITE_SHADER = composedOnce(
  (dtype: KvDtype) => dtype,
  (dtype: KvDtype) =>
    composeShader({ label: 'kv_write', code: kvWriteCode, params: KV_WRITE_PARAMS, slots: kvSlot(dtype) }),
);

/** Scatters new K/V rows into a layer's page pool at the slots the allocator chose, in the pool's KV type. */
export class KvWriteKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext, dtype: KvDtype = 'f32') {
    const { label, code } = KV_WRITE_SHADER(dtype);
    return new KvWriteKernel(ctx, await ctx.pipelines.get(label, code, { WG: KV_WRITE_WG }));
  }

  /** k, v: [rows, kvHeads, headDim]; slots: u32[rows] = page·pageSize + offset; pool: the layer's pages. */
  call(a: {
    k: GPUBuffer;
    v: GPUBuffer;
    slots: GPUBuffer;
    pool: GPUBuffer;
    rows: number;
    kvHeads: number;
    headDim: number;
    pageSize: number;
  }): KernelCall {
    const hd4 = a.headDim / 4;
    // One invocation per (token, KV head, K or V) row.
    const grid = grid1d(Math.ceil((a.rows * a.kvHeads * 2) / KV_WRITE_WG), this.ctx.gpu);
    return makeCall(this.ctx, {
      name: 'kv_write',
      pipeline: this.pipeline,
      params: KV_WRITE_PARAMS,
      values: { rows: a.rows, kvHeads: a.kvHeads, hd4, pageSize: a.pageSize },
      buffers: [a.k, a.v, a.slots, a.pool],
      workgroups: grid,
    });
  }
}

const ROPE_KV_PARAMS = defineParams({
  rows: 'u32',
  heads: 'u32',
  kvHeads: 'u32',
  half: 'u32',
  pageSize: 'u32',
  eps: 'f32',
});

/** A llama's preparation: nothing between the projection and RoPE. */
const NO_PREP: QkvPrep = { bias: false, norm: false };

const ROPE_KV_SHADER = composedOnce(
  (dtype: KvDtype, prep: QkvPrep) => `${dtype}:${prep.bias}:${prep.norm}`,
  (dtype: KvDtype, prep: QkvPrep) =>
    composeShader({
      label: 'rope_kv_write',
      code: ropeKvCode,
      params: ROPE_KV_PARAMS,
      constants: QKV_PREP_BINDINGS.ropeKvWrite,
      slots: { ...kvSlot(dtype), ...qkvPrepSlots(prep) },
    }),
);

/**
 * The fused graph's RoPE + KV write (rope_kv_write.wgsl): from the fused q/k/v projection's output
 * qkv [rows, heads + 2·kvHeads, headDim], the rotated queries into q and the rotated keys and the
 * values into the layer's page pool at each token's slot. One dispatch instead of three.
 */
export class RopeKvWriteKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly prep: QkvPrep,
  ) {}

  /** `prep`: the architecture's bias and head norm, applied to each head before RoPE (head-prep.ts). */
  static async create(ctx: KernelContext, dtype: KvDtype = 'f32', prep: QkvPrep = NO_PREP) {
    const { label, code } = ROPE_KV_SHADER(dtype, prep);
    return new RopeKvWriteKernel(ctx, await ctx.pipelines.get(label, code, { WG: KV_WRITE_WG }), prep);
  }

  call(a: {
    qkv: GPUBuffer;
    positions: GPUBuffer;
    cos: GPUBuffer;
    sin: GPUBuffer;
    slots: GPUBuffer;
    q: GPUBuffer;
    pool: GPUBuffer;
    rows: number;
    heads: number;
    kvHeads: number;
    headDim: number;
    pageSize: number;
    /** [q; k; v] biases, [heads + 2 kvHeads, headDim] (with prep.bias). */
    bias?: GPUBuffer;
    /** [2, headDim]: q's then k's head-norm weights (with prep.norm), and the norm's eps. */
    norm?: GPUBuffer;
    eps?: number;
  }): KernelCall {
    if (a.headDim % 4 !== 0)
      throw new KernelError(`rope+kv write: headDim ${a.headDim} is not a multiple of 4`);
    const half = a.headDim / 2;
    const units = a.heads + 2 * a.kvHeads;
    // One invocation per (token, q, k or v head) row.
    const grid = grid1d(Math.ceil((a.rows * units) / KV_WRITE_WG), this.ctx.gpu);
    return makeCall(this.ctx, {
      name: 'rope_kv_write',
      pipeline: this.pipeline,
      params: ROPE_KV_PARAMS,
      values: {
        rows: a.rows,
        heads: a.heads,
        kvHeads: a.kvHeads,
        half,
        pageSize: a.pageSize,
        eps: a.eps ?? 0,
      },
      buffers: [
        a.qkv,
        a.positions,
        a.cos,
        a.sin,
        a.slots,
        a.q,
        a.pool,
        ...qkvPrepBuffers('rope+kv write', this.prep, a),
      ],
      workgroups: grid,
    });
  }
}
