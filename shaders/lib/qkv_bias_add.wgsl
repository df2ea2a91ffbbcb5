// The `qkv_bias` slot of the q/k/v preparation (rope_kv_write.wgsl, head_prep.wgsl) for qwen2: the
// projection's bias, added to each output before anything else. The shader declares the binding's
// number as BIAS_BINDING.
const QKV_BIAS = true;

@group(0) @binding(BIAS_BINDING) var<storage, read> qkvBias: array<f32>;  // [width of the projection(s)]

// Bias of output i of the projection (i counts along the row of q, k, v, or the fused [q; k; v]).
fn qkv_bias(i: u32) -> f32 {
  return qkvBias[i];
}
