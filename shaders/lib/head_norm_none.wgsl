// The `head_norm` slot of the q/k/v preparation (rope_kv_write.wgsl, head_prep.wgsl) for an
// architecture without per-head q/k norms (llama, qwen2): heads are used as projected.
const HEAD_NORM = false;

fn head_norm_weight(i: u32) -> f32 {
  return 1.0;
}
