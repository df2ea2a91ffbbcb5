// Batched paged attention for decode without workgroup memory: one invocation per (sequence, KV
// head, chunk of its query group) streams the whole context once for GROUP query heads (the whole
// group unless that would hold more than MAX_SLOTS vec4s of queries), with the online softmax of
// lib/decode_online.wgsl. Each K and V row is loaded once per invocation and used by all its
// queries. No barriers: the fast family on CPU-backed adapters. Its parallelism is only
// batch x kvHeads, so GPUs prefer attention_decode.wgsl, which spreads each context over a
// workgroup, and long contexts attention_decode_split.wgsl, which spreads it over slices.
// The pool holds the `kv` slot's element type; with a sliding window the walk starts at the first
// key the query sees.
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

// From DECODE_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [batch, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<KvWord>;            // [pages, 2, kvHeads, pageSize, ROW]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;        // [batch, tableStride]
@group(0) @binding(4) var<storage, read> seqLens: array<u32>;            // [batch]
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;    // [batch, heads, HD4]

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let group = p.heads / p.kvHeads;
  let chunks = (group + GROUP - 1u) / GROUP;
  let index = gid.x;  // over batch * kvHeads * chunks
  if (index >= p.batch * p.kvHeads * chunks) { return; }
  let b = index / (p.kvHeads * chunks);
  let kvh = (index / chunks) % p.kvHeads;
  let first = kvh * group + (index % chunks) * GROUP;  // first query head of this invocation
  let last = kvh * group + group - 1u;                 // last query head of the group
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, ROW);
  onlineBegin((b * p.heads + first) * HD4, last + 1u - first, p.scale);
  let len = seqLens[b];
  // Walk the visible context a run of consecutive rows per page: one block-table lookup per page,
  // so the paged cache costs no more per key than the contiguous one (a single page of maxSeqLen).
  let table = b * p.tableStride;
  for (var t = kvFirstVisible(len - 1u, p.window); t < len;) {
    var page = blockTables[table];
    var offset = t;
    var n = len - t;
    if (PAGED) {
      page = blockTables[table + t / p.pageSize];
      offset = t % p.pageSize;
      n = min(n, p.pageSize - offset);
    }
    onlineRows(kvRow(kvLayout, page, 0u, kvh, offset), kvRow(kvLayout, page, 1u, kvh, offset), n);
    t += n;
  }
  for (var g = 0u; g < GROUP; g++) {
    if (first + g <= last) {
      let outBase = (b * p.heads + first + g) * HD4;
      for (var d = 0u; d < HD4; d++) { out[outBase + d] = o[g * HD4 + d] / l[g]; }
    }
  }
}
