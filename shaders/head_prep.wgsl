// The unfused graph's q/k/v preparation, in place on one projection's output x [rows, heads,
// headDim]: the projection's bias added (qwen2, the `qkv_bias` slot), then each head RMS-normalized
// over headDim with its weight (qwen3 q and k, the `head_norm` slot). The fused graph does the same
// inside rope_kv_write.wgsl, with the same snippets, so the two compute the same bits; this kernel
// is its reference.
// One invocation per (token, head) row: the norm needs the whole row's sum of squares first.
override WG: u32;
//#include grid
//#const BIAS_BINDING
//#const NORM_BINDING
//#include qkv_bias
//#include head_norm

// From HEAD_PREP_PARAMS in src/kernels/head-prep.ts (normAt: 0 for q, headDim for k; eps: the norm's).
//#params

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;   // [rows, heads, headDim]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = workgroupIndex(wid, nwg) * WG + lid;  // over rows * heads
  if (i >= p.rows * p.heads) { return; }
  let h = i % p.heads;
  let base = i * p.headDim;
  let biasAt = h * p.headDim;
  var rinv = 1.0;
  if (HEAD_NORM) {
    var ss = 0.0;
    for (var e = 0u; e < p.headDim; e++) {
      var v = x[base + e];
      if (QKV_BIAS) { v += qkv_bias(biasAt + e); }
      ss += v * v;
    }
    rinv = inverseSqrt(ss / f32(p.headDim) + p.eps);
  }
  for (var e = 0u; e < p.headDim; e++) {
    var v = x[base + e];
    if (QKV_BIAS) { v += qkv_bias(biasAt + e); }
    if (HEAD_NORM) { v = v * rinv * head_norm_weight(p.normAt + e); }
    x[base + e] = v;
  }
}
