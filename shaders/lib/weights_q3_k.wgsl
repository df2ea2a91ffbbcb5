// GGUF Q3_K (block_q3_K: hmask[32], qs[64], scales[12], d f16): super-blocks of 256 in 16 groups of
// 16, w = d · (sc − 32) · (q − 4), q = two low bits from qs | a third bit from hmask, sc six bits
// packed in 12 bytes. On the GPU a block is its 96 quant bytes (hmask then qs: six vec4) and four
// header words (the 12 scale bytes; d). Group j (as ggml's dequantize_row_q3_K walks it): half
// h = j / 8, run r = (j % 8) / 2 at shift 2r of qs bytes 32h + 16 · (j % 2) on, the third bit being
// bit 4h + r of hmask bytes 16 · (j % 2) on. See quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 16u;
const W_VECS_PER_GROUP: u32 = 1u;
const W_HAS_MIN = false;
const W_OFFSET = vec4<f32>(-4.0);

fn w_load_group(g: u32, u: u32) -> WVec {
  let b = 6u * (g / 16u);
  let j = g % 16u;
  let h = j / 8u;
  let r = (j % 8u) / 2u;
  let lo = (w[b + 2u + 2u * h + j % 2u] >> vec4<u32>(2u * r)) & vec4<u32>(0x03030303u);
  let hi = (w[b + j % 2u] >> vec4<u32>(4u * h + r)) & vec4<u32>(0x01010101u);
  return lo | (hi << vec4<u32>(2u));
}

// Scale j of the block's sixteen: ggml unpacks the 12 bytes as four words, word k holding scales
// 4k … 4k + 3: the low nibbles (k = 0, 1) or high nibbles (k = 2, 3) of the first two words, with
// two more bits each from the third word, at 2k.
fn group_affine(g: u32) -> vec2<f32> {
  let at = 4u * (g / 16u);
  let j = g % 16u;
  let k = j / 4u;
  let low = select(scales[at], scales[at + 1u], (k & 1u) == 1u);
  let word = ((low >> (4u * (k >> 1u))) & 0x0F0F0F0Fu) | (((scales[at + 2u] >> (2u * k)) & 0x03030303u) << 4u);
  let sc = i32(qb_byte(word, j % 4u)) - 32;
  return vec2<f32>(qb_half(scales[at + 3u], false) * f32(sc), 0.0);
}
