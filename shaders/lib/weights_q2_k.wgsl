// GGUF Q2_K (block_q2_K: scales[16], qs[64], d f16, dmin f16): super-blocks of 256 in 16 groups of
// 16, w = d · (sc & 15) · q − dmin · (sc >> 4), q two bits. On the GPU a block is its 64 quant bytes
// (four vec4) and five header words (the 16 scale bytes; d and dmin). Group j of a block (as ggml's
// dequantize_row_q2_K walks it): half h = j / 8 of 128 elements, whose 32 bytes hold four 32-element
// runs at shifts 0, 2, 4, 6; run (j % 8) / 2, bytes 16 · (j % 2) on. See quant_bytes.wgsl.
//#include quant_bytes

const W_GROUP: u32 = 16u;
const W_VECS_PER_GROUP: u32 = 1u;
const W_SUBS: u32 = 16u;
const W_HAS_MIN = true;
const W_OFFSET = vec4<f32>(0.0);

fn w_load_sub(b: u32, s: u32, u: u32) -> WVec {
  let v = w[4u * b + 2u * (s / 8u) + s % 2u];
  return (v >> vec4<u32>(2u * ((s % 8u) / 2u))) & vec4<u32>(0x03030303u);
}

// The block header: its 16 scale/min bytes (low nibble scale, high min) and (d, dmin).
struct WHead {
  sc: vec4<u32>,
  dm: vec2<f32>,
}

fn w_head(b: u32) -> WHead {
  let at = 5u * b;
  return WHead(vec4<u32>(scales[at], scales[at + 1u], scales[at + 2u], scales[at + 3u]), unpack2x16float(scales[at + 4u]));
}

fn head_affine(h: WHead, s: u32) -> vec2<f32> {
  let sc = qb_byte(h.sc[s / 4u], s % 4u);
  return vec2<f32>(h.dm.x * f32(sc & 15u), -(h.dm.y * f32(sc >> 4u)));
}
