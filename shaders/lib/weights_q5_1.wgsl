// GGUF Q5_1 (block_q5_1: d f16, m f16, qh[4], qs[16]): blocks of 32, w = d · q + m, q's bits as in
// Q5_0. On the GPU a block is its 16 quant bytes and two header words (d and m; qh). See
// quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 32u;
const W_VECS_PER_GROUP: u32 = 2u;
const W_SUBS: u32 = 1u;
const W_HAS_MIN = true;
const W_OFFSET = vec4<f32>(0.0);

// Bits 4j … 4j + 3 of h (16 of qh's bits, from element 16u on) as bit 4 of the four bytes of word j.
// Each nibble is spread to its four bytes by one multiply: b · 0x00204081 puts copies of b at bits 0,
// 7, 14 and 21, which do not overlap, so bits 0, 8, 16 and 24 of the product are b's bits 0 … 3.
// The nibbles are cut with scalar shifts: SwiftShader has no vector shift by per-component amounts.
fn q5_high(h: u32) -> vec4<u32> {
  let b = vec4<u32>(h & 0xFu, (h >> 4u) & 0xFu, (h >> 8u) & 0xFu, (h >> 12u) & 0xFu);
  return ((b * vec4<u32>(0x00204081u)) & vec4<u32>(0x01010101u)) << vec4<u32>(4u);
}

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  let lo = (w[b] >> vec4<u32>(4u * u)) & vec4<u32>(0x0F0F0F0Fu);
  return lo | q5_high(scales[2u * b + 1u] >> (16u * u));
}

// A block is one group: its header is the group's (scale, min).
alias WHead = vec2<f32>;

fn w_head(b: u32) -> WHead {
  return unpack2x16float(scales[2u * b]);
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return h;
}
