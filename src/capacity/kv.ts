/**
 * The KV-cache calculator: exact byte counts, from a model's attention shape alone, in the storage
 * formats the engine's KV cache uses (src/kv/, shaders/lib/kv_*.wgsl), so the probe can hold the
 * allocator to these numbers byte for byte.
 *
 * Each layer keeps, for every token in context, one K and one V vector per KV head:
 *   bytes per token = 2 (K and V) · layers · kvHeads · bytes per vector,
 *   bytes per vector = headDim · bytes per element + bytes of its scale.
 * With grouped-query attention, kvHeads < heads, and that is the whole saving: the query heads
 * are not cached. The common mistake is to use `heads` (or hidden size) in place of kvHeads,
 * which overstates a GQA model's cache by heads ÷ kvHeads.
 *
 * A sliding window (Mistral style, W tokens) bounds what a sequence keeps: its last W tokens, and
 * in a paged cache the pages that hold any of them; the pages behind go back to the pool.
 */

/** Bytes per cached element: f32 4; f16 2 (pairs packed in a u32, so exactly half of f32); int8 1. */
export const KV_DTYPE_BYTES = { f32: 4, f16: 2, int8: 1 } as const;
export type KvDtype = keyof typeof KV_DTYPE_BYTES;
export const KV_DTYPES = Object.keys(KV_DTYPE_BYTES) as KvDtype[];

/**
 * Scale bytes stored with each cached vector (one K or one V, of one KV head, one token, one
 * layer). int8 is symmetric with one f32 scale per vector: at head dim 32 the scale is 4 of 36
 * bytes, 11%, too much to call negligible. The float types need none.
 */
export const KV_SCALE_BYTES: Readonly<Record<KvDtype, number>> = { f32: 0, f16: 0, int8: 4 };

