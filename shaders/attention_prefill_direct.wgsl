// Causal paged attention for prefill without workgroup memory: one invocation per (query, head)
// streams its visible keys straight from the page pool with an online softmax that rescales only
// when the running maximum grows. No barriers, which suits CPU-backed adapters, where the tiled
// attention_prefill.wgsl spends its time in barriers; GPUs prefer the tiled kernel's K/V reuse.
// Keys are visited in position order 0 ..= start + i, so a query's result does not depend on how
// the prompt was chunked or on the page size.
override WG: u32;
override HEAD_DIM: u32;    // multiple of 4, <= 4 * MAX_HD4
override PAGED: bool;
override HD4: u32 = HEAD_DIM / 4u;
//#const MAX_HD4
//#include softmax
//#include kv_layout

// From PREFILL_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [L, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<vec4<f32>>;         // [pages, 2, kvHeads, pageSize, HD4]
@group(0) @binding(3) var<storage, read> blockTable: array<u32>;         // [pages of this sequence]
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;    // [L, heads, HD4]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let qi = wid.x * WG + lid;
  let h = wid.y;
  if (qi >= p.L) { return; }
  let kvh = h / (p.heads / p.kvHeads);
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, HD4);
  let qBase = (qi * p.heads + h) * HD4;
  var qv: array<vec4<f32>, MAX_HD4>;
  var o: array<vec4<f32>, MAX_HD4>;
  for (var d = 0u; d < HD4; d++) { qv[d] = q[qBase + d] * p.scale; }
  var m = NEG_BIG;
  var l = 0.0;
  // Walk the visible keys page by page: one block-table lookup per page, then consecutive rows,
  // so the paged cache costs no more per key than the contiguous one (a single page).
  let visible = p.start + qi + 1u;
  for (var t0 = 0u; t0 < visible; t0 += p.pageSize) {
    var page = blockTable[0];
    if (PAGED) { page = blockTable[t0 / p.pageSize]; }
    let kBase = kvRow(kvLayout, page, 0u, kvh, 0u);
    let vBase = kvRow(kvLayout, page, 1u, kvh, 0u);
    let n = min(p.pageSize, visible - t0);
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
