// Rotate-half RoPE of one pair (a, b) = (x[j], x[j + headDim/2]) by the angle whose cos and sin are
// c and s. The one rotation of the RoPE kernel and of the fused RoPE + KV write, so both compute
// the same bits.
fn rope_pair(a: f32, b: f32, c: f32, s: f32) -> vec2<f32> {
  return vec2<f32>(a * c - b * s, b * c + a * s);
}
