import decodeCode from '../../shaders/attention_decode.wgsl?raw';
import decodeDirectCode from '../../shaders/attention_decode_direct.wgsl?raw';
import decodeMergeCode from '../../shaders/attention_decode_merge.wgsl?raw';
import decodeSplitCode from '../../shaders/attention_decode_split.wgsl?raw';
import prefillCode from '../../shaders/attention_prefill.wgsl?raw';
import prefillDirectCode from '../../shaders/attention_prefill_direct.wgsl?raw';
import prefillRegisterCode from '../../shaders/attention_prefill_register.wgsl?raw';
import { KernelError } from '../errors.ts';
import { alignedSize } from '../gpu/buffers.ts';
import type { KvDtype } from '../kv/format.ts';
import { BYTES } from '../weight-format.ts';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import {
  ATTENTION_LIMITS,
  type AttentionGrouping,
  attentionGrouping,
  type SplitGeometry,
  splitDecodeGeometry,
} from './limits.ts';
import type { AttentionVariant } from './variants.ts';
import { composedOnce, composeShader, defineParams } from './wgsl.ts';

export {
  ATTENTION_LIMITS,
  attentionGrouping,
  attentionKvReadsPerRow,
  splitDecodeGeometry,
} from './limits.ts';

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
  /** Sliding window in tokens (0: full causal attention). */
  window: 'u32',
});

/** Byte offset of `start` in PREFILL_PARAMS (every field is 4 bytes, in order): a replayed prefill pass rewrites it. */
export const PREFILL_START_OFFSET = 4 * Object.keys(PREFILL_PARAMS.fields).indexOf('start');

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
  window: 'u32',
});

/** Params of the split-K decode's first kernel: DECODE_PARAMS and the slices its grid covers. */
const SPLIT_PARAMS = defineParams({
  batch: 'u32',
  heads: 'u32',
  kvHeads: 'u32',
  pageSize: 'u32',
  tableStride: 'u32',
  /** Tokens per slice (the geometry's chunk, splitDecodeGeometry). */
  sliceTokens: 'u32',
  /** Slices per sequence and query head in the grid and in the partials' layout. */
  slices: 'u32',
  scale: 'f32',
  window: 'u32',
});

/** Params of the split-K merge. */
const MERGE_PARAMS = defineParams({
  batch: 'u32',
  heads: 'u32',
  sliceTokens: 'u32',
  slices: 'u32',
  window: 'u32',
});

const MAX_GROUP = ATTENTION_LIMITS.maxGroup;
const MAX_SLOTS = ATTENTION_LIMITS.directSlotVec4s;

/** The `kv` slot of every shader that reads or writes the pool: the snippet of its KV type. */
export function kvSlot(dtype: KvDtype) {
  return { kv: `kv_${dtype}` } as const;
}

const PREFILL_TILED = composedOnce(
  (dtype: KvDtype) => dtype,
  (dtype: KvDtype) =>
    composeShader({
      label: 'attention_prefill',
      code: prefillCode,
      params: PREFILL_PARAMS,
      constants: { MAX_HD4: ATTENTION_LIMITS.maxHeadDim / 4, MAX_BK: ATTENTION_LIMITS.maxPrefillKeys },
      slots: kvSlot(dtype),
    }),
);

/** Both barrier-free prefill families: 'direct' is QB = 1, 'direct4' QB = 4. */
const PREFILL_DIRECT = composedOnce(
  (dtype: KvDtype) => dtype,
  (dtype: KvDtype) =>
    composeShader({
      label: 'attention_prefill_direct',
      code: prefillDirectCode,
      params: PREFILL_PARAMS,
      constants: { MAX_SLOTS, MAX_BLOCK: ATTENTION_LIMITS.direct4Queries * MAX_GROUP },
      slots: kvSlot(dtype),
    }),
);

/** The register-blocked prefill family: registerRows (query, head) rows × KEYS keys per invocation. */
const PREFILL_REGISTER = composedOnce(
  (dtype: KvDtype) => dtype,
  (dtype: KvDtype) =>
    composeShader({
      label: 'attention_prefill_register',
      code: prefillRegisterCode,
      params: PREFILL_PARAMS,
      constants: { KEYS: ATTENTION_LIMITS.registerKeys },
      slots: kvSlot(dtype),
    }),
);

