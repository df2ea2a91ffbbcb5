enable subgroups;

// GEMV with subgroup reductions: y[M, N] = x[M, K] · w[N, K]^T for M = BATCH <= 8.
// Each subgroup owns one output column: its lanes read consecutive vec4s of the weight row (so a
// subgroup's loads are contiguous, coalesced on GPUs and one cache line at a time on CPUs), and
// subgroupAdd combines the lanes. No workgroup memory, no barriers. Only compiled when the adapter
// has the `subgroups` feature. The lane partition depends on the subgroup size, not on M, so a
// batched row equals the same row computed alone.
override WG: u32;
override BATCH: u32;
//#const MAX_M
//#include grid

// From GEMV_PARAMS in src/kernels/gemv.ts.
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;        // [M, K/4]
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;        // [N, K/4]
@group(0) @binding(3) var<storage, read_write> y: array<f32>;        // [M, N]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgSize: u32) {
  let columnsPerGroup = WG / sgSize;
  let n = workgroupIndex(wid, nwg) * columnsPerGroup + lid / sgSize;
  // Spare subgroups past the last column read a valid row and skip the write, instead of
  // returning early: subgroupAdd must stay in uniform control flow.
  let k4 = p.K / 4u;
  let row = min(n, p.N - 1u) * k4;
  var a0 = vec4<f32>(0.0);
  var a1 = vec4<f32>(0.0);
  var a2 = vec4<f32>(0.0);
  var a3 = vec4<f32>(0.0);
  var a4 = vec4<f32>(0.0);
  var a5 = vec4<f32>(0.0);
  var a6 = vec4<f32>(0.0);
  var a7 = vec4<f32>(0.0);
  for (var k = lane; k < k4; k += sgSize) {
    let wv = w[row + k];
    a0 = fma(x[k], wv, a0);
    if (BATCH > 1u) { a1 = fma(x[k4 + k], wv, a1); }
    if (BATCH > 2u) { a2 = fma(x[2u * k4 + k], wv, a2); }
    if (BATCH > 3u) { a3 = fma(x[3u * k4 + k], wv, a3); }
    if (BATCH > 4u) { a4 = fma(x[4u * k4 + k], wv, a4); }
    if (BATCH > 5u) { a5 = fma(x[5u * k4 + k], wv, a5); }
    if (BATCH > 6u) { a6 = fma(x[6u * k4 + k], wv, a6); }
    if (BATCH > 7u) { a7 = fma(x[7u * k4 + k], wv, a7); }
  }
  let acc = array<vec4<f32>, MAX_M>(a0, a1, a2, a3, a4, a5, a6, a7);
  for (var m = 0u; m < BATCH; m++) {
    let total = subgroupAdd(acc[m].x + acc[m].y + acc[m].z + acc[m].w);
    if (lane == 0u && n < p.N) { y[m * p.N + n] = total; }
  }
}
