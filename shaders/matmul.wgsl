// Tiled matmul for prefill: c[M, N] = a[M, K] · b[N, K]^T (b is an nn.Linear weight, [out, in]).
// Each workgroup computes a TILE_M x TILE_N block of c. Per step of TILE_K it stages an a-tile and a
// b-tile in workgroup memory, transposed to k-major so the inner loop reads one vec4 of 4 rows and
// one vec4 of 4 columns; each invocation keeps a 4x4 register tile of accumulators.
// K must be a multiple of 4 (the config schema enforces it); M and N may be anything.
override WG_X: u32;          // invocations along N
override WG_Y: u32;          // invocations along M
override TILE_K: u32;        // multiple of 4
override TILE_M: u32 = WG_Y * 4u;
override TILE_N: u32 = WG_X * 4u;

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

var<workgroup> aTile: array<vec4<f32>, TILE_K * TILE_M / 4u>;     // [TILE_K][TILE_M/4]
var<workgroup> bTile: array<vec4<f32>, TILE_K * TILE_N / 4u>;     // [TILE_K][TILE_N/4]

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(local_invocation_index) li: u32) {
  let rowBase = wid.y * TILE_M;
  let colBase = wid.x * TILE_N;
  let k4 = p.K / 4u;
  let kStep4 = TILE_K / 4u;
  let threads = WG_X * WG_Y;
  var acc: array<vec4<f32>, 4>;  // acc[i] = c[row i of my tile, 4 columns]

  for (var k0 = 0u; k0 < k4; k0 += kStep4) {
    // Stage a: TILE_M rows x TILE_K/4 vec4s, each scattered to 4 k-major slots.
    for (var i = li; i < TILE_M * kStep4; i += threads) {
      let r = i / kStep4;
      let kv = i % kStep4;
      var v = vec4<f32>(0.0);
      if (rowBase + r < p.M && k0 + kv < k4) { v = x[(rowBase + r) * k4 + k0 + kv] * fuse_gamma(k0 + kv); }
      let slot = r / 4u;
      let lane = r % 4u;
      aTile[(kv * 4u + 0u) * (TILE_M / 4u) + slot][lane] = v.x;
      aTile[(kv * 4u + 1u) * (TILE_M / 4u) + slot][lane] = v.y;
      aTile[(kv * 4u + 2u) * (TILE_M / 4u) + slot][lane] = v.z;
      aTile[(kv * 4u + 3u) * (TILE_M / 4u) + slot][lane] = v.w;
    }
    for (var i = li; i < TILE_N * kStep4; i += threads) {
      let n = i / kStep4;
      let kv = i % kStep4;
      var v = vec4<f32>(0.0);
      if (colBase + n < p.N && k0 + kv < k4) { v = b[(colBase + n) * k4 + k0 + kv]; }
      let slot = n / 4u;
      let lane = n % 4u;
      bTile[(kv * 4u + 0u) * (TILE_N / 4u) + slot][lane] = v.x;
      bTile[(kv * 4u + 1u) * (TILE_N / 4u) + slot][lane] = v.y;
      bTile[(kv * 4u + 2u) * (TILE_N / 4u) + slot][lane] = v.z;
      bTile[(kv * 4u + 3u) * (TILE_N / 4u) + slot][lane] = v.w;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TILE_K; kk++) {
      let av = aTile[kk * (TILE_M / 4u) + lid.y];
      let bv = bTile[kk * (TILE_N / 4u) + lid.x];
      acc[0] = fma(vec4<f32>(av.x), bv, acc[0]);
      acc[1] = fma(vec4<f32>(av.y), bv, acc[1]);
      acc[2] = fma(vec4<f32>(av.z), bv, acc[2]);
      acc[3] = fma(vec4<f32>(av.w), bv, acc[3]);
    }
    workgroupBarrier();
  }

  // The fused norm's row factors come from a pass over each row (1 without it): the staged a-tile
  // is shared by the workgroup, so no invocation sees a whole row in its own loop.
  let col = colBase + lid.x * 4u;
  if (col >= p.N) { return; }
  for (var i = 0u; i < 4u; i++) {
    let row = rowBase + lid.y * 4u + i;
    if (row >= p.M) { break; }
    epi_store4(row, col, p.N, min(4u, p.N - col), acc[i] * fuse_row_rinv(row * k4, k4));
  }
}
