// Register-tiled matmul without workgroup memory: c[M, N] = a[M, K] · b[N, K]^T.
// Each invocation computes a 4x4 block of c straight from global memory: per step of 4 along K it
// loads 4 vec4s of a and 4 of b and does 16 vec4 dot products (64 FMAs for 8 loads). There are no
// barriers, which is what makes it the fast family on CPU-backed adapters (SwiftShader), where a
// workgroup barrier costs far more than the loads it saves; GPUs usually prefer matmul.wgsl.
// K must be a multiple of 4; M and N may be anything (edge rows and columns are clamped on read
// and skipped on write).
override WG_X: u32;   // invocations along N (4 columns each)
override WG_Y: u32;   // invocations along M (4 rows each)

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
  let row0 = gid.y * 4u;
  let col0 = gid.x * 4u;
  if (row0 >= p.M || col0 >= p.N) { return; }
  let k4 = p.K / 4u;
  // Clamped row and column indices: reading a valid row twice is cheaper than branching per load.
  let ra0 = row0 * k4;
  let ra1 = min(row0 + 1u, p.M - 1u) * k4;
  let ra2 = min(row0 + 2u, p.M - 1u) * k4;
  let ra3 = min(row0 + 3u, p.M - 1u) * k4;
  let rb0 = col0 * k4;
  let rb1 = min(col0 + 1u, p.N - 1u) * k4;
  let rb2 = min(col0 + 2u, p.N - 1u) * k4;
  let rb3 = min(col0 + 3u, p.N - 1u) * k4;
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  var ss = vec4<f32>(0.0);
  for (var k = 0u; k < k4; k++) {
    let b0 = b[rb0 + k];
    let b1 = b[rb1 + k];
    let b2 = b[rb2 + k];
    let b3 = b[rb3 + k];
    // The fused norm's gamma and squares (1 and 0 without it; see lib/linear_norm.wgsl).
    let g = fuse_gamma(k);
    let x0 = x[ra0 + k];
    let x1 = x[ra1 + k];
    let x2 = x[ra2 + k];
    let x3 = x[ra3 + k];
    ss += vec4<f32>(fuse_ss(x0), fuse_ss(x1), fuse_ss(x2), fuse_ss(x3));
    let a0 = x0 * g;
    let a1 = x1 * g;
    let a2 = x2 * g;
    let a3 = x3 * g;
    acc0 += vec4<f32>(dot(a0, b0), dot(a0, b1), dot(a0, b2), dot(a0, b3));
    acc1 += vec4<f32>(dot(a1, b0), dot(a1, b1), dot(a1, b2), dot(a1, b3));
    acc2 += vec4<f32>(dot(a2, b0), dot(a2, b1), dot(a2, b2), dot(a2, b3));
    acc3 += vec4<f32>(dot(a3, b0), dot(a3, b1), dot(a3, b2), dot(a3, b3));
  }
  let rows = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
  let cols = min(4u, p.N - col0);
  for (var i = 0u; i < 4u; i++) {
    let row = row0 + i;
    if (row >= p.M) { break; }
    epi_store4(row, col0, p.N, cols, rows[i] * fuse_rinv(ss[i], p.K));
  }
}
