import { KV_WORD_BYTES, type KvDtype, kvRowBytes, kvRowWords } from './format.ts';

/**
 * The paged KV pool layout, on the CPU side. Each layer's pool is
 *   [pages, 2 (K, V), kvHeads, pageSize, rowWords] words
 * where a word holds 4 values of a row in the pool's KV type and rowWords = headDim / 4 + the
 * type's extra words (src/kv/format.ts), and a token's place in it is its slot, page · pageSize +
 * offset (vLLM's slot mapping). The GPU side of the same layout is shaders/lib/kv_layout.wgsl; the
 * kv-write kernel test checks the two against each other (the GPU writes through one, the test
 * reads back through the other).
 */
export interface KvLayout {
  kvHeads: number;
  pageSize: number;
  headDim: number;
  dtype: KvDtype;
}

/** The slot of position `pos` of a sequence whose pages are `table`. */
export function slotOf(table: readonly number[], pos: number, pageSize: number): number {
  return table[Math.floor(pos / pageSize)] * pageSize + (pos % pageSize);
}

/** The slots of positions `start … start + n − 1`. */
export function slotsOf(table: readonly number[], start: number, n: number, pageSize: number): number[] {
  return Array.from({ length: n }, (_, i) => slotOf(table, start + i, pageSize));
}

/** Word index of the first word of token `offset`'s K (which = 0) or V (which = 1) row in `page`, KV head `kvHead`. */
export function kvRowWord(g: KvLayout, page: number, which: 0 | 1, kvHead: number, offset: number): number {
  return (((page * 2 + which) * g.kvHeads + kvHead) * g.pageSize + offset) * kvRowWords(g.headDim, g.dtype);
}

/** The same row's first index as u32 (or f32) elements of the pool's bytes. */
export function kvRowIndex(g: KvLayout, page: number, which: 0 | 1, kvHead: number, offset: number): number {
  return (kvRowWord(g, page, which, kvHead, offset) * KV_WORD_BYTES[g.dtype]) / 4;
}

/** Bytes of one page in one layer's pool, scales included. */
export function pageBytes(g: KvLayout): number {
  return 2 * g.kvHeads * g.pageSize * kvRowBytes(g.headDim, g.dtype);
}
