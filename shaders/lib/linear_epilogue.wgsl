// How a linear kernel writes its sums y[m, n] (src/kernels/fuse.ts), p.epilogue, a uniform:
//   0: y = v, the plain store;
//   1: y += v, the residual add of the o and down projections, into the residual stream
//      itself (each element is written by exactly one invocation, and the kernel does not
//      otherwise read y, so the in-place add is race-free);
//   2: SwiGLU of the gate/up projection run as one product over interleaved weight rows
//      (gate row j at column 2j, up row j at 2j + 1; src/model/fused.ts builds that layout):
//      y[m, j] = silu(v[2j]) · v[2j + 1], y rows N / 2 wide. N must be even, and the caller
//      must pass column quads starting at a multiple of 4, so a pair never straddles quads.
// The including shader declares `y: array<f32>` (read_write), includes `activation`, and its
// uniform `p` has an `epilogue: u32` field. A uniform rather than an override constant: the branch
// is taken once per stored element and is the same for the whole dispatch, so it costs nothing
// measurable, while a constant made one pipeline per epilogue (the norm-fused QKV and gate/up
// products compiled twice; on SwiftShader a packed tile pipeline takes 1.5–2.5 s to compile).

// Element i of y, plain or added.
fn epi_store1(i: u32, v: f32) {
  if (p.epilogue == 1u) {
    y[i] += v;
  } else {
    y[i] = v;
  }
}

// Row m's columns n0 … n0 + count − 1 (n0 a multiple of 4, count ≤ 4) of a product N columns wide.
fn epi_store4(m: u32, n0: u32, N: u32, count: u32, v: vec4<f32>) {
  if (p.epilogue == 2u) {
    let base = m * (N / 2u) + n0 / 2u;
    y[base] = silu(v.x) * v.y;
    if (count > 2u) { y[base + 1u] = silu(v.z) * v.w; }
    return;
  }
  let base = m * N + n0;
  for (var c = 0u; c < count; c++) { epi_store1(base + c, v[c]); }
}
