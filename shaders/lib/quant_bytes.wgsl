// What every GGUF block type's weights snippet (weights_q*.wgsl) shares. The GPU keeps each block's
// bytes as the file has them, split in two buffers (src/quant/types.ts): `w`, the quant bytes of
// each block (a whole number of vec4<u32>), and `scales`, the rest of the block (its scales, mins
// and high-bit masks) as u32 header words. A type's w_load_group gathers, with a few word-wide
// shifts and masks, the quants of one group into one vec4<u32>: byte b of word j the unsigned quant
// of element 4j + b of the group, below 128 (Q8_0's signed quants: see weights_q8_0.wgsl). The raw
// form is then the int8 one (weights_int8.wgsl): each byte masked in place and converted, its place
// value taken out by w_step on the x side. Its group_affine reads the group's scale and min from the
// header: w = scale · (q + W_OFFSET) + min, the form every ggml type's dequantization has
// (symmetric types: a zero point W_OFFSET and no min; the "_1" and K types with mins: a min).
// The packed kernels' interface is described in weights_int4.wgsl.

alias WElem = vec4<u32>;
alias WVec = vec4<u32>;
alias SElem = u32;
const X_PER_W_VEC: u32 = 4u;
const W_AFFINE = true;

// The four quants of x vec4 j: word j's bytes masked in place and converted whole (q · 256^b).
fn w_raw(q: WVec, j: u32) -> vec4<f32> {
  let word = vec4<u32>(q[j]);
  return vec4<f32>(bitcast<vec4<i32>>(word & vec4<u32>(0xFFu, 0xFF00u, 0xFF0000u, 0xFF000000u)));
}

fn w_step(j: u32) -> vec4<f32> {
  return vec4<f32>(1.0, 0x1p-8, 0x1p-16, 0x1p-24);
}

fn w_offset(j: u32) -> vec4<f32> {
  return W_OFFSET;
}

fn w_unpack(q: WVec, j: u32) -> vec4<f32> {
  return w_raw(q, j) * w_step(j) + w_offset(j);
}

// Byte k (0…3) of a header word.
fn qb_byte(word: u32, k: u32) -> u32 {
  return (word >> (8u * k)) & 0xFFu;
}

// Byte k (0…3) of a header word, as the int8 it stores.
fn qb_int8(word: u32, k: u32) -> i32 {
  return bitcast<i32>(word << (24u - 8u * k)) >> 24u;
}

// The f16 in the low (hi = false) or high half of a header word, widened exactly.
fn qb_half(word: u32, hi: bool) -> f32 {
  let h = unpack2x16float(word);
  return select(h.x, h.y, hi);
}
