// RMSNorm fused into a linear kernel's prologue (the `prologue` slot; src/kernels/fuse.ts):
//   y[m, n] = rinv[m] · Σ_k (x[m, k] · gamma[k]) · w[n, k],  rinv[m] = 1 / sqrt(mean_k x[m, k]² + eps),
// which is the product of HF's RMSNorm output (x · rinv · gamma) with w, the per-row factor rinv
// taken out of the sum. So the normed rows are never written: the kernel multiplies each x vec4 it
// loads by gamma (fuse_gamma), and gets rinv either from squares summed in its own K loop (fuse_ss,
// then fuse_rinv: no extra loads) or from a pass over the row first (fuse_row_rinv, for kernels
// whose loop does not visit each x element exactly once). The including shader declares `x` (rows
// of vec4), `p.eps`, and the binding number FUSE_BINDING.
@group(0) @binding(FUSE_BINDING) var<storage, read> fuse_gamma_w: array<vec4<f32>>;  // [K/4]

fn fuse_gamma(k4: u32) -> vec4<f32> {
  return fuse_gamma_w[k4];
}

fn fuse_ss(v: vec4<f32>) -> f32 {
  return dot(v, v);
}

fn fuse_rinv(ss: f32, K: u32) -> f32 {
  return inverseSqrt(ss / f32(K) + p.eps);
}

// rinv of the row whose x vec4s are base … base + k4 − 1.
fn fuse_row_rinv(base: u32, k4: u32) -> f32 {
  var ss = 0.0;
  for (var i = 0u; i < k4; i++) {
    let v = x[base + i];
    ss += dot(v, v);
  }
  return fuse_rinv(ss, 4u * k4);
}
