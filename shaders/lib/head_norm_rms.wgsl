// The `head_norm` slot of the q/k/v preparation (rope_kv_write.wgsl, head_prep.wgsl) for qwen3: q
// and k are RMS-normalized per head, over headDim, before RoPE (v is not). The weights are one
// buffer per layer, q's headDim values then k's; the shader declares its binding as NORM_BINDING.
const HEAD_NORM = true;

@group(0) @binding(NORM_BINDING) var<storage, read> headNorm: array<f32>;  // [2, headDim]: q, then k

// The weight of element e of a q head (i = e) or a k head (i = headDim + e).
fn head_norm_weight(i: u32) -> f32 {
  return headNorm[i];
}
