// GGUF Q5_K (block_q5_K: d f16, dmin f16, scales[12], qh[32], qs[128]): super-blocks of 256 in 8
// groups of 32, w = d · sc · q − dmin · m, q's low four bits as in Q4_K and its fifth bit bit s of
// qh byte e for element e of group s. On the GPU a block is its 160 quant bytes (qh then qs: ten
// vec4) and four header words (d and dmin; the 12 scale bytes). See quant_bytes.wgsl.
//#include quant_bytes
//#include quant_k_scales

const W_GROUP: u32 = 32u;
const W_VECS_PER_GROUP: u32 = 2u;
const W_SUBS: u32 = 8u;
const W_HAS_MIN = true;
const W_OFFSET = vec4<f32>(0.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  let at = 10u * b;
  let lo = (w[at + 2u + 2u * (s / 2u) + u] >> vec4<u32>(4u * (s % 2u))) & vec4<u32>(0x0F0F0F0Fu);
  let hi = (w[at + u] >> vec4<u32>(s)) & vec4<u32>(0x01010101u);
  return lo | (hi << vec4<u32>(4u));
}

alias WHead = KHead;

fn w_head(b: u32) -> WHead {
  return k_head(4u * b);
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return k_affine(h, s);
}
