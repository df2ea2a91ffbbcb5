// GGUF Q6_K (block_q6_K: ql[128], qh[64], scales[16] int8, d f16): super-blocks of 256 in 16 groups
// of 16, w = d · sc · (q − 32), q = four low bits from ql | two high bits from qh. On the GPU a block
// is its 192 quant bytes (ql then qh: twelve vec4) and five header words (the 16 scales; d). Group j
// (as ggml's dequantize_row_q6_K walks it): half h = j / 8 of 128 elements, quarter i = (j % 8) / 2,
// bytes 16 · (j % 2) on: the nibble at 4 · (i / 2) of ql byte 64h + 32 · (i % 2) + …, the two bits at
// 2i of qh byte 32h + …; its scale is scales[j]. See quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 16u;
const W_VECS_PER_GROUP: u32 = 1u;
const W_HAS_MIN = false;
const W_OFFSET = vec4<f32>(-32.0);

fn w_load_group(g: u32, u: u32) -> WVec {
  let b = 12u * (g / 16u);
  let j = g % 16u;
  let h = j / 8u;
  let i = (j % 8u) / 2u;
  let lo = (w[b + 4u * h + 2u * (i % 2u) + j % 2u] >> vec4<u32>(4u * (i / 2u))) & vec4<u32>(0x0F0F0F0Fu);
  let hi = (w[b + 8u + 2u * h + j % 2u] >> vec4<u32>(2u * i)) & vec4<u32>(0x03030303u);
  return lo | (hi << vec4<u32>(4u));
}

fn group_affine(g: u32) -> vec2<f32> {
  let at = 5u * (g / 16u);
  let j = g % 16u;
  return vec2<f32>(qb_half(scales[at + 4u], false) * f32(qb_int8(scales[at + j / 4u], j % 4u)), 0.0);
}
