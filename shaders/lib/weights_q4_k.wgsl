// GGUF Q4_K (block_q4_K: d f16, dmin f16, scales[12], qs[128]): super-blocks of 256 in 8 groups of
// 32, w = d · sc · q − dmin · m, sc and m six bits each, packed in 12 bytes. On the GPU a block is its
// 128 quant bytes (eight vec4) and four header words (d and dmin; the 12 scale bytes). Groups 2p and
// 2p + 1 are the low and high nibbles of the same 32 bytes 32p on (ggml's dequantize_row_q4_K).
// See quant_bytes.wgsl.
//#include quant_bytes
//#include quant_k_scales

const W_GROUP: u32 = 32u;
const W_VECS_PER_GROUP: u32 = 2u;
const W_SUBS: u32 = 8u;
const W_HAS_MIN = true;
const W_OFFSET = vec4<f32>(0.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  let v = w[8u * b + 2u * (s / 2u) + u];
  return (v >> vec4<u32>(4u * (s % 2u))) & vec4<u32>(0x0F0F0F0Fu);
}

alias WHead = KHead;

fn w_head(b: u32) -> WHead {
  return k_head(4u * b);
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return k_affine(h, s);
}
