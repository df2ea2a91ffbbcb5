// GGUF Q8_0 (block_q8_0: d f16, qs[32] int8): blocks of 32, w = d · q. On the GPU a block is its 32
// quant bytes (two vec4) and one header word (d low). The quants are signed: flipping the top bit of
// bytes 0-2 makes each q + 128 unsigned, while byte 3, read as the top bits of an i32, is already
// signed (as weights_int8.wgsl reads them); hence a zero point of −128 on the first three only.
//#include quant_bytes

const W_GROUP: u32 = 32u;
const W_VECS_PER_GROUP: u32 = 2u;
const W_SUBS: u32 = 1u;
const W_HAS_MIN = false;
const W_OFFSET = vec4<f32>(-128.0, -128.0, -128.0, 0.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  return w[2u * b + u] ^ vec4<u32>(0x00808080u);
}

// A block is one group: its header is the group's (scale, min).
alias WHead = vec2<f32>;

fn w_head(b: u32) -> WHead {
  return vec2<f32>(qb_half(scales[b], false), 0.0);
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return h;
}
