// SiLU, the gate of SwiGLU: silu(g) = g / (1 + exp(-g)). For very negative g, exp overflows to +inf
// and the quotient is -0, which is the right limit. One definition for the SwiGLU kernel and the
// gate/up projection's fused epilogue, so the two compute the same bits.
fn silu(g: f32) -> f32 {
  return g / (1.0 + exp(-g));
}

fn silu4(g: vec4<f32>) -> vec4<f32> {
  return g / (vec4<f32>(1.0) + exp(-g));
}
