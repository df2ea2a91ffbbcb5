// GGUF Q4_1 (block_q4_1: d f16, m f16, qs[16]): blocks of 32, w = d · q + m, the nibbles as in Q4_0.
// On the GPU a block is its 16 quant bytes and one header word (d low, m high). See quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 32u;
const W_VECS_PER_GROUP: u32 = 2u;
const W_SUBS: u32 = 1u;
const W_HAS_MIN = true;
const W_OFFSET = vec4<f32>(0.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  return (w[b] >> vec4<u32>(4u * u)) & vec4<u32>(0x0F0F0F0Fu);
}

// A block is one group: its header is the group's (scale, min).
alias WHead = vec2<f32>;

fn w_head(b: u32) -> WHead {
  return unpack2x16float(scales[b]);
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return h;
}
