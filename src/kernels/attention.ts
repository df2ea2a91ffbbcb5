import decodeCode from '../../shaders/attention_decode.wgsl?raw';
import decodeDirectCode from '../../shaders/attention_decode_direct.wgsl?raw';
import prefillCode from '../../shaders/attention_prefill.wgsl?raw';
import prefillDirectCode from '../../shaders/attention_prefill_direct.wgsl?raw';
import prefillDirect4Code from '../../shaders/attention_prefill_direct4.wgsl?raw';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import type { AttentionVariant } from './variants.ts';

/** Sizes baked into the attention shaders. */
export const ATTENTION_LIMITS = {
  /** Largest head dim (4 · MAX_HD4 in both shaders). */
  maxHeadDim: 256,
  /** Queries per prefill workgroup. */
  prefillQueries: 32,
  /** Keys per prefill tile: two tiles of BK·headDim f32 must fit in 16 KiB of workgroup memory. */
  prefillKeysFor(headDim: number) {
    return Math.max(1, Math.min(64, Math.floor(16384 / (2 * 4 * headDim))));
  },
  /** Invocations (keys per tile) in a decode workgroup; must be ≥ headDim / 4. */
  decodeWorkgroup: 64,
  /** Invocations per workgroup of the direct (one invocation per query and head) kernels. */
  directWorkgroup: 32,
} as const;

export interface AttentionConfig {
  heads: number;
  kvHeads: number;
  headDim: number;
  /** Tokens per page; for the contiguous cache, maxSeqLen (one page per sequence). */
  pageSize: number;
  /** false selects the contiguous-cache variant that skips the block-table lookup (the A/B baseline). */
  paged: boolean;
}

function checkConfig(c: AttentionConfig) {
  if (c.headDim % 4 !== 0 || c.headDim > ATTENTION_LIMITS.maxHeadDim) {
    throw new Error(
      `attention headDim ${c.headDim} must be a multiple of 4 and ≤ ${ATTENTION_LIMITS.maxHeadDim}`,
    );
  }
  if (c.heads % c.kvHeads !== 0)
    throw new Error(`attention heads ${c.heads} not a multiple of kvHeads ${c.kvHeads}`);
}

/** Causal paged flash attention over one sequence's new tokens and its cached prefix. */
export class PagedAttentionPrefillKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly config: AttentionConfig,
    readonly variant: AttentionVariant,
  ) {}

  static async create(
    ctx: KernelContext,
    config: AttentionConfig,
    variant: AttentionVariant = { family: 'tiled' },
  ) {
    checkConfig(config);
    const common = { HEAD_DIM: config.headDim, PAGED: config.paged ? 1 : 0 };
    const direct = { ...common, WG: ATTENTION_LIMITS.directWorkgroup };
    const pipeline =
      variant.family === 'tiled'
        ? await ctx.pipelines.get('attention_prefill', prefillCode, {
            ...common,
            BQ: ATTENTION_LIMITS.prefillQueries,
            BK: ATTENTION_LIMITS.prefillKeysFor(config.headDim),
          })
        : variant.family === 'direct'
          ? await ctx.pipelines.get('attention_prefill_direct', prefillDirectCode, direct)
          : await ctx.pipelines.get('attention_prefill_direct4', prefillDirect4Code, direct);
    return new PagedAttentionPrefillKernel(ctx, pipeline, config, variant);
  }

  /** Queries one workgroup covers: BQ (tiled), one per invocation (direct), four per invocation (direct4). */
  private queriesPerWorkgroup(): number {
    const family = this.variant.family;
    if (family === 'tiled') return ATTENTION_LIMITS.prefillQueries;
    return ATTENTION_LIMITS.directWorkgroup * (family === 'direct4' ? 4 : 1);
  }

  /** q, out: [L, heads, headDim]; blockTable: u32 pages of this sequence; start: tokens cached before q. */
  call(a: {
    q: GPUBuffer;
    pool: GPUBuffer;
    blockTable: GPUBuffer;
    out: GPUBuffer;
    L: number;
    start: number;
  }) {
    const c = this.config;
    return makeCall(
      this.ctx,
      'attention_prefill',
      this.pipeline,
      [a.L, a.start, c.heads, c.kvHeads, c.pageSize, { f32: 1 / Math.sqrt(c.headDim) }],
      [a.q, a.pool, a.blockTable, a.out],
      [Math.ceil(a.L / this.queriesPerWorkgroup()), c.heads, 1],
    );
  }
}

/** Batched paged attention for decode: one query per sequence, each with its own table and length. */
export class PagedAttentionDecodeKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly config: AttentionConfig,
    readonly variant: AttentionVariant,
  ) {}

  static async create(
    ctx: KernelContext,
    config: AttentionConfig,
    variant: AttentionVariant = { family: 'tiled' },
  ) {
    checkConfig(config);
    const common = { HEAD_DIM: config.headDim, PAGED: config.paged ? 1 : 0 };
    const pipeline =
      variant.family === 'tiled'
        ? await ctx.pipelines.get('attention_decode', decodeCode, {
            ...common,
            WG: ATTENTION_LIMITS.decodeWorkgroup,
          })
        : await ctx.pipelines.get('attention_decode_direct', decodeDirectCode, {
            ...common,
            WG: ATTENTION_LIMITS.directWorkgroup,
          });
    return new PagedAttentionDecodeKernel(ctx, pipeline, config, variant);
  }

  /**
   * q, out: [batch, heads, headDim]; blockTables: u32[batch, tableStride]; seqLens: u32[batch], each
   * the context length including the token being decoded (its K/V already written).
   */
  call(a: {
    q: GPUBuffer;
    pool: GPUBuffer;
    blockTables: GPUBuffer;
    seqLens: GPUBuffer;
    out: GPUBuffer;
    batch: number;
    tableStride: number;
  }): KernelCall {
    const c = this.config;
    return makeCall(
      this.ctx,
      'attention_decode',
      this.pipeline,
      [a.batch, c.heads, c.kvHeads, c.pageSize, a.tableStride, { f32: 1 / Math.sqrt(c.headDim) }],
      [a.q, a.pool, a.blockTables, a.seqLens, a.out],
      this.variant.family === 'tiled'
        ? [c.heads, a.batch, 1]
        : [Math.ceil((a.batch * c.heads) / ATTENTION_LIMITS.directWorkgroup), 1, 1],
    );
  }
}
