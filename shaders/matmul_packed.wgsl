// Matmul on packed weights for prefill: y[M, N] = x[M, K] · W[N, K]^T, W in the format the `weights`
// slot names (src/kernels/packed.ts). Register-tiled like matmul_regtile.wgsl: each invocation
// computes ROWS × COLS outputs straight from global memory, no workgroup memory and no barriers,
// and dequantizes each of its columns' weight groups once for all ROWS rows (lib/packed_tile.wgsl).
// M and N may be anything: edge rows and columns are clamped on read and skipped on write.
override WG_X: u32;   // invocations along N (COLS columns each)
override WG_Y: u32;   // invocations along M (ROWS rows each)
override ROWS: u32;   // 4 or 8
override COLS: u32;   // 4 or 8
//#include weights
// The fusions of src/kernels/fuse.ts: an RMSNorm prologue (the `prologue` slot) and the epilogue.
//#const FUSE_BINDING
//#include prologue
//#include activation
//#include linear_epilogue
//#include packed_tile

// From PACKED_PARAMS in src/kernels/packed.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;        // [M, K/4], the activations
@group(0) @binding(2) var<storage, read> w: array<WElem>;            // [N, groups, words]
@group(0) @binding(3) var<storage, read_write> y: array<f32>;        // [M, N]
@group(0) @binding(4) var<storage, read> scales: array<SElem>;       // [N, groups] scales, or block headers; not bound for f16

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let row0 = gid.y * ROWS;
  let col0 = gid.x * COLS;
  if (row0 >= p.M || col0 >= p.N) { return; }
  // Clamped rows and columns: reading a valid row twice is cheaper than branching per load.
  let lastN = vec4<u32>(p.N - 1u);
  let na = min(vec4<u32>(col0) + vec4<u32>(0u, 1u, 2u, 3u), lastN);
  let nb = min(vec4<u32>(col0) + vec4<u32>(4u, 5u, 6u, 7u), lastN);
  let lastM = vec4<u32>(p.M - 1u);
  let k4 = p.K / 4u;
  let xa = min(vec4<u32>(row0) + vec4<u32>(0u, 1u, 2u, 3u), lastM) * k4;
  let xb = min(vec4<u32>(row0) + vec4<u32>(4u, 5u, 6u, 7u), lastM) * k4;
  var a = TileSums();
  var b = TileSums();
  tile_run(na, nb, xa, xb, p.K, &a, &b);
  tile_store(row0, min(ROWS, p.M - row0), col0, min(COLS, p.N - col0), p.N, tile_rinv(xa, xb, k4), &a, &b);
}