/** The part of a model's shape the KV cache depends on (`heads` only for the MHA comparison). */
export interface KvShape {
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** What the byte counts need: `heads` is allowed (a whole KvShape passes) but not read. */
export type KvTokenShape = Pick<KvShape, 'layers' | 'kvHeads' | 'headDim'> & { heads?: number };

/** Bytes of one cached K or V vector of one head: its elements and its scale. */
export function kvVectorBytes(headDim: number, dtype: KvDtype): number {
  return headDim * KV_DTYPE_BYTES[dtype] + KV_SCALE_BYTES[dtype];
}

/** Bytes of one token's K and V in one layer: what one token costs in one layer's page pool. */
export function kvBytesPerTokenPerLayer(m: Pick<KvShape, 'kvHeads' | 'headDim'>, dtype: KvDtype): number {
  return 2 * m.kvHeads * kvVectorBytes(m.headDim, dtype);
}

/** Bytes of one token's K and V over all layers, scales included. */
export function kvBytesPerToken(m: KvTokenShape, dtype: KvDtype): number {
  return m.layers * kvBytesPerTokenPerLayer(m, dtype);
}

/** The scales' share of kvBytesPerToken (0 for the float types), so a report can show it apart. */
export function kvScaleBytesPerToken(m: KvTokenShape, dtype: KvDtype): number {
  return 2 * m.layers * m.kvHeads * KV_SCALE_BYTES[dtype];
}

/**
 * A dtype's bytes against f32's for the same shape: f16 0.5; int8 (headDim + 4) ÷ (4 · headDim),
 * the scale being why it is not 0.25. It depends on headDim alone, since layers and heads cancel.
 */
export function kvRatioToF32(headDim: number, dtype: KvDtype): number {
  return kvVectorBytes(headDim, dtype) / kvVectorBytes(headDim, 'f32');
}

/** The same model with one KV head per query head (multi-head attention): what GQA saves against. */
export function kvBytesPerTokenMha(m: KvShape, dtype: KvDtype): number {
  return kvBytesPerToken({ ...m, kvHeads: m.heads }, dtype);
}

/** Fraction of the MHA cache a GQA model keeps: kvHeads ÷ heads (1 for MHA). */
export function gqaRatio(m: KvShape): number {
  return m.kvHeads / m.heads;
}

/** A sliding window in tokens; null (or absent) is full attention. */
export type KvWindow = number | null | undefined;

/** Tokens a sequence of `tokens` keeps with a window: its last W, or all of them without one. */
export function windowedTokens(tokens: number, window: KvWindow = null): number {
  return window == null ? tokens : Math.min(tokens, window);
}

/** Whether the window drops some of a sequence's tokens (a sequence no longer than W keeps all). */
export function windowCaps(tokens: number, window: KvWindow = null): boolean {
  return windowedTokens(tokens, window) < tokens;
}

/**
 * Pages of `pageSize` tokens a sequence of `tokens` tokens holds: those containing any of the
 * positions it keeps, max(0, T − W) … T − 1. A page goes back to the pool only when it falls
 * wholly out of the window, so the kept positions usually straddle one more page than W ÷ P:
 *   floor((T − 1) ÷ P) − floor(max(0, T − W) ÷ P) + 1.
 * Without a window (or with T ≤ W) that is ceil(T ÷ P). Page size 1 gives windowedTokens.
 */
export function pagesHeld(tokens: number, pageSize: number, window: KvWindow = null): number {
  if (tokens <= 0) return 0;
  const first = Math.max(0, tokens - windowedTokens(tokens, window));
  return Math.floor((tokens - 1) / pageSize) - Math.floor(first / pageSize) + 1;
}

/**
 * The most pages a sequence holds at any length up to `tokens`: what it must be able to allocate
 * on its way there, so what a planner reserves for it. pagesHeld does not fall until the window
 * first slides a page off; past W it depends only on where the window starts within a page, and
 * is largest when it starts at a page's last slot, which it has done by length W + P − 1. So the
 * peak is pagesHeld at min(T, W + P − 1): at most ceil((W − 1) ÷ P) + 1, one page over the least.
 */
export function peakPagesHeld(tokens: number, pageSize: number, window: KvWindow = null): number {
  const peakAt = window == null ? tokens : Math.min(tokens, window + pageSize - 1);
  return pagesHeld(peakAt, pageSize, window);
}

/**
 * Tokens a sequence of `tokens` occupies in a cache of `pageSize`-token pages: rounded up to
 * whole pages (pageSize 1, or none, means no rounding). Without a window; see pagesHeld.
 */
export function reservedTokens(tokens: number, pageSize = 1): number {
  return Math.ceil(tokens / pageSize) * pageSize;
}

/**
 * KV bytes of one request holding `tokens` tokens of context: with a page size, its pages
 * (pagesHeld, so a window returns the pages behind it); page size 1 counts tokens exactly.
 */
export function kvBytesPerRequest(
  m: KvTokenShape,
  dtype: KvDtype,
  tokens: number,
  pageSize = 1,
  window: KvWindow = null,
): number {
  return kvBytesPerToken(m, dtype) * pageSize * pagesHeld(tokens, pageSize, window);
}

/** How many requests of `bytesPerRequest` each fit in `budgetBytes` (0 when the budget is negative). */
export function concurrencyForBudget(budgetBytes: number, bytesPerRequest: number): number {
  return budgetBytes <= 0 ? 0 : Math.floor(budgetBytes / bytesPerRequest);
}

/**
 * Admission in order: how many of `lengths`, taken first to last, fit in `budgetBytes` when each
 * reserves its tokens rounded up to `reserve(tokens)`. This is what an allocator that admits
 * until the first failure reaches, so the capacity workload compares it with the real one.
 */
export function admittedInOrder(
  budgetBytes: number,
  bytesPerToken: number,
  lengths: Iterable<number>,
  reserve: (tokens: number) => number,
): number {
  let used = 0;
  let n = 0;
  for (const len of lengths) {
    used += reserve(len) * bytesPerToken;
    if (used > budgetBytes) return n;
    n++;
  }
  return n;
}
