// Batched paged attention for decode: one new query per sequence against its whole cached context.
// Workgroup = (head, sequence). Per tile of WG keys: each invocation scores one key, the workgroup
// reduces the tile's max and sum, then invocation d (< HEAD_DIM/4) accumulates output dims d.
// Each sequence has its own block table row and length, so sequences of any lengths share one
// dispatch (continuous batching); a sequence's result does not depend on the others in the batch.
override WG: u32;                // power of two, >= HEAD_DIM / 4
override HEAD_DIM: u32;
override PAGED: bool;
override HD4: u32 = HEAD_DIM / 4u;
//#const MAX_HD4
//#include softmax
//#include kv_layout

// From DECODE_PARAMS in src/kernels/attention.ts (tableStride: entries per block-table row).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;            // [batch, heads, HD4]
@group(0) @binding(2) var<storage, read> pool: array<vec4<f32>>;         // [pages, 2, kvHeads, pageSize, HD4]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;        // [batch, tableStride]
@group(0) @binding(4) var<storage, read> seqLens: array<u32>;            // [batch], context incl. the new token
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;    // [batch, heads, HD4]

var<workgroup> qTile: array<vec4<f32>, MAX_HD4>;
var<workgroup> probs: array<f32, WG>;
var<workgroup> red: array<f32, WG>;

// vec4 index of token t's K (which = 0) or V (which = 1) row of sequence b, KV head kvh.
fn tokenRow(b: u32, t: u32, kvh: u32, which: u32) -> u32 {
  let table = b * p.tableStride;
  var page = blockTables[table];
  var offset = t;
  if (PAGED) {
    page = blockTables[table + t / p.pageSize];
    offset = t % p.pageSize;
  }
  return kvRow(KvLayout(p.kvHeads, p.pageSize, HD4), page, which, kvh, offset);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let h = wid.x;
  let b = wid.y;
  let kvh = h / (p.heads / p.kvHeads);
  let len = seqLens[b];
  if (lid < HD4) { qTile[lid] = q[(b * p.heads + h) * HD4 + lid] * p.scale; }
  workgroupBarrier();

  var m = NEG_BIG;
  var l = 0.0;
  var acc = vec4<f32>(0.0);
  for (var t0 = 0u; t0 < len; t0 += WG) {
    let t = t0 + lid;
    var s = NEG_BIG;
    if (t < len) {
      let row = tokenRow(b, t, kvh, 0u);
      var dotv = 0.0;
      for (var d = 0u; d < HD4; d++) { dotv += dot(qTile[d], pool[row + d]); }
      s = dotv;
    }
    red[lid] = s;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
      if (lid < stride) { red[lid] = max(red[lid], red[lid + stride]); }
      workgroupBarrier();
    }
    let mNew = max(m, red[0]);
    workgroupBarrier();
    var pr = 0.0;
    if (t < len) { pr = exp(s - mNew); }
    probs[lid] = pr;
    red[lid] = pr;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
      if (lid < stride) { red[lid] += red[lid + stride]; }
      workgroupBarrier();
    }
    let correction = exp(m - mNew);
    l = l * correction + red[0];
    if (lid < HD4) {
      acc *= correction;
      let n = min(WG, len - t0);
      for (var j = 0u; j < n; j++) { acc = fma(vec4<f32>(probs[j]), pool[tokenRow(b, t0 + j, kvh, 1u) + lid], acc); }
    }
    m = mNew;
    workgroupBarrier();
  }
  if (lid < HD4) { out[(b * p.heads + h) * HD4 + lid] = acc / l; }
}
