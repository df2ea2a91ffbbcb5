// GEMV for decode: y[M, N] = x[M, K] · w[N, K]^T for a small batch M <= MAX_M.
// Bandwidth is all that matters: each workgroup owns ROWS output columns, its invocations stride
// over K reading w as coalesced vec4s, each weight read once and applied to all M rows, then a tree
// reduction. The reduction order depends only on K and WG, never on M, so a row computed in a batch
// is bit-identical to the same row computed alone.
override WG: u32;   // power of two
//#const ROWS   // output columns per workgroup
//#const MAX_M  // largest decode batch
//#include grid
// The fusions of src/kernels/fuse.ts: an RMSNorm prologue (the `prologue` slot) and the epilogue.
//#const FUSE_BINDING
//#include prologue
//#include activation
//#include linear_epilogue

// From GEMV_PARAMS in src/kernels/gemv.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;        // [M, K/4]
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;        // [N, K/4]
@group(0) @binding(3) var<storage, read_write> y: array<f32>;        // [M, N]

var<workgroup> partial: array<f32, MAX_M * ROWS * WG>;  // [(m, r)][lane]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let colBase = workgroupIndex(wid, nwg) * ROWS;
  if (colBase >= p.N) { return; }
  let k4 = p.K / 4u;
  var acc: array<f32, MAX_M * ROWS>;
  for (var k = lid; k < k4; k += WG) {
    var xs: array<vec4<f32>, MAX_M>;
    let g = fuse_gamma(k);  // the fused norm's gamma (1 without it)
    for (var m = 0u; m < p.M; m++) { xs[m] = x[m * k4 + k] * g; }
    for (var r = 0u; r < ROWS; r++) {
      let n = min(colBase + r, p.N - 1u);  // clamped reads keep the loop uniform; the write is skipped
      let wv = w[n * k4 + k];
      for (var m = 0u; m < p.M; m++) { acc[m * ROWS + r] += dot(xs[m], wv); }
    }
  }
  for (var j = 0u; j < p.M * ROWS; j++) { partial[j * WG + lid] = acc[j]; }
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      for (var j = 0u; j < p.M * ROWS; j++) { partial[j * WG + lid] += partial[j * WG + lid + stride]; }
    }
    workgroupBarrier();
  }
  // One invocation per batch row writes the workgroup's ROWS = 4 columns as a quad, through the
  // epilogue, times the row's norm factor (a pass over the row; 1 without the fused norm).
  if (lid < p.M) {
    let m = lid;
    let sums = vec4<f32>(partial[(m * ROWS) * WG], partial[(m * ROWS + 1u) * WG],
                         partial[(m * ROWS + 2u) * WG], partial[(m * ROWS + 3u) * WG]);
    epi_store4(m, colBase, p.N, min(ROWS, p.N - colBase), sums * fuse_row_rinv(m * k4, k4));
  }
}