const DECODE_TILED = composedOnce(
  (dtype: KvDtype) => dtype,
  (dtype: KvDtype) =>
    composeShader({
      label: 'attention_decode',
      code: decodeCode,
      params: DECODE_PARAMS,
      constants: { MAX_GROUP },
      slots: kvSlot(dtype),
    }),
);

const DECODE_DIRECT = composedOnce(
  (dtype: KvDtype) => dtype,
  (dtype: KvDtype) =>
    composeShader({
      label: 'attention_decode_direct',
      code: decodeDirectCode,
      params: DECODE_PARAMS,
      constants: { MAX_GROUP, MAX_SLOTS },
      slots: kvSlot(dtype),
    }),
);

const DECODE_SPLIT = composedOnce(
  (dtype: KvDtype) => dtype,
  (dtype: KvDtype) =>
    composeShader({
      label: 'attention_decode_split',
      code: decodeSplitCode,
      params: SPLIT_PARAMS,
      constants: { MAX_GROUP, MAX_SLOTS },
      slots: kvSlot(dtype),
    }),
);

const DECODE_MERGE = composeShader({
  label: 'attention_decode_merge',
  code: decodeMergeCode,
  params: MERGE_PARAMS,
});

export interface AttentionConfig {
  heads: number;
  kvHeads: number;
  headDim: number;
  /** Tokens per page; for the contiguous cache, maxSeqLen (one page per sequence). */
  pageSize: number;
  /** false selects the contiguous-cache variant that skips the block-table lookup (the A/B baseline). */
  paged: boolean;
  /** How the pool stores K and V (src/kv/format.ts); f32 when absent. */
  kvDtype?: KvDtype;
  /** Sliding window in tokens (a query at p sees p − window + 1 … p); absent or 0: full attention. */
  window?: number;
}

const dtypeOf = (c: AttentionConfig): KvDtype => c.kvDtype ?? 'f32';
const windowOf = (c: AttentionConfig): number => c.window ?? 0;

function checkConfig(c: AttentionConfig) {
  if (c.headDim % 4 !== 0 || c.headDim > ATTENTION_LIMITS.maxHeadDim) {
    throw new KernelError(
      `attention headDim ${c.headDim} must be a multiple of 4 and ≤ ${ATTENTION_LIMITS.maxHeadDim}`,
    );
  }
  if (c.heads % c.kvHeads !== 0)
    throw new KernelError(`attention heads ${c.heads} not a multiple of kvHeads ${c.kvHeads}`);
  const w = windowOf(c);
  if (!Number.isInteger(w) || w < 0)
    throw new KernelError(`attention window ${w} is not a whole number of tokens`);
}

function checkWorkgroup(wg: number) {
  if (!Number.isInteger(wg) || wg < 1 || wg > ATTENTION_LIMITS.maxWorkgroupInvocations)
    throw new KernelError(
      `attention workgroup of ${wg} invocations (1 … ${ATTENTION_LIMITS.maxWorkgroupInvocations})`,
    );
}

/**
 * Causal paged flash attention over one sequence's new tokens and its cached prefix. Every family
 * serves the query heads that share a KV head together, so each K/V row is loaded once per group
 * (see attentionKvReadsPerRow), not once per query head.
 */
