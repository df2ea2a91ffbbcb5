// GGUF Q3_K (block_q3_K: hmask[32], qs[64], scales[12], d f16): super-blocks of 256 in 16 groups of
// 16, w = d · (sc − 32) · (q − 4), q = two low bits from qs | a third bit from hmask, sc six bits
// packed in 12 bytes. On the GPU a block is its 96 quant bytes (hmask then qs: six vec4) and four
// header words (the 12 scale bytes; d). Group j (as ggml's dequantize_row_q3_K walks it): half
// h = j / 8, run r = (j % 8) / 2 at shift 2r of qs bytes 32h + 16 · (j % 2) on, the third bit being
// bit 4h + r of hmask bytes 16 · (j % 2) on. See quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 16u;
const W_VECS_PER_GROUP: u32 = 1u;
const W_SUBS: u32 = 16u;
const W_HAS_MIN = false;
const W_OFFSET = vec4<f32>(-4.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  let at = 6u * b;
  let h = s / 8u;
  let r = (s % 8u) / 2u;
  let lo = (w[at + 2u + 2u * h + s % 2u] >> vec4<u32>(2u * r)) & vec4<u32>(0x03030303u);
  let hi = (w[at + s % 2u] >> vec4<u32>(4u * h + r)) & vec4<u32>(0x01010101u);
  return lo | (hi << vec4<u32>(2u));
}

// Scale j of the block's sixteen: ggml unpacks the 12 bytes as four words, word k holding scales
// 4k … 4k + 3: the low nibbles (k = 0, 1) or high nibbles (k = 2, 3) of the first two words, with
// two more bits each from the third word, at 2k.
// The block header: the 16 six-bit scales unpacked to bytes (ggml unpacks the 12 bytes as four
// words, word k holding scales 4k … 4k + 3: the low nibbles (k = 0, 1) or high nibbles (k = 2, 3)
// of the first two words, with two more bits each from the third word, at 2k), and d.
struct WHead {
  sc: vec4<u32>,
  d: f32,
}

fn w_head(b: u32) -> WHead {
  let at = 4u * b;
  let a0 = scales[at];
  let a1 = scales[at + 1u];
  let t = scales[at + 2u];
  let lo = vec4<u32>(a0, a1, a0 >> 4u, a1 >> 4u) & vec4<u32>(0x0F0F0F0Fu);
  let hi = (vec4<u32>(t, t >> 2u, t >> 4u, t >> 6u) & vec4<u32>(0x03030303u)) << vec4<u32>(4u);
  return WHead(lo | hi, qb_half(scales[at + 3u], false));
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  return vec2<f32>(h.d * f32(i32(qb_byte(h.sc[s / 4u], s % 4u)) - 32), 0.0);
}
