// GEMV, eight output columns per invocation: y[M, N] = x[M, K] · w[N, K]^T for M <= MAX_M.
// gemv_cols4.wgsl with twice the columns: each x vec4 loaded serves eight weight rows (two 4x4
// matrices, W for columns 0-3 and V for 4-7), so loads per product fall to (8 + M)/(8M). On
// SwiftShader at [M x 576]·[576 x 1536] it ran M = 1 at 1.8 ms against 2.3 (cols4) and 6.5
// (rowwise). Twice the accumulators (16 vec4 at M = 8), so on GPUs it may spill where cols4 does not:
// both stay candidates. Each column sums dot(x[k], w[k]) over k in order whatever M is, so batched
// rows are bit-identical to rows computed alone.
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
  let n0 = (workgroupIndex(wid, nwg) * WG + lid) * 8u;
  if (n0 >= p.N) { return; }
  let k4 = p.K / 4u;
  // Columns past N (N not a multiple of 8) read the last row again; their sums are not written.
  let r0 = n0 * k4;
  let r1 = min(n0 + 1u, p.N - 1u) * k4;
  let r2 = min(n0 + 2u, p.N - 1u) * k4;
  let r3 = min(n0 + 3u, p.N - 1u) * k4;
  let r4 = min(n0 + 4u, p.N - 1u) * k4;
  let r5 = min(n0 + 5u, p.N - 1u) * k4;
  let r6 = min(n0 + 6u, p.N - 1u) * k4;
  let r7 = min(n0 + 7u, p.N - 1u) * k4;
  // a<m>.c is row m's sum for column n0 + c.
  var a0 = vec4<f32>(0.0);
  var a1 = vec4<f32>(0.0);
  var a2 = vec4<f32>(0.0);
  var a3 = vec4<f32>(0.0);
  var a4 = vec4<f32>(0.0);
  var a5 = vec4<f32>(0.0);
  var a6 = vec4<f32>(0.0);
  var a7 = vec4<f32>(0.0);
  var b0 = vec4<f32>(0.0);
  var b1 = vec4<f32>(0.0);
  var b2 = vec4<f32>(0.0);
  var b3 = vec4<f32>(0.0);
  var b4 = vec4<f32>(0.0);
  var b5 = vec4<f32>(0.0);
  var b6 = vec4<f32>(0.0);
  var b7 = vec4<f32>(0.0);
  // s<m>: row m's sum of squares, for the fused RMSNorm (zero, and unused, without it).
  var s = array<f32, MAX_M>();
  for (var k = 0u; k < k4; k++) {
    let W = mat4x4<f32>(w[r0 + k], w[r1 + k], w[r2 + k], w[r3 + k]);
    let V = mat4x4<f32>(w[r4 + k], w[r5 + k], w[r6 + k], w[r7 + k]);
    let g = fuse_gamma(k);
    { let xr = x[k]; s[0] += fuse_ss(xr); let xv = xr * g; a0 += xv * W; b0 += xv * V; }
    if (BATCH > 1u) { let xr = x[1u * k4 + k]; s[1] += fuse_ss(xr); let xv = xr * g; a1 += xv * W; b1 += xv * V; }
    if (BATCH > 2u) { let xr = x[2u * k4 + k]; s[2] += fuse_ss(xr); let xv = xr * g; a2 += xv * W; b2 += xv * V; }
    if (BATCH > 3u) { let xr = x[3u * k4 + k]; s[3] += fuse_ss(xr); let xv = xr * g; a3 += xv * W; b3 += xv * V; }
    if (BATCH > 4u) { let xr = x[4u * k4 + k]; s[4] += fuse_ss(xr); let xv = xr * g; a4 += xv * W; b4 += xv * V; }
    if (BATCH > 5u) { let xr = x[5u * k4 + k]; s[5] += fuse_ss(xr); let xv = xr * g; a5 += xv * W; b5 += xv * V; }
    if (BATCH > 6u) { let xr = x[6u * k4 + k]; s[6] += fuse_ss(xr); let xv = xr * g; a6 += xv * W; b6 += xv * V; }
    if (BATCH > 7u) { let xr = x[7u * k4 + k]; s[7] += fuse_ss(xr); let xv = xr * g; a7 += xv * W; b7 += xv * V; }
  }
  let acc = array<vec4<f32>, MAX_M>(a0, a1, a2, a3, a4, a5, a6, a7);
  let acc2 = array<vec4<f32>, MAX_M>(b0, b1, b2, b3, b4, b5, b6, b7);
  let cols = min(8u, p.N - n0);
  for (var m = 0u; m < BATCH; m++) {
    let r = fuse_rinv(s[m], p.K);
    epi_store4(m, n0, p.N, min(cols, 4u), acc[m] * r);
    if (cols > 4u) { epi_store4(m, n0 + 4u, p.N, cols - 4u, acc2[m] * r); }
  }
}
