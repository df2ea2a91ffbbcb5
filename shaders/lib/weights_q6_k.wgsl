// GGUF Q6_K (block_q6_K: ql[128], qh[64], scales[16] int8, d f16): super-blocks of 256 in 16 groups
// of 16, w = d · sc · (q − 32), q = four low bits from ql | two high bits from qh. On the GPU a block
// is its 192 quant bytes (ql then qh: twelve vec4) and five header words (the 16 scales; d). Group j
// (as ggml's dequantize_row_q6_K walks it): half h = j / 8 of 128 elements, quarter i = (j % 8) / 2,
// bytes 16 · (j % 2) on: the nibble at 4 · (i / 2) of ql byte 64h + 32 · (i % 2) + …, the two bits at
// 2i of qh byte 32h + …; its scale is scales[j]. See quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 16u;
const W_VECS_PER_GROUP: u32 = 1u;
const W_SUBS: u32 = 16u;
const W_HAS_MIN = false;
const W_OFFSET = vec4<f32>(-32.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  let at = 12u * b;
  let h = s / 8u;
  let i = (s % 8u) / 2u;
  let lo = (w[at + 4u * h + 2u * (i % 2u) + s % 2u] >> vec4<u32>(4u * (i / 2u))) & vec4<u32>(0x0F0F0F0Fu);
  let hi = (w[at + 8u + 2u * h + s % 2u] >> vec4<u32>(2u * i)) & vec4<u32>(0x03030303u);
  return lo | (hi << vec4<u32>(4u));
}

// The block header: its 16 int8 scales and d.
struct WHead {
  sc: vec4<u32>,
  d: f32,
}

fn w_head(b: u32) -> WHead {
  let at = 5u * b;
  return WHead(vec4<u32>(scales[at], scales[at + 1u], scales[at + 2u], scales[at + 3u]), qb_half(scales[at + 4u], false));
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return vec2<f32>(h.d * f32(qb_int8(h.sc[s / 4u], s % 4u)), 0.0);
}
