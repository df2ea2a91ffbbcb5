// Batched paged attention for decode without workgroup memory: one invocation per (sequence, head)
// streams its whole context with an online softmax that rescales only when the running maximum
// grows. No barriers: the fast family on CPU-backed adapters. Its parallelism is only
// batch x heads, so GPUs prefer attention_decode.wgsl, which spreads each context over a workgroup.
override WG: u32;
override HEAD_DIM: u32;
override PAGED: bool;
override HD4: u32 = HEAD_DIM / 4u;
//#const MAX_HD4
//#include softmax
//#include kv_layout

// From DECODE_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [batch, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<vec4<f32>>;         // [pages, 2, kvHeads, pageSize, HD4]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;        // [batch, tableStride]
@group(0) @binding(4) var<storage, read> seqLens: array<u32>;            // [batch]
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;    // [batch, heads, HD4]

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let index = gid.x;  // over batch * heads
  if (index >= p.batch * p.heads) { return; }
  let b = index / p.heads;
  let h = index % p.heads;
  let kvh = h / (p.heads / p.kvHeads);
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, HD4);
  let qBase = (b * p.heads + h) * HD4;
  var qv: array<vec4<f32>, MAX_HD4>;
  var o: array<vec4<f32>, MAX_HD4>;
  for (var d = 0u; d < HD4; d++) { qv[d] = q[qBase + d] * p.scale; }
  var m = NEG_BIG;
  var l = 0.0;
  let len = seqLens[b];
  // Walk the context page by page: one block-table lookup per page, then consecutive rows, so the
  // paged cache costs no more per key than the contiguous one (a single page of maxSeqLen).
  let table = b * p.tableStride;
  for (var t0 = 0u; t0 < len; t0 += p.pageSize) {
    var page = blockTables[table];
    if (PAGED) { page = blockTables[table + t0 / p.pageSize]; }
    let kBase = kvRow(kvLayout, page, 0u, kvh, 0u);
    let vBase = kvRow(kvLayout, page, 1u, kvh, 0u);
    let n = min(p.pageSize, len - t0);
    for (var j = 0u; j < n; j++) {
      let kRow = kBase + j * HD4;
      var s = 0.0;
      for (var d = 0u; d < HD4; d++) { s += dot(qv[d], pool[kRow + d]); }
      if (s > m) {
        let correction = exp(m - s);
        l *= correction;
        for (var d = 0u; d < HD4; d++) { o[d] *= correction; }
        m = s;
      }
      let pr = exp(s - m);
      l += pr;
      let vRow = vBase + j * HD4;
      for (var d = 0u; d < HD4; d++) { o[d] = fma(vec4<f32>(pr), pool[vRow + d], o[d]); }
    }
  }
  for (var d = 0u; d < HD4; d++) { out[qBase + d] = o[d] / l; }
}
