// GEMV, one invocation per output column: y[M, N] = x[M, K] · w[N, K]^T for M <= MAX_M.
// No workgroup memory and no barriers: each invocation walks its weight row as vec4 and keeps one
// accumulator per batch row. Fast where barriers are expensive (CPU-backed adapters such as
// SwiftShader, where an invocation's row walk is a sequential cache-friendly scan). On GPUs its
// strided row reads are uncoalesced, so the workgroup-reduction gemv.wgsl wins there.
// The summation order depends only on K, never on M, so batched rows equal rows computed alone.
override WG: u32;
// The batch is a pipeline constant, not a uniform: with it known at compile time the loops over
// batch rows unroll and the accumulators live in registers (a dynamically indexed private array
// spills to memory and ran 5x slower on SwiftShader).
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
        @builtin(local_invocation_index) lid: u32) {
  let n = workgroupIndex(wid, nwg) * WG + lid;
  if (n >= p.N) { return; }
  let k4 = p.K / 4u;
  let row = n * k4;
  // Weights are read once for the whole batch: k outer, batch rows inner, one named accumulator
  // per row. Branches on BATCH fold away at pipeline creation.
  var a0 = vec4<f32>(0.0);
  var a1 = vec4<f32>(0.0);
  var a2 = vec4<f32>(0.0);
  var a3 = vec4<f32>(0.0);
  var a4 = vec4<f32>(0.0);
  var a5 = vec4<f32>(0.0);
  var a6 = vec4<f32>(0.0);
  var a7 = vec4<f32>(0.0);
  // Four weight vectors per trip: independent loads keep more memory requests in flight.
  let k4Main = k4 & ~3u;
  for (var k = 0u; k < k4Main; k += 4u) {
    let w0 = w[row + k];
    let w1 = w[row + k + 1u];
    let w2 = w[row + k + 2u];
    let w3 = w[row + k + 3u];
    a0 = fma(x[k], w0, fma(x[k + 1u], w1, fma(x[k + 2u], w2, fma(x[k + 3u], w3, a0))));
    if (BATCH > 1u) { a1 = fma(x[1u * k4 + k], w0, fma(x[1u * k4 + k + 1u], w1, fma(x[1u * k4 + k + 2u], w2, fma(x[1u * k4 + k + 3u], w3, a1)))); }
    if (BATCH > 2u) { a2 = fma(x[2u * k4 + k], w0, fma(x[2u * k4 + k + 1u], w1, fma(x[2u * k4 + k + 2u], w2, fma(x[2u * k4 + k + 3u], w3, a2)))); }
    if (BATCH > 3u) { a3 = fma(x[3u * k4 + k], w0, fma(x[3u * k4 + k + 1u], w1, fma(x[3u * k4 + k + 2u], w2, fma(x[3u * k4 + k + 3u], w3, a3)))); }
    if (BATCH > 4u) { a4 = fma(x[4u * k4 + k], w0, fma(x[4u * k4 + k + 1u], w1, fma(x[4u * k4 + k + 2u], w2, fma(x[4u * k4 + k + 3u], w3, a4)))); }
    if (BATCH > 5u) { a5 = fma(x[5u * k4 + k], w0, fma(x[5u * k4 + k + 1u], w1, fma(x[5u * k4 + k + 2u], w2, fma(x[5u * k4 + k + 3u], w3, a5)))); }
    if (BATCH > 6u) { a6 = fma(x[6u * k4 + k], w0, fma(x[6u * k4 + k + 1u], w1, fma(x[6u * k4 + k + 2u], w2, fma(x[6u * k4 + k + 3u], w3, a6)))); }
    if (BATCH > 7u) { a7 = fma(x[7u * k4 + k], w0, fma(x[7u * k4 + k + 1u], w1, fma(x[7u * k4 + k + 2u], w2, fma(x[7u * k4 + k + 3u], w3, a7)))); }
  }
  for (var k = k4Main; k < k4; k++) {
    let wv = w[row + k];
    a0 = fma(x[k], wv, a0);
    if (BATCH > 1u) { a1 = fma(x[1u * k4 + k], wv, a1); }
    if (BATCH > 2u) { a2 = fma(x[2u * k4 + k], wv, a2); }
    if (BATCH > 3u) { a3 = fma(x[3u * k4 + k], wv, a3); }
    if (BATCH > 4u) { a4 = fma(x[4u * k4 + k], wv, a4); }
    if (BATCH > 5u) { a5 = fma(x[5u * k4 + k], wv, a5); }
    if (BATCH > 6u) { a6 = fma(x[6u * k4 + k], wv, a6); }
    if (BATCH > 7u) { a7 = fma(x[7u * k4 + k], wv, a7); }
  }
  let acc = array<vec4<f32>, MAX_M>(a0, a1, a2, a3, a4, a5, a6, a7);
  for (var m = 0u; m < BATCH; m++) { y[m * p.N + n] = acc[m].x + acc[m].y + acc[m].z + acc[m].w; }
}
