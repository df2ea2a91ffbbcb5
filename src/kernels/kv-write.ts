import kvWriteCode from '../../shaders/kv_write.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { composeShader, defineParams } from './wgsl.ts';

/** Invocations per workgroup, one per vec4 written; the same constant sizes the dispatch. */
const KV_WRITE_WG = 64;

const KV_WRITE_SHADER = composeShader({
  label: 'kv_write',
  code: kvWriteCode,
  params: defineParams({ rows: 'u32', kvHeads: 'u32', hd4: 'u32', pageSize: 'u32' }),
});

/** Scatters new K/V rows into a layer's page pool at the slots the allocator chose. */
export class KvWriteKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    const { label, code } = KV_WRITE_SHADER;
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
    const grid = grid1d(Math.ceil((a.rows * a.kvHeads * hd4) / KV_WRITE_WG), this.ctx.gpu);
    return makeCall(this.ctx, {
      name: 'kv_write',
      pipeline: this.pipeline,
      params: KV_WRITE_SHADER.params,
      values: { rows: a.rows, kvHeads: a.kvHeads, hd4, pageSize: a.pageSize },
      buffers: [a.k, a.v, a.slots, a.pool],
      workgroups: grid,
    });
  }
}
