// Greedy sampling: the index of each row's largest value, lowest index on a tie (as torch.argmax).
// One workgroup per row; each invocation scans a strided slice, then a tree reduction.
override WG: u32;  // power of two

// From ARGMAX_PARAMS in src/kernels/rowwise.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;              // [rows, n]
@group(0) @binding(2) var<storage, read_write> out: array<u32>;      // [rows]

var<workgroup> bestVal: array<f32, WG>;
var<workgroup> bestIdx: array<u32, WG>;

const NONE: u32 = 0xffffffffu;  // no candidate yet (a lane with no elements)

// True when (v, i) should replace (bv, bi): any value beats none; else larger, or equal with a lower index.
fn better(v: f32, i: u32, bv: f32, bi: u32) -> bool {
  return i != NONE && (bi == NONE || v > bv || (v == bv && i < bi));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x;
  if (row >= p.rows) { return; }
  var bv = 0.0;
  var bi = NONE;
  for (var i = lid; i < p.n; i += WG) {
    let v = x[row * p.n + i];
    if (better(v, i, bv, bi)) { bv = v; bi = i; }
  }
  bestVal[lid] = bv;
  bestIdx[lid] = bi;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride && better(bestVal[lid + stride], bestIdx[lid + stride], bestVal[lid], bestIdx[lid])) {
      bestVal[lid] = bestVal[lid + stride];
      bestIdx[lid] = bestIdx[lid + stride];
    }
    workgroupBarrier();
  }
  if (lid == 0u) { out[row] = bestIdx[0]; }
}
