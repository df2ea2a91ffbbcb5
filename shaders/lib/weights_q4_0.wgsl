// GGUF Q4_0 (ggml block_q4_0: d f16, qs[16]): blocks of 32, w = d · (q − 8). On the GPU a block is
// its 16 quant bytes (one vec4) and one header word (d in its low half). Element e < 16 is byte e's
// low nibble, e ≥ 16 byte e − 16's high nibble, so WVec u of the group (block) is one shift and mask
// of the same 16 bytes. See quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 32u;
const W_VECS_PER_GROUP: u32 = 2u;
const W_SUBS: u32 = 1u;
const W_HAS_MIN = false;
const W_OFFSET = vec4<f32>(-8.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  return (w[b] >> vec4<u32>(4u * u)) & vec4<u32>(0x0F0F0F0Fu);
}

// A block is one group: its header is the group's (scale, min).
alias WHead = vec2<f32>;

fn w_head(b: u32) -> WHead {
  return vec2<f32>(qb_half(scales[b], false), 0.0);
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return h;
}
