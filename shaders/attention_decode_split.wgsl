// Split-K (flash-decoding) attention for decode, first half: the context of each sequence is cut
// into slices of `sliceTokens` tokens, and one invocation per (slice, sequence, KV head, chunk of its query
// group) runs the online softmax of lib/decode_online.wgsl over its slice only, writing each query
// head's partial maximum m, sum l and output o (not divided by l). attention_decode_merge.wgsl then
// combines a sequence's slices. A long context at a small batch thus runs on slices x kvHeads
// invocations instead of the direct family's kvHeads, and no barrier is needed (SwiftShader).
// The grid covers `slices` = the most any sequence of the plan can need (built once, replayed while
// contexts grow): slices at or past a sequence's current length return at once, writing nothing;
// the merge reads only the slices that hold tokens. Consecutive invocations take consecutive slices
// of one (sequence, KV head), so one workgroup's loads stream neighbouring parts of the cache.
// With a sliding window, slices wholly before the first visible key return at once too (the merge
// starts at the first slice that holds one), and the first such slice starts at that key.
override WG: u32;
override HEAD_DIM: u32;
override PAGED: bool;
override GROUP: u32;             // query heads per invocation, GROUP * HD4 <= MAX_SLOTS
override HD4: u32 = HEAD_DIM / 4u;
override ROW: u32 = HD4 + KV_EXTRA;  // words per cached row
//#const MAX_GROUP
//#const MAX_SLOTS
//#include softmax
//#include kv_layout
//#include window
//#include kv
//#include decode_online

// From SPLIT_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;             // [batch, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<KvWord>;             // [pages, 2, kvHeads, pageSize, ROW]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;         // [batch, tableStride]
@group(0) @binding(4) var<storage, read> seqLens: array<u32>;             // [batch]
@group(0) @binding(5) var<storage, read_write> partO: array<vec4<f32>>;   // [batch, heads, slices, HD4]
@group(0) @binding(6) var<storage, read_write> partML: array<vec2<f32>>;  // [batch, heads, slices] (m, l)

// wid.y = kvh * chunks + chunk of KV head kvh's query group; wid.z = sequence.
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let slice = gid.x;
  let b = wid.z;
  let len = seqLens[b];
  let first = kvFirstVisible(len - 1u, p.window);
  let tEnd = min(len, slice * p.sliceTokens + p.sliceTokens);
  if (slice >= p.slices || slice * p.sliceTokens >= len || tEnd <= first) { return; }
  let t0 = max(slice * p.sliceTokens, first);
  let group = p.heads / p.kvHeads;
  let chunks = (group + GROUP - 1u) / GROUP;
  let kvh = wid.y / chunks;
  let firstHead = kvh * group + (wid.y % chunks) * GROUP;  // first query head of this invocation
  let last = kvh * group + group - 1u;                     // last query head of the group
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, ROW);
  onlineBegin((b * p.heads + firstHead) * HD4, last + 1u - firstHead, p.scale);
  // The slice's tokens, a run of consecutive rows per page it touches: one block-table lookup per
  // run. The contiguous cache is one page of every token (its pageSize is the slot's capacity).
  let table = b * p.tableStride;
  for (var t = t0; t < tEnd;) {
    var page = blockTables[table];
    var offset = t;
    var n = tEnd - t;
    if (PAGED) {
      page = blockTables[table + t / p.pageSize];
      offset = t % p.pageSize;
      n = min(n, p.pageSize - offset);
    }
    onlineRows(kvRow(kvLayout, page, 0u, kvh, offset), kvRow(kvLayout, page, 1u, kvh, offset), n);
    t += n;
  }
  for (var g = 0u; g < GROUP; g++) {
    if (firstHead + g <= last) {
      let part = (b * p.heads + firstHead + g) * p.slices + slice;
      for (var d = 0u; d < HD4; d++) { partO[part * HD4 + d] = o[g * HD4 + d]; }
      partML[part] = vec2<f32>(m[g], l[g]);
    }
  }
}
