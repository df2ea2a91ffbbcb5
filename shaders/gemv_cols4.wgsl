// GEMV, four output columns per invocation: y[M, N] = x[M, K] · w[N, K]^T for M <= MAX_M.
// The rowwise kernel loads one x vec4 per batch row for every weight vec4, so at M = 8 it issues
// nine loads per eight vec4 products, and on CPU-backed adapters (SwiftShader) loads, not
// arithmetic, set its speed: a B = 4 decode step cost 2.8x a B = 1 step on the same bytes. Here an
// invocation owns four neighbouring columns: each x vec4 it loads serves all four (x · W, W the four
// weight vec4s as a matrix), so loads per product fall from (1 + M)/M to (4 + M)/(4M).
// No workgroup memory, no barriers. Each column sums dot(x[k], w[k]) over k in order, whatever M
// is, so a row computed in a batch is bit-identical to the same row computed alone (the verify
// pass of speculative decoding relies on it).
override WG: u32;
// The batch is a pipeline constant: the branches on it fold away and the accumulators stay in
// registers (see gemv_rowwise.wgsl).
override BATCH: u32;
//#const MAX_M
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

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let n0 = (workgroupIndex(wid, nwg) * WG + lid) * 4u;
  if (n0 >= p.N) { return; }
  let k4 = p.K / 4u;
  // Columns past N (N not a multiple of 4) read the last row again; their sums are not written.
  let r0 = n0 * k4;
  let r1 = min(n0 + 1u, p.N - 1u) * k4;
  let r2 = min(n0 + 2u, p.N - 1u) * k4;
  let r3 = min(n0 + 3u, p.N - 1u) * k4;
  // a<m>.c is row m's sum for column n0 + c.
  var a0 = vec4<f32>(0.0);
  var a1 = vec4<f32>(0.0);
  var a2 = vec4<f32>(0.0);
  var a3 = vec4<f32>(0.0);
  var a4 = vec4<f32>(0.0);
  var a5 = vec4<f32>(0.0);
  var a6 = vec4<f32>(0.0);
  var a7 = vec4<f32>(0.0);
  // Each row's sum of squares, for the fused RMSNorm (zero, and unused, without it).
  var s = array<f32, MAX_M>();
  for (var k = 0u; k < k4; k++) {
    let W = mat4x4<f32>(w[r0 + k], w[r1 + k], w[r2 + k], w[r3 + k]);
    let g = fuse_gamma(k);
    { let xr = x[k]; s[0] += fuse_ss(xr); a0 += (xr * g) * W; }
    if (BATCH > 1u) { let xr = x[1u * k4 + k]; s[1] += fuse_ss(xr); a1 += (xr * g) * W; }
    if (BATCH > 2u) { let xr = x[2u * k4 + k]; s[2] += fuse_ss(xr); a2 += (xr * g) * W; }
    if (BATCH > 3u) { let xr = x[3u * k4 + k]; s[3] += fuse_ss(xr); a3 += (xr * g) * W; }
    if (BATCH > 4u) { let xr = x[4u * k4 + k]; s[4] += fuse_ss(xr); a4 += (xr * g) * W; }
    if (BATCH > 5u) { let xr = x[5u * k4 + k]; s[5] += fuse_ss(xr); a5 += (xr * g) * W; }
    if (BATCH > 6u) { let xr = x[6u * k4 + k]; s[6] += fuse_ss(xr); a6 += (xr * g) * W; }
    if (BATCH > 7u) { let xr = x[7u * k4 + k]; s[7] += fuse_ss(xr); a7 += (xr * g) * W; }
  }
  let acc = array<vec4<f32>, MAX_M>(a0, a1, a2, a3, a4, a5, a6, a7);
  let cols = min(4u, p.N - n0);
  for (var m = 0u; m < BATCH; m++) {
    epi_store4(m, n0, p.N, cols, acc[m] * fuse_rinv(s[m], p.K));
  }
}
