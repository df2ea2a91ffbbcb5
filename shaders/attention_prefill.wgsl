// Causal paged attention for prefill, flash-style. L new queries of one sequence follow `start`
// cached tokens; query i sits at position start + i and sees keys 0 ..= start + i.
// Workgroup = BQ consecutive queries x GROUP query heads that share one KV head (the whole group
// unless BQ * GROUP would pass the invocation limit), one invocation per (query, head). K/V tiles of
// BK keys are staged in workgroup memory once and used by all BQ * GROUP queries, so each K and V
// row is loaded once per block of queries and group, not once per head. Softmax is online (running
// max and sum, rescaled once per tile). Tiles are aligned to absolute positions, so a query's result
// does not depend on how the prompt was chunked, on the page size or on GROUP.
// The pool holds the `kv` slot's element type, staged in the tiles as f32 (scale applied). With a
// sliding window, query i sees keys from kvFirstVisible(start + i): tiles before the block's first
// visible key are not loaded, and keys before a query's first are masked.
override BQ: u32;                // queries per workgroup
override BK: u32;                // keys per tile, <= MAX_BK
override GROUP: u32;             // query heads per workgroup
override HEAD_DIM: u32;          // multiple of 4, <= 4 * MAX_HD4
override PAGED: bool;            // false: contiguous cache, one page of pageSize = maxSeqLen per sequence
override HD4: u32 = HEAD_DIM / 4u;
override ROW: u32 = HD4 + KV_EXTRA;  // words per cached row
override WG: u32 = BQ * GROUP;   // invocations: query lid % BQ of head lid / BQ
//#const MAX_HD4
//#const MAX_BK
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

var<workgroup> kTile: array<vec4<f32>, BK * HD4>;
var<workgroup> vTile: array<vec4<f32>, BK * HD4>;

// Word index of token t's K (which = 0) or V (which = 1) row for KV head kvh.
fn tokenRow(t: u32, kvh: u32, which: u32) -> u32 {
  var page = blockTable[0];
  var offset = t;
  if (PAGED) {
    page = blockTable[t / p.pageSize];
    offset = t % p.pageSize;
  }
  return kvRow(KvLayout(p.kvHeads, p.pageSize, ROW), page, which, kvh, offset);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // wid.y = kvh * chunks + chunk: chunk c of KV head kvh's group serves its heads c*GROUP ... .
  let group = p.heads / p.kvHeads;
  let chunks = (group + GROUP - 1u) / GROUP;
  let kvh = wid.y / chunks;
  let slot = (wid.y % chunks) * GROUP + lid / BQ;  // this invocation's head within the group
  let h = kvh * group + slot;
  let qi = wid.x * BQ + lid % BQ;
  // Invocations past the group's last head (a short last chunk) or past L only help load tiles.
  let isActive = qi < p.L && slot < group;
  let qpos = p.start + qi;
  let kvEnd = p.start + min(wid.x * BQ + BQ, p.L);  // keys the last query of this block sees
  let kvBegin = kvFirstVisible(p.start + wid.x * BQ, p.window);  // the first key its first query sees
  let qFirst = kvFirstVisible(qpos, p.window);

  var qv: array<vec4<f32>, MAX_HD4>;
  var o: array<vec4<f32>, MAX_HD4>;
  if (isActive) {
    for (var d = 0u; d < HD4; d++) { qv[d] = q[(qi * p.heads + h) * HD4 + d] * p.scale; }
  }
  var m = NEG_BIG;
  var l = 0.0;
  var s: array<f32, MAX_BK>;

  for (var t0 = kvBegin - kvBegin % BK; t0 < kvEnd; t0 += BK) {
    for (var i = lid; i < BK * HD4; i += WG) {
      let t = t0 + i / HD4;
      if (t < kvEnd && t >= kvBegin) {
        let d = i % HD4;
        let kRow = tokenRow(t, kvh, 0u);
        let vRow = tokenRow(t, kvh, 1u);
        kTile[i] = kvVec(kRow + d) * kvScale(kRow + HD4);
        vTile[i] = kvVec(vRow + d) * kvScale(vRow + HD4);
      }
    }
    workgroupBarrier();
    if (isActive && qpos >= t0 && qFirst < t0 + BK) {
      let n = min(BK, qpos + 1u - t0);
      var tileMax = NEG_BIG;
      for (var j = 0u; j < n; j++) {
        var acc = 0.0;
        for (var d = 0u; d < HD4; d++) { acc += dot(qv[d], kTile[j * HD4 + d]); }
        // Before the query's window: probability 0 (its tile slot may hold another query's key).
        s[j] = select(acc, NEG_BIG, t0 + j < qFirst);
        tileMax = max(tileMax, s[j]);
      }
      let mNew = max(m, tileMax);
      let correction = exp(m - mNew);
      l *= correction;
      for (var d = 0u; d < HD4; d++) { o[d] *= correction; }
      for (var j = 0u; j < n; j++) {
        let pj = exp(s[j] - mNew);
        l += pj;
        for (var d = 0u; d < HD4; d++) { o[d] = fma(vec4<f32>(pj), vTile[j * HD4 + d], o[d]); }
      }
      m = mNew;
    }
    workgroupBarrier();
  }
  if (isActive) {
    for (var d = 0u; d < HD4; d++) { out[(qi * p.heads + h) * HD4 + d] = o[d] / l; }
  }
}