export class PagedAttentionPrefillKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly config: AttentionConfig,
    readonly variant: AttentionVariant,
    private readonly grouping: AttentionGrouping,
  ) {}

  static async create(
    ctx: KernelContext,
    config: AttentionConfig,
    variant: AttentionVariant = { family: 'tiled' },
  ) {
    checkConfig(config);
    const grouping = attentionGrouping('prefill', variant, config);
    const common = { HEAD_DIM: config.headDim, PAGED: config.paged ? 1 : 0 };
    let pipeline: GPUComputePipeline;
    if (variant.family === 'register') {
      // A block of keys is consecutive rows of one page: the page size must be a multiple of it.
      if (config.paged && config.pageSize % ATTENTION_LIMITS.registerKeys !== 0) {
        throw new KernelError(
          `register prefill attention needs pages of a multiple of ${ATTENTION_LIMITS.registerKeys} tokens, not ${config.pageSize}`,
        );
      }
      checkWorkgroup(variant.wg);
      const shader = PREFILL_REGISTER(dtypeOf(config));
      pipeline = await ctx.pipelines.get(shader.label, shader.code, { ...common, WG: variant.wg });
    } else {
      const grouped = { ...common, GROUP: grouping.headsPerPass };
      const shader = (variant.family === 'tiled' ? PREFILL_TILED : PREFILL_DIRECT)(dtypeOf(config));
      const constants =
        variant.family === 'tiled'
          ? { ...grouped, BQ: grouping.queriesPerBlock, BK: ATTENTION_LIMITS.prefillKeysFor(config.headDim) }
          : { ...grouped, QB: grouping.queriesPerBlock, WG: ATTENTION_LIMITS.directWorkgroup };
      pipeline = await ctx.pipelines.get(shader.label, shader.code, constants);
    }
    return new PagedAttentionPrefillKernel(ctx, pipeline, config, variant, grouping);
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
    const g = this.grouping;
    const v = this.variant;
    // A workgroup covers BQ queries (tiled) or WG invocations of QB queries each (direct), for one
    // KV head's chunk of heads; register: wg invocations of registerRows (query, head) pairs of
    // one KV head's group.
    const workgroups: [number, number, number] =
      v.family === 'register'
        ? [Math.ceil((a.L * (c.heads / c.kvHeads)) / (ATTENTION_LIMITS.registerRows * v.wg)), c.kvHeads, 1]
        : [
            Math.ceil(
              a.L /
                (v.family === 'tiled'
                  ? g.queriesPerBlock
                  : ATTENTION_LIMITS.directWorkgroup * g.queriesPerBlock),
            ),
            c.kvHeads * g.passes,
            1,
          ];
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
        window: windowOf(c),
      },
      buffers: [a.q, a.pool, a.blockTable, a.out],
      workgroups,
    });
  }
}

/**
 * Batched paged attention for decode: one query per sequence, each with its own table and length.
 * The query heads that share a KV head are served together (see attentionKvReadsPerRow). The split
 * family is two dispatches (slices, then their merge), so `call` returns the list to record.
 */
