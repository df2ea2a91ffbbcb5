// Batched paged attention for decode: one new query per sequence against its whole cached context.
// Grouped-query: a workgroup serves one sequence and one KV head for GROUP of the query heads that
// share it (the whole group unless it is larger than MAX_GROUP), so each K and V row is loaded once
// per group instead of once per query head. Per tile of WG keys: each invocation scores one key
// against the GROUP queries, the workgroup reduces each query's tile max and sum, then invocation
// d (< HEAD_DIM/4) accumulates output dims d of every query. A query's arithmetic is the same, in the
// same order, whatever GROUP is and whichever queries share its workgroup.
// Each sequence has its own block table row and length, so sequences of any lengths share one
// dispatch (continuous batching); a sequence's result does not depend on the others in the batch.
// The pool holds the `kv` slot's element type (f32, f16 pairs, int8 with a scale per row): a row's
// scale multiplies each of its dot products and value vectors once. With a sliding window
// the walk starts at the first key the query sees.
override WG: u32;                // power of two, >= HEAD_DIM / 4
override HEAD_DIM: u32;
override PAGED: bool;
override GROUP: u32;             // query heads per workgroup, <= MAX_GROUP
override HD4: u32 = HEAD_DIM / 4u;
override ROW: u32 = HD4 + KV_EXTRA;  // words per cached row
//#const MAX_GROUP
//#include softmax
//#include kv_layout
//#include window
//#include kv

// From DECODE_PARAMS in src/kernels/attention.ts (tableStride: entries per block-table row).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [batch, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<KvWord>;            // [pages, 2, kvHeads, pageSize, ROW]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;        // [batch, tableStride]
@group(0) @binding(4) var<storage, read> seqLens: array<u32>;            // [batch], context incl. the new token
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;    // [batch, heads, HD4]

var<workgroup> qTile: array<vec4<f32>, GROUP * HD4>;  // [GROUP][HD4]
var<workgroup> probs: array<f32, GROUP * WG>;         // [GROUP][WG]
var<workgroup> red: array<f32, GROUP * WG>;           // [GROUP][WG]

// Word index of token t's K (which = 0) or V (which = 1) row of sequence b, KV head kvh.
fn tokenRow(b: u32, t: u32, kvh: u32, which: u32) -> u32 {
  let table = b * p.tableStride;
  var page = blockTables[table];
  var offset = t;
  if (PAGED) {
    page = blockTables[table + t / p.pageSize];
    offset = t % p.pageSize;
  }
  return kvRow(KvLayout(p.kvHeads, p.pageSize, ROW), page, which, kvh, offset);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // wid.x = kvh * chunks + chunk: chunk c of KV head kvh's group serves its heads c*GROUP ... .
  let group = p.heads / p.kvHeads;
  let chunks = (group + GROUP - 1u) / GROUP;
  let kvh = wid.x / chunks;
  let first = kvh * group + (wid.x % chunks) * GROUP;  // first query head of this workgroup
  let last = kvh * group + group - 1u;                 // last query head of the group
  let b = wid.y;
  let len = seqLens[b];
  // Slots past the group's last head repeat it: computed, not written (a short last chunk).
  for (var i = lid; i < GROUP * HD4; i += WG) {
    let h = min(first + i / HD4, last);
    qTile[i] = q[(b * p.heads + h) * HD4 + i % HD4] * p.scale;
  }
  workgroupBarrier();

  var m: array<f32, MAX_GROUP>;
  var l: array<f32, MAX_GROUP>;
  var acc: array<vec4<f32>, MAX_GROUP>;
  for (var g = 0u; g < GROUP; g++) { m[g] = NEG_BIG; }
  for (var t0 = kvFirstVisible(len - 1u, p.window); t0 < len; t0 += WG) {
    let t = t0 + lid;
    var s: array<f32, MAX_GROUP>;
    for (var g = 0u; g < GROUP; g++) { s[g] = NEG_BIG; }
    if (t < len) {
      let row = tokenRow(b, t, kvh, 0u);
      for (var g = 0u; g < GROUP; g++) { s[g] = 0.0; }
      for (var d = 0u; d < HD4; d++) {
        let k = kvVec(row + d);
        for (var g = 0u; g < GROUP; g++) { s[g] += dot(qTile[g * HD4 + d], k); }
      }
      let kScale = kvScale(row + HD4);
      for (var g = 0u; g < GROUP; g++) { s[g] *= kScale; }
    }
    for (var g = 0u; g < GROUP; g++) { red[g * WG + lid] = s[g]; }
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
      if (lid < stride) {
        for (var g = 0u; g < GROUP; g++) { red[g * WG + lid] = max(red[g * WG + lid], red[g * WG + lid + stride]); }
      }
      workgroupBarrier();
    }
    var mNew: array<f32, MAX_GROUP>;
    for (var g = 0u; g < GROUP; g++) { mNew[g] = max(m[g], red[g * WG]); }
    workgroupBarrier();
    for (var g = 0u; g < GROUP; g++) {
      var pr = 0.0;
      if (t < len) { pr = exp(s[g] - mNew[g]); }
      probs[g * WG + lid] = pr;
      red[g * WG + lid] = pr;
    }
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
      if (lid < stride) {
        for (var g = 0u; g < GROUP; g++) { red[g * WG + lid] += red[g * WG + lid + stride]; }
      }
      workgroupBarrier();
    }
    for (var g = 0u; g < GROUP; g++) {
      let correction = exp(m[g] - mNew[g]);
      l[g] = l[g] * correction + red[g * WG];
      acc[g] *= correction;
      m[g] = mNew[g];
    }
    if (lid < HD4) {
      let n = min(WG, len - t0);
      for (var j = 0u; j < n; j++) {
        let vRow = tokenRow(b, t0 + j, kvh, 1u);
        let v = kvVec(vRow + lid) * kvScale(vRow + HD4);
        for (var g = 0u; g < GROUP; g++) { acc[g] = fma(vec4<f32>(probs[g * WG + j]), v, acc[g]); }
      }
    }
    workgroupBarrier();
  }
  if (lid < HD4) {
    for (var g = 0u; g < GROUP; g++) {
      let h = first + g;
      if (h <= last) { out[(b * p.heads + h) * HD4 + lid] = acc[g] / l[g]; }
    }
  }
}
