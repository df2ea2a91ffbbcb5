// The `qkv_bias` slot of the q/k/v preparation (rope_kv_write.wgsl, head_prep.wgsl) for an
// architecture without projection biases (llama, qwen3): nothing is added.
const QKV_BIAS = false;

fn qkv_bias(i: u32) -> f32 {
  return 0.0;
}
