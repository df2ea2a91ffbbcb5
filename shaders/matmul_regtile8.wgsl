// Register-tiled matmul, 8x8 outputs per invocation, no workgroup memory: c[M, N] = a[M, K] · b[N, K]^T.
// Per step of 4 along K an invocation loads 8 vec4s of a and 8 of b and does 64 vec4 dot products
// (256 FMAs for 16 loads): twice the arithmetic per load of matmul_regtile.wgsl, for adapters whose
// loads, not ALUs, limit the 4x4 tile. Accumulators are named registers (acc<row>_<column block>);
// a dynamically indexed private array would spill. K must be a multiple of 4; M and N may be
// anything (edge rows and columns are clamped on read and skipped on write).
override WG_X: u32;   // invocations along N (8 columns each)
override WG_Y: u32;   // invocations along M (8 rows each)

// The fusions of src/kernels/fuse.ts: an RMSNorm prologue (the `prologue` slot) and the epilogue.
//#const FUSE_BINDING
//#include prologue
//#include activation
//#include linear_epilogue

// From MATMUL_PARAMS in src/kernels/matmul.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;        // a [M, K/4]
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;        // [N, K/4]
@group(0) @binding(3) var<storage, read_write> y: array<f32>;        // c [M, N]

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let row0 = gid.y * 8u;
  let col0 = gid.x * 8u;
  if (row0 >= p.M || col0 >= p.N) { return; }
  let k4 = p.K / 4u;
  let ra0 = min(row0 + 0u, p.M - 1u) * k4;
  let ra1 = min(row0 + 1u, p.M - 1u) * k4;
  let ra2 = min(row0 + 2u, p.M - 1u) * k4;
  let ra3 = min(row0 + 3u, p.M - 1u) * k4;
  let ra4 = min(row0 + 4u, p.M - 1u) * k4;
  let ra5 = min(row0 + 5u, p.M - 1u) * k4;
  let ra6 = min(row0 + 6u, p.M - 1u) * k4;
  let ra7 = min(row0 + 7u, p.M - 1u) * k4;
  let rb0 = min(col0 + 0u, p.N - 1u) * k4;
  let rb1 = min(col0 + 1u, p.N - 1u) * k4;
  let rb2 = min(col0 + 2u, p.N - 1u) * k4;
  let rb3 = min(col0 + 3u, p.N - 1u) * k4;
  let rb4 = min(col0 + 4u, p.N - 1u) * k4;
  let rb5 = min(col0 + 5u, p.N - 1u) * k4;
  let rb6 = min(col0 + 6u, p.N - 1u) * k4;
  let rb7 = min(col0 + 7u, p.N - 1u) * k4;
  var acc0_0 = vec4<f32>(0.0);
  var acc0_1 = vec4<f32>(0.0);
  var acc1_0 = vec4<f32>(0.0);
  var acc1_1 = vec4<f32>(0.0);
  var acc2_0 = vec4<f32>(0.0);
  var acc2_1 = vec4<f32>(0.0);
  var acc3_0 = vec4<f32>(0.0);
  var acc3_1 = vec4<f32>(0.0);
  var acc4_0 = vec4<f32>(0.0);
  var acc4_1 = vec4<f32>(0.0);
  var acc5_0 = vec4<f32>(0.0);
  var acc5_1 = vec4<f32>(0.0);
  var acc6_0 = vec4<f32>(0.0);
  var acc6_1 = vec4<f32>(0.0);
  var acc7_0 = vec4<f32>(0.0);
  var acc7_1 = vec4<f32>(0.0);
  // Rows' sums of squares for the fused norm (zero, and unused, without it).
  var ss0 = vec4<f32>(0.0);
  var ss1 = vec4<f32>(0.0);
  for (var k = 0u; k < k4; k++) {
    let b0 = b[rb0 + k];
    let b1 = b[rb1 + k];
    let b2 = b[rb2 + k];
    let b3 = b[rb3 + k];
    let b4 = b[rb4 + k];
    let b5 = b[rb5 + k];
    let b6 = b[rb6 + k];
    let b7 = b[rb7 + k];
    let g = fuse_gamma(k);
    let x0 = x[ra0 + k];
    ss0.x += fuse_ss(x0);
    let a0 = x0 * g;
    acc0_0 += vec4<f32>(dot(a0, b0), dot(a0, b1), dot(a0, b2), dot(a0, b3));
    acc0_1 += vec4<f32>(dot(a0, b4), dot(a0, b5), dot(a0, b6), dot(a0, b7));
    let x1 = x[ra1 + k];
    ss0.y += fuse_ss(x1);
    let a1 = x1 * g;
    acc1_0 += vec4<f32>(dot(a1, b0), dot(a1, b1), dot(a1, b2), dot(a1, b3));
    acc1_1 += vec4<f32>(dot(a1, b4), dot(a1, b5), dot(a1, b6), dot(a1, b7));
    let x2 = x[ra2 + k];
    ss0.z += fuse_ss(x2);
    let a2 = x2 * g;
    acc2_0 += vec4<f32>(dot(a2, b0), dot(a2, b1), dot(a2, b2), dot(a2, b3));
    acc2_1 += vec4<f32>(dot(a2, b4), dot(a2, b5), dot(a2, b6), dot(a2, b7));
    let x3 = x[ra3 + k];
    ss0.w += fuse_ss(x3);
    let a3 = x3 * g;
    acc3_0 += vec4<f32>(dot(a3, b0), dot(a3, b1), dot(a3, b2), dot(a3, b3));
    acc3_1 += vec4<f32>(dot(a3, b4), dot(a3, b5), dot(a3, b6), dot(a3, b7));
    let x4 = x[ra4 + k];
    ss1.x += fuse_ss(x4);
    let a4 = x4 * g;
    acc4_0 += vec4<f32>(dot(a4, b0), dot(a4, b1), dot(a4, b2), dot(a4, b3));
    acc4_1 += vec4<f32>(dot(a4, b4), dot(a4, b5), dot(a4, b6), dot(a4, b7));
    let x5 = x[ra5 + k];
    ss1.y += fuse_ss(x5);
    let a5 = x5 * g;
    acc5_0 += vec4<f32>(dot(a5, b0), dot(a5, b1), dot(a5, b2), dot(a5, b3));
    acc5_1 += vec4<f32>(dot(a5, b4), dot(a5, b5), dot(a5, b6), dot(a5, b7));
    let x6 = x[ra6 + k];
    ss1.z += fuse_ss(x6);
    let a6 = x6 * g;
    acc6_0 += vec4<f32>(dot(a6, b0), dot(a6, b1), dot(a6, b2), dot(a6, b3));
    acc6_1 += vec4<f32>(dot(a6, b4), dot(a6, b5), dot(a6, b6), dot(a6, b7));
    let x7 = x[ra7 + k];
    ss1.w += fuse_ss(x7);
    let a7 = x7 * g;
    acc7_0 += vec4<f32>(dot(a7, b0), dot(a7, b1), dot(a7, b2), dot(a7, b3));
    acc7_1 += vec4<f32>(dot(a7, b4), dot(a7, b5), dot(a7, b6), dot(a7, b7));
  }
  let rows = array<vec4<f32>, 16>(acc0_0, acc0_1, acc1_0, acc1_1, acc2_0, acc2_1, acc3_0, acc3_1, acc4_0, acc4_1, acc5_0, acc5_1, acc6_0, acc6_1, acc7_0, acc7_1);
  let ss = array<f32, 8>(ss0.x, ss0.y, ss0.z, ss0.w, ss1.x, ss1.y, ss1.z, ss1.w);
  let cols = min(8u, p.N - col0);
  for (var i = 0u; i < 8u; i++) {
    let row = row0 + i;
    if (row >= p.M) { break; }
    let r = fuse_rinv(ss[i], p.K);
    epi_store4(row, col0, p.N, min(cols, 4u), rows[i * 2u] * r);
    if (cols > 4u) { epi_store4(row, col0 + 4u, p.N, cols - 4u, rows[i * 2u + 1u] * r); }
  }
}
