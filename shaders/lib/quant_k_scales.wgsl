// The header of a Q4_K or Q5_K block whose header words start at `at`: word 0 holds d (low half) and
// dmin (high), words 1-3 the 12 bytes q of eight 6-bit scales and eight 6-bit mins (ggml's
// get_scale_min_k4): s < 4: sc = q[s] & 63, m = q[s + 4] & 63; s ≥ 4: sc = (q[s + 4] & 15) |
// (q[s − 4] >> 6) << 4, m = (q[s + 4] >> 4) | (q[s] >> 6) << 4. Unpacked word-wide, four groups at
// once, when the block is first read: with h1 = q[0…3], h2 = q[4…7], h3 = q[8…11], the scales of
// groups 0-3 are the bytes of h1 & 0x3F3F3F3F and those of 4-7 of (h3 & 0x0F0F0F0F) | (h1 >> 2) &
// 0x30303030; the mins likewise from h2 and h3's high nibbles.
struct KHead {
  sc: vec2<u32>,   // scales of groups 0-3, 4-7, a byte each
  m: vec2<u32>,    // mins likewise
  dm: vec2<f32>,   // d, dmin
}

fn k_head(at: u32) -> KHead {
  let h1 = scales[at + 1u];
  let h2 = scales[at + 2u];
  let h3 = scales[at + 3u];
  let sc = vec2<u32>(h1 & 0x3F3F3F3Fu, (h3 & 0x0F0F0F0Fu) | ((h1 >> 2u) & 0x30303030u));
  let m = vec2<u32>(h2 & 0x3F3F3F3Fu, ((h3 >> 4u) & 0x0F0F0F0Fu) | ((h2 >> 2u) & 0x30303030u));
  return KHead(sc, m, unpack2x16float(scales[at]));
}

// Group s's (d · sc, −dmin · m): w = d · sc · q − dmin · m.
fn k_affine(h: KHead, s: u32) -> vec2<f32> {
  let shift = 8u * (s % 4u);
  let sc = (h.sc[s / 4u] >> shift) & 63u;
  let m = (h.m[s / 4u] >> shift) & 63u;
  return vec2<f32>(h.dm.x * f32(sc), -(h.dm.y * f32(m)));
}
