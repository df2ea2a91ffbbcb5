// GGUF Q5_1 (block_q5_1: d f16, m f16, qh[4], qs[16]): blocks of 32, w = d · q + m, q's bits as in
// Q5_0. On the GPU a block is its 16 quant bytes and two header words (d and m; qh). See
// quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 32u;
const W_VECS_PER_GROUP: u32 = 2u;
const W_HAS_MIN = true;
const W_OFFSET = vec4<f32>(0.0);

// Bits 4j … 4j + 3 of h (16 of qh's bits, from element 16u on) as bit 4 of the four bytes of word j.
fn q5_high(h: u32) -> vec4<u32> {
  let b = (vec4<u32>(h) >> vec4<u32>(0u, 4u, 8u, 12u)) & vec4<u32>(0xFu);
  return ((b & vec4<u32>(1u)) | ((b & vec4<u32>(2u)) << vec4<u32>(7u)) | ((b & vec4<u32>(4u)) << vec4<u32>(14u)) |
          ((b & vec4<u32>(8u)) << vec4<u32>(21u))) << vec4<u32>(4u);
}

fn w_load_group(g: u32, u: u32) -> WVec {
  let lo = (w[g] >> vec4<u32>(4u * u)) & vec4<u32>(0x0F0F0F0Fu);
  return lo | q5_high(scales[2u * g + 1u] >> (16u * u));
}

fn group_affine(g: u32) -> vec2<f32> {
  return unpack2x16float(scales[2u * g]);
}
