// Register-tiled matmul, 8x8 outputs per invocation, no workgroup memory: c[M, N] = a[M, K] · b[N, K]^T.
// Per step of 4 along K an invocation loads 8 vec4s of a and 8 of b and does 64 vec4 dot products
// (256 FMAs for 16 loads): twice the arithmetic per load of matmul_regtile.wgsl, for adapters whose
// loads, not ALUs, limit the 4x4 tile. Accumulators are named registers (acc<row>_<column block>);
// a dynamically indexed private array would spill. K must be a multiple of 4; M and N may be
// anything (edge rows and columns are clamped on read and skipped on write).
override WG_X: u32;   // invocations along N (8 columns each)
override WG_Y: u32;   // invocations along M (8 rows each)

// From MATMUL_PARAMS in src/kernels/matmul.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;        // [M, K/4]
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;        // [N, K/4]
@group(0) @binding(3) var<storage, read_write> c: array<f32>;        // [M, N]

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
  for (var k = 0u; k < k4; k++) {
    let b0 = b[rb0 + k];
    let b1 = b[rb1 + k];
    let b2 = b[rb2 + k];
    let b3 = b[rb3 + k];
    let b4 = b[rb4 + k];
    let b5 = b[rb5 + k];
    let b6 = b[rb6 + k];
    let b7 = b[rb7 + k];
    let a0 = a[ra0 + k];
    acc0_0 += vec4<f32>(dot(a0, b0), dot(a0, b1), dot(a0, b2), dot(a0, b3));
    acc0_1 += vec4<f32>(dot(a0, b4), dot(a0, b5), dot(a0, b6), dot(a0, b7));
    let a1 = a[ra1 + k];
    acc1_0 += vec4<f32>(dot(a1, b0), dot(a1, b1), dot(a1, b2), dot(a1, b3));
    acc1_1 += vec4<f32>(dot(a1, b4), dot(a1, b5), dot(a1, b6), dot(a1, b7));
    let a2 = a[ra2 + k];
    acc2_0 += vec4<f32>(dot(a2, b0), dot(a2, b1), dot(a2, b2), dot(a2, b3));
    acc2_1 += vec4<f32>(dot(a2, b4), dot(a2, b5), dot(a2, b6), dot(a2, b7));
    let a3 = a[ra3 + k];
    acc3_0 += vec4<f32>(dot(a3, b0), dot(a3, b1), dot(a3, b2), dot(a3, b3));
    acc3_1 += vec4<f32>(dot(a3, b4), dot(a3, b5), dot(a3, b6), dot(a3, b7));
    let a4 = a[ra4 + k];
    acc4_0 += vec4<f32>(dot(a4, b0), dot(a4, b1), dot(a4, b2), dot(a4, b3));
    acc4_1 += vec4<f32>(dot(a4, b4), dot(a4, b5), dot(a4, b6), dot(a4, b7));
    let a5 = a[ra5 + k];
    acc5_0 += vec4<f32>(dot(a5, b0), dot(a5, b1), dot(a5, b2), dot(a5, b3));
    acc5_1 += vec4<f32>(dot(a5, b4), dot(a5, b5), dot(a5, b6), dot(a5, b7));
    let a6 = a[ra6 + k];
    acc6_0 += vec4<f32>(dot(a6, b0), dot(a6, b1), dot(a6, b2), dot(a6, b3));
    acc6_1 += vec4<f32>(dot(a6, b4), dot(a6, b5), dot(a6, b6), dot(a6, b7));
    let a7 = a[ra7 + k];
    acc7_0 += vec4<f32>(dot(a7, b0), dot(a7, b1), dot(a7, b2), dot(a7, b3));
    acc7_1 += vec4<f32>(dot(a7, b4), dot(a7, b5), dot(a7, b6), dot(a7, b7));
  }
  let rows = array<vec4<f32>, 16>(acc0_0, acc0_1, acc1_0, acc1_1, acc2_0, acc2_1, acc3_0, acc3_1, acc4_0, acc4_1, acc5_0, acc5_1, acc6_0, acc6_1, acc7_0, acc7_1);
  for (var i = 0u; i < 8u; i++) {
    let row = row0 + i;
    if (row >= p.M) { break; }
    for (var j = 0u; j < 8u; j++) {
      if (col0 + j < p.N) { c[row * p.N + col0 + j] = rows[i * 2u + j / 4u][j % 4u]; }
    }
  }
}