export class PagedAttentionDecodeKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly config: AttentionConfig,
    readonly variant: AttentionVariant,
    private readonly grouping: AttentionGrouping,
    /** The split family's merge pipeline (`pipeline` is then its first kernel). */
    private readonly merge?: GPUComputePipeline,
  ) {}

  static async create(
    ctx: KernelContext,
    config: AttentionConfig,
    variant: AttentionVariant = { family: 'tiled' },
  ) {
    checkConfig(config);
    const grouping = attentionGrouping('decode', variant, config); // throws for direct4
    const common = { HEAD_DIM: config.headDim, PAGED: config.paged ? 1 : 0, GROUP: grouping.headsPerPass };
    if (variant.family === 'split') {
      const split = DECODE_SPLIT(dtypeOf(config));
      const [slices, merge] = await Promise.all([
        ctx.pipelines.get(split.label, split.code, {
          ...common,
          WG: ATTENTION_LIMITS.splitWorkgroup,
        }),
        ctx.pipelines.get(DECODE_MERGE.label, DECODE_MERGE.code, {
          HEAD_DIM: config.headDim,
          WG: ATTENTION_LIMITS.mergeWorkgroup,
        }),
      ]);
      return new PagedAttentionDecodeKernel(ctx, slices, config, variant, grouping, merge);
    }
    const shader = (variant.family === 'tiled' ? DECODE_TILED : DECODE_DIRECT)(dtypeOf(config));
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
      ...common,
      WG: variant.family === 'tiled' ? ATTENTION_LIMITS.decodeWorkgroup : ATTENTION_LIMITS.directWorkgroup,
    });
    return new PagedAttentionDecodeKernel(ctx, pipeline, config, variant, grouping);
  }

  /** How the split family cuts contexts of up to tableStride · pageSize tokens (undefined for the others). */
  splitGeometry(tableStride: number): SplitGeometry | undefined {
    if (this.variant.family !== 'split') return undefined;
    return splitDecodeGeometry(this.variant.chunk, tableStride * this.config.pageSize);
  }

  /**
   * q, out: [batch, heads, headDim]; blockTables: u32[batch, tableStride]; seqLens: u32[batch], each
   * the context length including the token being decoded (its K/V already written). A sequence may
   * grow to tableStride · pageSize tokens between replays of the calls (the split family's grid
   * covers that many; its partials are scratch buffers the first call owns).
   */
  call(a: {
    q: GPUBuffer;
    pool: GPUBuffer;
    blockTables: GPUBuffer;
    seqLens: GPUBuffer;
    out: GPUBuffer;
    batch: number;
    tableStride: number;
  }): KernelCall[] {
    const c = this.config;
    const groups = c.kvHeads * this.grouping.passes;
    const scale = 1 / Math.sqrt(c.headDim);
    const geometry = this.splitGeometry(a.tableStride);
    if (geometry) return this.splitCalls(a, geometry, groups, scale);
    const call = makeCall(this.ctx, {
      name: 'attention_decode',
      pipeline: this.pipeline,
      params: DECODE_PARAMS,
      values: {
        batch: a.batch,
        heads: c.heads,
        kvHeads: c.kvHeads,
        pageSize: c.pageSize,
        tableStride: a.tableStride,
        scale,
        window: windowOf(c),
      },
      buffers: [a.q, a.pool, a.blockTables, a.seqLens, a.out],
      // tiled: a workgroup per (KV head chunk, sequence); direct: an invocation per the same pair.
      workgroups:
        this.variant.family === 'tiled'
          ? [groups, a.batch, 1]
          : [Math.ceil((a.batch * groups) / ATTENTION_LIMITS.directWorkgroup), 1, 1],
    });
    return [call];
  }

  private splitCalls(
    a: Parameters<PagedAttentionDecodeKernel['call']>[0],
    { chunk, slices }: SplitGeometry,
    groups: number,
    scale: number,
  ): KernelCall[] {
    const c = this.config;
    const merge = this.merge;
    if (!merge) throw new KernelError('split decode attention without its merge pipeline');
    const entries = a.batch * c.heads * slices;
    const limit = this.ctx.gpu.limits.maxStorageBufferBindingSize;
    if (entries * c.headDim * BYTES.f32 > limit) {
      throw new KernelError(
        `split decode attention: partials of ${a.batch} sequences × ${c.heads} heads × ${slices} slices exceed the ${limit}-byte binding limit`,
      );
    }
    const scratch = (label: string, floats: number) =>
      this.ctx.gpu.device.createBuffer({
        label: `attention_decode ${label}`,
        size: alignedSize(floats * BYTES.f32),
        usage: GPUBufferUsage.STORAGE,
      });
    const partO = scratch('partial outputs', entries * c.headDim);
    const partML = scratch('partial max and sum', entries * 2);
    const first = makeCall(this.ctx, {
      name: 'attention_decode',
      pipeline: this.pipeline,
      params: SPLIT_PARAMS,
      values: {
        batch: a.batch,
        heads: c.heads,
        kvHeads: c.kvHeads,
        pageSize: c.pageSize,
        tableStride: a.tableStride,
        sliceTokens: chunk,
        slices,
        scale,
        window: windowOf(c),
      },
      buffers: [a.q, a.pool, a.blockTables, a.seqLens, partO, partML],
      // x: slices, consecutive in a workgroup; y: KV head chunks; z: sequences.
      workgroups: [Math.ceil(slices / ATTENTION_LIMITS.splitWorkgroup), groups, a.batch],
    });
    const second = makeCall(this.ctx, {
      name: 'attention_decode',
      pipeline: merge,
      params: MERGE_PARAMS,
      values: { batch: a.batch, heads: c.heads, sliceTokens: chunk, slices, window: windowOf(c) },
      buffers: [a.seqLens, partO, partML, a.out],
      workgroups: [Math.ceil((a.batch * c.heads * (c.headDim / 4)) / ATTENTION_LIMITS.mergeWorkgroup), 1, 1],
    });
    // The partials live as long as the calls: disposeCalls frees them with the first's params.
    return [{ ...first, owned: [...first.owned, partO, partML] }, second];
  }
}
