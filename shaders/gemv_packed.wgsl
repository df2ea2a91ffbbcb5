// GEMV on packed weights, COLS (4 or 8) output columns per invocation: y[M, N] = x[M, K] · W[N, K]^T
// for M = ROWS ≤ 8, W in the format the `weights` slot names (src/kernels/packed.ts), dequantized
// in registers. The CPU-oriented family: no workgroup memory, no barriers, and each x vec4 loaded
// serves COLS columns and each decoded weight every batch row (see lib/packed_tile.wgsl), which is
// what load- and ALU-bound CPU adapters such as SwiftShader need. Batch-invariant: a column's sum
// does not depend on M (lib/packed_tile.wgsl), as speculative decoding's verify pass needs.
override WG: u32;
// The batch is a pipeline constant: the branches on it fold away and the sums stay in registers.
override ROWS: u32;
override COLS: u32;
//#include grid
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
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;        // [M, K/4]
@group(0) @binding(2) var<storage, read> w: array<WElem>;            // [N, groups, words]
@group(0) @binding(3) var<storage, read_write> y: array<f32>;        // [M, N]
@group(0) @binding(4) var<storage, read> scales: array<SElem>;       // [N, groups] scales, or block headers; not bound for f16

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let n0 = (workgroupIndex(wid, nwg) * WG + lid) * COLS;
  if (n0 >= p.N) { return; }
  // Columns past N (N not a multiple of COLS) read the last row again; their sums are not written.
  let last = vec4<u32>(p.N - 1u);
  let na = min(vec4<u32>(n0) + vec4<u32>(0u, 1u, 2u, 3u), last);
  let nb = min(vec4<u32>(n0) + vec4<u32>(4u, 5u, 6u, 7u), last);
  // Batch row m starts at x vec4 m · K/4 (rows at or past ROWS are never read).
  let k4 = p.K / 4u;
  let xa = vec4<u32>(0u, 1u, 2u, 3u) * k4;
  let xb = vec4<u32>(4u, 5u, 6u, 7u) * k4;
  var a = TileSums();
  var b = TileSums();
  tile_run(na, nb, xa, xb, p.K, &a, &b);
  tile_store(0u, ROWS, n0, min(COLS, p.N - n0), p.N, tile_rinv(xa, xb, k4), &a, &b);
}
