import decodeCode from '../../shaders/attention_decode.wgsl?raw';
import decodeDirectCode from '../../shaders/attention_decode_direct.wgsl?raw';
import prefillCode from '../../shaders/attention_prefill.wgsl?raw';
import prefillDirectCode from '../../shaders/attention_prefill_direct.wgsl?raw';
import prefillDirect4Code from '../../shaders/attention_prefill_direct4.wgsl?raw';
import { KernelError } from '../errors.ts';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { ATTENTION_LIMITS } from './limits.ts';
import type { AttentionVariant } from './variants.ts';
import { composeShader, defineParams } from './wgsl.ts';

export { ATTENTION_LIMITS };

/** Params of every prefill attention shader. */
const PREFILL_PARAMS = defineParams({
  /** New queries of the sequence. */
  L: 'u32',
  /** Tokens cached before the first new query. */
  start: 'u32',
  heads: 'u32',
  kvHeads: 'u32',
  pageSize: 'u32',
  /** 1 / sqrt(headDim), folded into the queries. */
  scale: 'f32',
});

/** Params of every decode attention shader. */
const DECODE_PARAMS = defineParams({
  batch: 'u32',
  heads: 'u32',
  kvHeads: 'u32',
  pageSize: 'u32',
  /** Entries per block-table row. */
  tableStride: 'u32',
  /** 1 / sqrt(headDim), folded into the queries. */
  scale: 'f32',
});

const MAX_HD4 = ATTENTION_LIMITS.maxHeadDim / 4;

const PREFILL_SHADERS = {
  tiled: composeShader({
    label: 'attention_prefill',
    code: prefillCode,
    params: PREFILL_PARAMS,
    constants: { MAX_HD4, MAX_BK: ATTENTION_LIMITS.maxPrefillKeys },
  }),
  direct: composeShader({
    label: 'attention_prefill_direct',
    code: prefillDirectCode,
    params: PREFILL_PARAMS,
    constants: { MAX_HD4 },
  }),
  direct4: composeShader({
    label: 'attention_prefill_direct4',
    code: prefillDirect4Code,
    params: PREFILL_PARAMS,
    constants: { MAX_HD4 },
  }),
} as const;

const DECODE_SHADERS = {
  tiled: composeShader({
    label: 'attention_decode',
    code: decodeCode,
    params: DECODE_PARAMS,
    constants: { MAX_HD4 },
  }),
  direct: composeShader({
    label: 'attention_decode_direct',
    code: decodeDirectCode,
    params: DECODE_PARAMS,
    constants: { MAX_HD4 },
  }),
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
    throw new KernelError(
      `attention headDim ${c.headDim} must be a multiple of 4 and ≤ ${ATTENTION_LIMITS.maxHeadDim}`,
    );
  }
  if (c.heads % c.kvHeads !== 0)
    throw new KernelError(`attention heads ${c.heads} not a multiple of kvHeads ${c.kvHeads}`);
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
    const shader = PREFILL_SHADERS[variant.family];
    const common = { HEAD_DIM: config.headDim, PAGED: config.paged ? 1 : 0 };
    const constants =
      variant.family === 'tiled'
        ? {
            ...common,
            BQ: ATTENTION_LIMITS.prefillQueries,
            BK: ATTENTION_LIMITS.prefillKeysFor(config.headDim),
          }
        : { ...common, WG: ATTENTION_LIMITS.directWorkgroup };
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, constants);
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
    return makeCall(this.ctx, {
      name: 'attention_prefill',
      pipeline: this.pipeline,
      params: PREFILL_PARAMS,
      values: {
        L: a.L,
        start: a.start,
        heads: c.heads,
        kvHeads: c.kvHeads,
        pageSize: c.pageSize,
        scale: 1 / Math.sqrt(c.headDim),
      },
      buffers: [a.q, a.pool, a.blockTable, a.out],
      workgroups: [Math.ceil(a.L / this.queriesPerWorkgroup()), c.heads, 1],
    });
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
    if (variant.family === 'direct4')
      throw new KernelError('decode attention has no direct4 family (one query per sequence)');
    const shader = DECODE_SHADERS[variant.family];
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
      HEAD_DIM: config.headDim,
      PAGED: config.paged ? 1 : 0,
      WG: variant.family === 'tiled' ? ATTENTION_LIMITS.decodeWorkgroup : ATTENTION_LIMITS.directWorkgroup,
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
    return makeCall(this.ctx, {
      name: 'attention_decode',
      pipeline: this.pipeline,
      params: DECODE_PARAMS,
      values: {
        batch: a.batch,
        heads: c.heads,
        kvHeads: c.kvHeads,
        pageSize: c.pageSize,
        tableStride: a.tableStride,
        scale: 1 / Math.sqrt(c.headDim),
      },
      buffers: [a.q, a.pool, a.blockTables, a.seqLens, a.out],
      workgroups:
        this.variant.family === 'tiled'
          ? [c.heads, a.batch, 1]
          : [Math.ceil((a.batch * c.heads) / ATTENTION_LIMITS.directWorkgroup), 1, 1],
    });
  }
}
