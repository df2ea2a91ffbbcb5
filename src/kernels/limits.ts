import { KernelError } from '../errors.ts';
import { BYTES } from '../weight-format.ts';
import type { AttentionVariant } from './variants.ts';

// Shape limits baked into the shaders, kept free of shader imports so Node-side code (the CLI's
// spec validation) can read them. The shaders get them through `//#const` lines (see wgsl.ts), so
// each number is written here once.

/** Shape limits of the GEMV shaders; the wrapper checks calls against them. */
export const GEMV_LIMITS = {
  /** Output columns per workgroup of gemv.wgsl (const ROWS). */
  rowsPerWorkgroup: 4,
  /** Largest batch M (const MAX_M); gemv_rowwise and gemv_subgroup unroll exactly this many rows. */
  maxBatch: 8,
  /** Invocations per workgroup; at least maxBatch * rowsPerWorkgroup so the final write covers every output. */
  workgroupSize: 64,
} as const;

/**
 * Largest decode batch the engine takes. The GEMV handles maxBatch rows per call, so a bigger
 * batch runs as chunks of that many rows in one command buffer, each re-reading the weights.
 */
export const MAX_DECODE_BATCH = 32;

/** Sizes baked into the attention shaders. */
export const ATTENTION_LIMITS = {
  /** Largest head dim (4 · const MAX_HD4 in the attention shaders). */
  maxHeadDim: 256,
  /** Queries per prefill workgroup of the tiled family. */
  prefillQueries: 32,
  /** Most keys per prefill tile (const MAX_BK, the size of the private score array). */
  maxPrefillKeys: 64,
  /** Workgroup memory the prefill K and V tiles may take together, in bytes (the WebGPU default limit). */
  prefillTileBytes: 16384,
  /** Keys per prefill tile: two tiles of BK·headDim f32 must fit in prefillTileBytes. */
  prefillKeysFor(headDim: number) {
    const fit = Math.floor(ATTENTION_LIMITS.prefillTileBytes / (2 * BYTES.f32 * headDim));
    return Math.max(1, Math.min(ATTENTION_LIMITS.maxPrefillKeys, fit));
  },
  /** Invocations (keys per tile) in a decode workgroup; must be ≥ headDim / 4. */
  decodeWorkgroup: 64,
  /** Invocations per workgroup of the direct (barrier-free) kernels. */
  directWorkgroup: 32,
  /** Queries per invocation of the direct4 prefill family (QB; 1 for direct). */
  direct4Queries: 4,
  /**
   * Most query heads one workgroup (tiled) or invocation (direct) serves (const MAX_GROUP). A KV head
   * whose group is larger is served in chunks, and its rows are read once per chunk. At 8 heads of
   * dim 256 the tiled decode's workgroup memory (queries, scores, probabilities) is 12 KiB of 16.
   */
  maxGroup: 8,
  /**
   * Most query vec4s a direct invocation holds in private memory, and as many output accumulators
   * (const MAX_SLOTS): what direct4 held per head at head dim 256 (4 · 64). Larger private arrays
   * spill on GPUs; a group that would not fit is split into chunks.
   */
  directSlotVec4s: 256,
  /** (query, head) rows per invocation of the register prefill family (its named registers). */
  registerRows: 4,
  /** Keys per block of the register prefill family (const KEYS); divides every page size (8, 16, 32). */
  registerKeys: 8,
  /** Invocations per workgroup every device allows (WebGPU's default maxComputeInvocationsPerWorkgroup). */
  maxWorkgroupInvocations: 256,
  /**
   * Invocations (consecutive slices of one sequence and KV head) per workgroup of the split-K decode.
   * Small, so that even a few live slices spread over several workgroups: SwiftShader runs a
   * workgroup on one thread, so a context in one workgroup would use one core.
   */
  splitWorkgroup: 8,
  /**
   * Most slices a split-K decode covers per sequence and query head: past maxContext / chunk of this,
   * slices grow instead, so the partials stay within batch · heads · splitMaxSlices · (headDim + 2) f32.
   */
  splitMaxSlices: 256,
  /** Invocations per workgroup of the split-K merge (one per sequence, query head and vec4 of the head). */
  mergeWorkgroup: 64,
} as const;

/** The two attention ops; their families share names ('tiled', 'direct') but not shaders. */
export type AttentionOp = 'prefill' | 'decode';

/** How an attention kernel covers the query heads that share a KV head, and the queries that share a load. */
export interface AttentionGrouping {
  /** Query heads one workgroup (tiled) or invocation (direct) serves: the shader's GROUP. */
  headsPerPass: number;
  /** Passes over each KV head's rows: ⌈(heads / kvHeads) / headsPerPass⌉, 1 when the group fits. */
  passes: number;
  /**
   * Consecutive queries that share each row load: BQ (tiled prefill), 4 (direct4), registerRows /
   * group (register prefill: rows are (query, head) pairs, so this may be fractional), else 1.
   */
  queriesPerBlock: number;
}

/**
 * The grouping each family implements. Tiled kernels serve up to maxGroup heads (the tiled prefill
 * also stays within maxWorkgroupInvocations, one invocation per query and head); direct kernels
 * serve as many as fit directSlotVec4s of private queries. A group larger than that is split into
 * equal chunks, each one pass.
 */
