// GEMV on packed weights, LANES invocations per output column and a workgroup reduction:
// y[M, N] = x[M, K] · W[N, K]^T for M = BATCH ≤ MAX_M, W in the format the `weights` slot names
// (src/kernels/packed.ts). The GPU-oriented family: neighbouring lanes read neighbouring 16-byte
// word vectors of a weight row, so a column's loads are coalesced, and each lane decodes its word
// vector once for every batch row. Lane l sums word vectors l, l + LANES, … in order, then a fixed
// tree over the lanes combines the sums: neither depends on M, so a row computed in a batch is
// bit-identical to the same row alone.
override LANES: u32;   // a power of two dividing WG
override BATCH: u32;
//#const WG
//#const MAX_M
//#include grid
//#include weights

// From PACKED_PARAMS in src/kernels/packed.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;        // [M, K/4]
@group(0) @binding(2) var<storage, read> w: array<WElem>;            // [N, groups, words]
@group(0) @binding(3) var<storage, read_write> y: array<f32>;        // [M, N]
@group(0) @binding(4) var<storage, read> scales: array<SElem>;       // [N, groups] scales, or block headers; not bound for f16

// Partial sums, [batch row][invocation].
var<workgroup> red: array<f32, WG * MAX_M>;

// The weights of one word vector, position by position (entries past X_PER_W_VEC stay zero).
fn wvec_decode(q: WVec) -> array<vec4<f32>, 8> {
  var d = array<vec4<f32>, 8>();
  d[0] = w_unpack(q, 0u);
  d[1] = w_unpack(q, 1u);
  if (X_PER_W_VEC > 2u) {
    d[2] = w_unpack(q, 2u);
    d[3] = w_unpack(q, 3u);
  }
  if (X_PER_W_VEC > 4u) {
    d[4] = w_unpack(q, 4u);
    d[5] = w_unpack(q, 5u);
    d[6] = w_unpack(q, 6u);
    d[7] = w_unpack(q, 7u);
  }
  return d;
}

// Σ over the first `count` positions j of dot(x vec4 xo + j, d[j]); x past K is never read.
fn wvec_dot(d: array<vec4<f32>, 8>, xo: u32, count: u32) -> f32 {
  var s = dot(x[xo], d[0]);
  if (count > 1u) { s += dot(x[xo + 1u], d[1]); }
  if (count > 2u) { s += dot(x[xo + 2u], d[2]); }
  if (count > 3u) { s += dot(x[xo + 3u], d[3]); }
  if (count > 4u) { s += dot(x[xo + 4u], d[4]); }
  if (count > 5u) { s += dot(x[xo + 5u], d[5]); }
  if (count > 6u) { s += dot(x[xo + 6u], d[6]); }
  if (count > 7u) { s += dot(x[xo + 7u], d[7]); }
  return s;
}

// One word vector's share of a row's sum: its dot with x times the group's scale, plus (formats
// with a min) the min times the sum of the x it meets.
fn wvec_term(d: array<vec4<f32>, 8>, xo: u32, count: u32, f: vec2<f32>) -> f32 {
  var s = wvec_dot(d, xo, count) * f.x;
  if (W_HAS_MIN) {
    var xs = x[xo];
    if (count > 1u) { xs += x[xo + 1u]; }
    if (count > 2u) { xs += x[xo + 2u]; }
    if (count > 3u) { xs += x[xo + 3u]; }
    if (count > 4u) { xs += x[xo + 4u]; }
    if (count > 5u) { xs += x[xo + 5u]; }
    if (count > 6u) { xs += x[xo + 6u]; }
    if (count > 7u) { xs += x[xo + 7u]; }
    s += dot(xs, vec4<f32>(1.0)) * f.y;
  }
  return s;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let lane = lid % LANES;
  let n = workgroupIndex(wid, nwg) * (WG / LANES) + lid / LANES;
  // Lanes past the last column sum the last column again and skip the write, instead of returning
  // early: every invocation must reach the barriers below.
  let row = min(n, p.N - 1u);
  let k4 = p.K / 4u;
  let blocks = (p.K + W_GROUP * W_SUBS - 1u) / (W_GROUP * W_SUBS);
  // Word vectors holding any weight below K; word vector v of a row meets x vec4s v · X_PER_W_VEC on.
  let nvec = (k4 + X_PER_W_VEC - 1u) / X_PER_W_VEC;
  let base = row * blocks;
  var a0 = 0.0;
  var a1 = 0.0;
  var a2 = 0.0;
  var a3 = 0.0;
  var a4 = 0.0;
  var a5 = 0.0;
  var a6 = 0.0;
  var a7 = 0.0;
  for (var v = lane; v < nvec; v += LANES) {
    // Word vector v is WVec u of group g of the row: group s of block g / W_SUBS.
    let g = v / W_VECS_PER_GROUP;
    let b = base + g / W_SUBS;
    let s = g % W_SUBS;
    let d = wvec_decode(w_load_sub(b, s, v % W_VECS_PER_GROUP));
    let f = head_affine(w_head(b), s);
    let xo = v * X_PER_W_VEC;
    let count = min(X_PER_W_VEC, k4 - xo);
    a0 += wvec_term(d, xo, count, f);
    if (BATCH > 1u) { a1 += wvec_term(d, k4 + xo, count, f); }
    if (BATCH > 2u) { a2 += wvec_term(d, 2u * k4 + xo, count, f); }
    if (BATCH > 3u) { a3 += wvec_term(d, 3u * k4 + xo, count, f); }
    if (BATCH > 4u) { a4 += wvec_term(d, 4u * k4 + xo, count, f); }
    if (BATCH > 5u) { a5 += wvec_term(d, 5u * k4 + xo, count, f); }
    if (BATCH > 6u) { a6 += wvec_term(d, 6u * k4 + xo, count, f); }
    if (BATCH > 7u) { a7 += wvec_term(d, 7u * k4 + xo, count, f); }
  }
  let acc = array<f32, MAX_M>(a0, a1, a2, a3, a4, a5, a6, a7);
  for (var m = 0u; m < BATCH; m++) { red[m * WG + lid] = acc[m]; }
  workgroupBarrier();
  for (var s = LANES / 2u; s > 0u; s >>= 1u) {
    if (lane < s) {
      for (var m = 0u; m < BATCH; m++) { red[m * WG + lid] += red[m * WG + lid + s]; }
    }
    workgroupBarrier();
  }
  if (lane == 0u && n < p.N) {
    for (var m = 0u; m < BATCH; m++) { y[m * p.N + n] = red[m * WG + lid]; }
  }
}
