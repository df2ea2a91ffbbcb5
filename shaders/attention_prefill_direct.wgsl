// Causal paged attention for prefill without workgroup memory. One invocation serves a register
// block of QB consecutive queries x GROUP query heads that share one KV head (the whole group
// unless the block would hold more than MAX_SLOTS vec4s of queries): it streams the keys the block
// sees straight from the page pool, loading each K and V row once for the whole block, with an
// online softmax per query that rescales only when its running maximum grows. QB = 1 is the
// 'direct' family, QB = 4 'direct4'. No barriers, which suits CPU-backed adapters, where the tiled
// attention_prefill.wgsl spends its time in barriers; GPUs prefer the tiled kernel's K/V reuse.
// Keys are visited in position order 0 ..= start + i, so a query's result does not depend on how
// the prompt was chunked, on the page size, on QB or on GROUP.
// The pool holds the `kv` slot's element type. With a sliding window the walk starts at the block's
// first visible key, and a query ignores keys before its own first one.
override WG: u32;
override HEAD_DIM: u32;          // multiple of 4
override PAGED: bool;
override QB: u32;                // queries per invocation
override GROUP: u32;             // query heads per invocation
override SLOTS: u32 = QB * GROUP;  // (query, head) pairs per invocation, SLOTS * HD4 <= MAX_SLOTS
override HD4: u32 = HEAD_DIM / 4u;
override ROW: u32 = HD4 + KV_EXTRA;  // words per cached row
//#const MAX_SLOTS
//#const MAX_BLOCK
//#include softmax
//#include kv_layout
//#include window
//#include kv

// From PREFILL_PARAMS in src/kernels/attention.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [L, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<KvWord>;            // [pages, 2, kvHeads, pageSize, ROW]
@group(0) @binding(3) var<storage, read> blockTable: array<u32>;         // [pages of this sequence]
@group(0) @binding(4) var<storage, read_write> out: array<vec4<f32>>;    // [L, heads, HD4]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let firstQuery = (wid.x * WG + lid) * QB;
  if (firstQuery >= p.L) { return; }
  // wid.y = kvh * chunks + chunk: chunk c of KV head kvh's group serves its heads c*GROUP ... .
  let group = p.heads / p.kvHeads;
  let chunks = (group + GROUP - 1u) / GROUP;
  let kvh = wid.y / chunks;
  let firstHead = kvh * group + (wid.y % chunks) * GROUP;
  let lastHead = kvh * group + group - 1u;
  let kvLayout = KvLayout(p.kvHeads, p.pageSize, ROW);
  // Slot r * GROUP + g is query firstQuery + r of head firstHead + g. Slots past L or past the
  // group's last head repeat the last one: computed, not written.
  var qv: array<vec4<f32>, MAX_SLOTS>;  // [SLOTS][HD4]
  var o: array<vec4<f32>, MAX_SLOTS>;   // [SLOTS][HD4]
  var m: array<f32, MAX_BLOCK>;
  var l: array<f32, MAX_BLOCK>;
  for (var i = 0u; i < SLOTS; i++) {
    let qi = min(firstQuery + i / GROUP, p.L - 1u);
    let h = min(firstHead + i % GROUP, lastHead);
    for (var d = 0u; d < HD4; d++) { qv[i * HD4 + d] = q[(qi * p.heads + h) * HD4 + d] * p.scale; }
    m[i] = NEG_BIG;
  }
  // Walk the keys the block sees, from its first query's first to its last query, a run of
  // consecutive rows per page: one block-table lookup per page, so the paged cache costs no more per
  // key than the contiguous one.
  let visible = p.start + min(firstQuery + QB, p.L);
  for (var t0 = kvFirstVisible(p.start + firstQuery, p.window); t0 < visible;) {
    var page = blockTable[0];
    var offset = t0;
    var n = visible - t0;
    if (PAGED) {
      page = blockTable[t0 / p.pageSize];
      offset = t0 % p.pageSize;
      n = min(n, p.pageSize - offset);
    }
    let kBase = kvRow(kvLayout, page, 0u, kvh, offset);
    let vBase = kvRow(kvLayout, page, 1u, kvh, offset);
    for (var j = 0u; j < n; j++) {
      let t = t0 + j;
      let kRow = kBase + j * ROW;
      // Explicit zeros: Chromium's compiler (Tint to SwiftShader, measured) does not re-zero a
      // loop-scoped var declared without an initializer on each iteration.
      var s = array<f32, MAX_BLOCK>();
      for (var d = 0u; d < HD4; d++) {
        let k = kvVec(kRow + d);
        for (var i = 0u; i < SLOTS; i++) { s[i] += dot(qv[i * HD4 + d], k); }
      }
      let kScale = kvScale(kRow + HD4);
      let vRow = vBase + j * ROW;
      let vScale = kvScale(vRow + HD4);
      // A query that does not see key t (causal, or before its window) gives it probability 0 and
      // keeps its state.
      var pr = array<f32, MAX_BLOCK>();
      for (var i = 0u; i < SLOTS; i++) {
        let pos = p.start + firstQuery + i / GROUP;
        if (t <= pos && t >= kvFirstVisible(pos, p.window)) {
          s[i] *= kScale;
          if (s[i] > m[i]) {
            let correction = exp(m[i] - s[i]);
            l[i] *= correction;
            for (var d = 0u; d < HD4; d++) { o[i * HD4 + d] *= correction; }
            m[i] = s[i];
          }
          pr[i] = exp(s[i] - m[i]);
          l[i] += pr[i];
          pr[i] *= vScale;
        }
      }
      for (var d = 0u; d < HD4; d++) {
        let v = kvVec(vRow + d);
        for (var i = 0u; i < SLOTS; i++) { o[i * HD4 + d] = fma(vec4<f32>(pr[i]), v, o[i * HD4 + d]); }
      }
    }
    t0 += n;
  }
  for (var i = 0u; i < SLOTS; i++) {
    let qi = firstQuery + i / GROUP;
    let h = firstHead + i % GROUP;
    if (qi < p.L && h <= lastHead) {
      for (var d = 0u; d < HD4; d++) { out[(qi * p.heads + h) * HD4 + d] = o[i * HD4 + d] / l[i]; }
    }
  }
}