export function attentionGrouping(
  op: AttentionOp,
  variant: AttentionVariant,
  shape: { heads: number; kvHeads: number; headDim: number },
): AttentionGrouping {
  const lim = ATTENTION_LIMITS;
  if (op === 'decode' && (variant.family === 'direct4' || variant.family === 'register'))
    throw new KernelError(`decode attention has no ${variant.family} family (one query per sequence)`);
  if (op === 'prefill' && variant.family === 'split')
    throw new KernelError('prefill attention has no split family (split-K is for one query per sequence)');
  let queriesPerBlock: number;
  let cap: number;
  if (variant.family === 'register') {
    // Rows are (query, head) pairs of the whole group, registerRows to an invocation: one pass, and
    // a block covers registerRows / group queries (fewer than one query per head when group > 4).
    const group = shape.heads / shape.kvHeads;
    return { headsPerPass: group, passes: 1, queriesPerBlock: lim.registerRows / group };
  }
  if (variant.family === 'tiled') {
    queriesPerBlock = op === 'prefill' ? lim.prefillQueries : 1;
    cap =
      op === 'prefill'
        ? Math.min(lim.maxGroup, lim.maxWorkgroupInvocations / lim.prefillQueries)
        : lim.maxGroup;
  } else {
    queriesPerBlock = variant.family === 'direct4' ? lim.direct4Queries : 1;
    // At least one head per pass, the per-head form, however large the head dim.
    cap = Math.max(
      1,
      Math.min(lim.maxGroup, Math.floor(lim.directSlotVec4s / (queriesPerBlock * (shape.headDim / 4)))),
    );
  }
  const passes = Math.ceil(shape.heads / shape.kvHeads / cap);
  return { headsPerPass: Math.ceil(shape.heads / shape.kvHeads / passes), passes, queriesPerBlock };
}

/**
 * How many times the kernel, as implemented, loads each cached K row of a KV head (and as many
 * times its V row), for one sequence in one call. With B = queriesPerBlock and P = passes:
 * - decode (L = 1): P: each pass over the group streams the whole context once;
 * - prefill over L new queries: a row cached before them is seen by all ⌈L/B⌉ blocks of queries,
 *   so P · ⌈L/B⌉; the chunk's own row `row` (0 ≤ row < L) only by the blocks at or after its own,
 *   so P · (⌈L/B⌉ − ⌊row/B⌋) (causal).
 * Compulsory traffic is 1; the per-query-head kernels this replaces read heads/kvHeads times as
 * often (P = heads / kvHeads).
 */
export function attentionKvReadsPerRow(
  op: AttentionOp,
  variant: AttentionVariant,
  shape: { heads: number; kvHeads: number; headDim: number; L?: number; row?: number },
): number {
  const { passes, queriesPerBlock: B } = attentionGrouping(op, variant, shape);
  const L = op === 'decode' ? 1 : (shape.L ?? 1);
  if (shape.row !== undefined && (!Number.isInteger(shape.row) || shape.row < 0 || shape.row >= L))
    throw new KernelError(`row ${shape.row} is not one of the ${L} new rows`);
  if (variant.family === 'register') {
    // Invocation n holds pairs R·n … R·n + R − 1 of the L · group (query, head) pairs, query-major,
    // and visits the keys up to its last pair's query: new row r is skipped by the invocations
    // whose last pair R·n + R − 1 comes before pair r · group, ⌈(r · group − R + 1) / R⌉ of them.
    const R = ATTENTION_LIMITS.registerRows;
    const group = shape.heads / shape.kvHeads;
    const invocations = Math.ceil((L * group) / R);
    if (shape.row === undefined) return invocations;
    return invocations - Math.max(0, Math.ceil((shape.row * group - R + 1) / R));
  }
  const blocks = Math.ceil(L / B);
  if (shape.row === undefined) return passes * blocks;
  return passes * (blocks - Math.floor(shape.row / B));
}

/** How a split-K decode cuts contexts of up to maxContext tokens: `chunk` tokens per slice, `slices` of them. */
export interface SplitGeometry {
  /** Tokens per slice: the variant's chunk, or more where maxContext would need over splitMaxSlices. */
  chunk: number;
  /** Slices the grid covers per sequence and query head: ⌈maxContext / chunk⌉. */
  slices: number;
}

/**
 * The slices of a split-K decode plan whose sequences may grow to maxContext tokens (the block
 * table's capacity, tableStride · pageSize; the contiguous slot's size). The plan is built once and
 * replayed as contexts grow, so the grid covers the longest.
 */
export function splitDecodeGeometry(chunk: number, maxContext: number): SplitGeometry {
  if (!Number.isInteger(chunk) || chunk < 1)
    throw new KernelError(`split chunk ${chunk} is not a positive integer`);
  if (!Number.isInteger(maxContext) || maxContext < 1)
    throw new KernelError(`split context ${maxContext} is not a positive integer`);
  const c = Math.max(chunk, Math.ceil(maxContext / ATTENTION_LIMITS.splitMaxSlices));
  return { chunk: c, slices: Math.ceil(maxContext / c) };
}

/** Dispatches of one decode attention call: the split family's slices and merge, else one. */
export function attentionDecodeDispatches(variant: AttentionVariant): number {
  return variant.family === 'split' ? 2 : 1;
}

/**
 * Bytes a split-K decode moves through its partials besides what every family moves (queries, the
 * K/V rows, the output): for each sequence, query head and slice that holds tokens (⌈len / chunk⌉),
 * the first kernel writes headDim + 2 f32 (o, m, l) and the merge reads them back. 0 for the others.
 */
export function attentionDecodePartialBytes(
  variant: AttentionVariant,
  shape: { heads: number; headDim: number; maxContext: number },
  contexts: readonly number[],
): number {
  if (variant.family !== 'split') return 0;
  const { chunk } = splitDecodeGeometry(variant.chunk, shape.maxContext);
  const slices = contexts.reduce((a, len) => a + Math.ceil(len / chunk), 0);
  return 2 * slices * shape.heads * (shape.headDim + 2) * BYTES.f32;
}
