import kvWriteCode from '../../shaders/kv_write.wgsl?raw';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';

const KV_WRITE_WG = 64;

/** Scatters new K/V rows into a layer's page pool at the slots the allocator chose. */
export class KvWriteKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
  ) {}

  static async create(ctx: KernelContext) {
    return new KvWriteKernel(ctx, await ctx.pipelines.get('kv_write', kvWriteCode, { WG: KV_WRITE_WG }));
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
    return makeCall(
      this.ctx,
      'kv_write',
      this.pipeline,
      [a.rows, a.kvHeads, hd4, a.pageSize],
      [a.k, a.v, a.slots, a.pool],
      grid,
    );
  }
}
