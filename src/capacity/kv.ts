/**
 * The KV-cache calculator: exact byte counts, from a model's attention shape alone.
 *
 * Each layer keeps, for every token in context, one K and one V vector per KV head:
 *   bytes per token = 2 (K and V) · layers · kvHeads · headDim · bytes per element.
 * With grouped-query attention, kvHeads < heads, and that is the whole saving: the query heads
 * are not cached. The common mistake is to use `heads` (or hidden size) in place of kvHeads,
 * which overstates a GQA model's cache by heads ÷ kvHeads.
 */

/** Bytes per cached element for each KV dtype. int8 (or fp8) counts one byte: per-tensor scales are negligible and not counted. */
export const KV_DTYPE_BYTES = { f32: 4, f16: 2, int8: 1 } as const;
export type KvDtype = keyof typeof KV_DTYPE_BYTES;
export const KV_DTYPES = Object.keys(KV_DTYPE_BYTES) as KvDtype[];

/** The part of a model's shape the KV cache depends on. */
export interface KvShape {
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** Bytes of one token's K and V over all layers. */
export function kvBytesPerToken(m: KvShape, dtype: KvDtype): number {
  return 2 * m.layers * m.kvHeads * m.headDim * KV_DTYPE_BYTES[dtype];
}

/** The same model with one KV head per query head (multi-head attention): what GQA saves against. */
export function kvBytesPerTokenMha(m: KvShape, dtype: KvDtype): number {
  return kvBytesPerToken({ ...m, kvHeads: m.heads }, dtype);
}

/** Fraction of the MHA cache a GQA model keeps: kvHeads ÷ heads (1 for MHA). */
export function gqaRatio(m: KvShape): number {
  return m.kvHeads / m.heads;
}

/**
 * Tokens a sequence of `tokens` occupies in a cache of `pageSize`-token pages: rounded up to
 * whole pages (pageSize 1, or none, means no rounding).
 */
export function reservedTokens(tokens: number, pageSize = 1): number {
  return Math.ceil(tokens / pageSize) * pageSize;
}

/** KV bytes of one request holding `tokens` tokens of context (rounded up to pages if a page size is given). */
export function kvBytesPerRequest(m: KvShape, dtype: KvDtype, tokens: number, pageSize = 1): number {
  return kvBytesPerToken(m, dtype) * reservedTokens(tokens, pageSize);
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
