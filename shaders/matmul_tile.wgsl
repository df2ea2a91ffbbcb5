// Register-tiled matmul, no workgroup memory and no barriers: c[M, N] = a[M, K] · b[N, K]^T. Each
// invocation computes a TM x TN tile of c, reading vec4s of its TM rows of a and TN rows of b
// straight from memory, KU vec4 steps of K per loop iteration. TM, TN and KU are the tile the
// autotuner searches (src/kernels/variants.ts, matmulSpace); the lines with row, column and K-step
// markers are written once per element and unrolled by unrollTile (src/kernels/unroll.ts), because on the
// software adapter a loop over a private array indexes it per lane (a gather per access) while a
// literal index is a plain load. The accumulators sit in one private array with literal indices:
// the same speed as named registers there, and 3–8× less compile time (SwiftShader's JIT compiles
// each pipeline; a 16x16 tile of named registers took 4–8 s).
// K must be a multiple of 4; M and N may be anything (edge rows and columns are clamped on read
// and skipped by the store).
override WG_X: u32;   // invocations along N (TN columns each)
override WG_Y: u32;   // invocations along M (TM rows each)
//#const TM           // rows per invocation
//#const TN           // columns per invocation
//#const KU           // vec4 steps of K per loop iteration

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
  let row0 = gid.y * TM;
  let col0 = gid.x * TN;
  if (row0 >= p.M || col0 >= p.N) { return; }
  let k4 = p.K / 4u;
  let ra$i = min(row0 + $iu, p.M - 1u) * k4;
  let rb$j = min(col0 + $ju, p.N - 1u) * k4;
  var acc: array<f32, TM * TN>;
  // Each row's sum of squares for the fused norm (zero, and unused, without it).
  var ss: array<f32, TM>;

  // The K loop: only loads and FMAs into acc.
  for (var k = 0u; k < k4; k += KU) {
    // Where k4 is not a multiple of KU, the steps past the end read a valid a and a zero b.
    let k$u = min(k + $uu, k4 - 1u);
    let live$u = k + $uu < k4;
    // The fused norm's gamma and squares (1 and 0 without it); a clamped step past K adds no square.
    let g$u = fuse_gamma(k$u);
    let x$u_$i = x[ra$i + k$u];
    ss[$i] += select(0.0, fuse_ss(x$u_$i), live$u);
    let a$u_$i = x$u_$i * g$u;
    let b$u_$j = select(vec4<f32>(0.0), b[rb$j + k$u], live$u);
    acc[$ij] = fma(a$u_$i.x, b$u_$j.x, fma(a$u_$i.y, b$u_$j.y, fma(a$u_$i.z, b$u_$j.z, fma(a$u_$i.w, b$u_$j.w, acc[$ij]))));
  }

  // The store: the register tile by column quads (TN is a multiple of 4 for the fusions, so a quad
  // starts at a multiple of 4), each row times its norm factor, through the epilogue.
  for (var i = 0u; i < TM; i++) {
    let row = row0 + i;
    if (row >= p.M) { break; }
    let r = fuse_rinv(ss[i], p.K);
    for (var j = 0u; j < TN; j += 4u) {
      let col = col0 + j;
      if (col >= p.N) { break; }
      let e = i * TN + j;
      let quad = vec4<f32>(acc[e], acc[min(e + 1u, TM * TN - 1u)], acc[min(e + 2u, TM * TN - 1u)],
                           acc[min(e + 3u, TM * TN - 1u)]);
      epi_store4(row, col, p.N, min(min(4u, TN - j), p.N - col), quad * r);
    }
  }
}
