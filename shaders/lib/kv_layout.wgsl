// The paged KV pool layout, on the GPU. Each layer's pool is
//   [pages, 2 (K, V), kvHeads, pageSize, rowWords] words
// where a word (KvWord of the `kv` snippet: kv_f32, kv_f16, kv_int8) holds 4 values of a row and
// rowWords = headDim / 4 + KV_EXTRA (int8 keeps its row scale in the extra word).
// This must compute exactly what kvRowWord in src/kv/layout.ts computes; the kv-write kernel test
// checks the two against each other. A contiguous cache is the same layout with one page of
// maxSeqLen tokens per sequence.
struct KvLayout {
  kvHeads: u32,
  pageSize: u32,
  rowWords: u32,
}

// Word index of the first value of token `offset`'s K (which = 0) or V (which = 1) row in `page`,
// KV head kvh. Consecutive offsets of one page are consecutive rows, rowWords words apart.
fn kvRow(g: KvLayout, page: u32, which: u32, kvh: u32, offset: u32) -> u32 {
  return (((page * 2u + which) * g.kvHeads + kvh) * g.pageSize + offset) * g.rowWords;
}

