// The paged KV pool layout, on the GPU. Each layer's pool is
//   [pages, 2 (K, V), kvHeads, pageSize, headDim] f32, read as vec4 (hd4 = headDim / 4).
// This must compute exactly what kvRowIndex in src/kv/layout.ts computes (divided by 4, as a vec4
// index); the kv-write kernel test checks the two against each other. A contiguous cache is the same
// layout with one page of maxSeqLen tokens per sequence.
struct KvLayout {
  kvHeads: u32,
  pageSize: u32,
  hd4: u32,
}

// vec4 index of the first element of token `offset`'s K (which = 0) or V (which = 1) row in `page`,
// KV head kvh. Consecutive offsets of one page are consecutive rows, hd4 vec4s apart.
fn kvRow(g: KvLayout, page: u32, which: u32, kvh: u32, offset: u32) -> u32 {
  return (((page * 2u + which) * g.kvHeads + kvh) * g.pageSize + offset) * g.hd4;
}
