// The scale and min of group s (0…7) of a Q4_K or Q5_K block whose header words start at `at`:
// word 0 holds d (low half) and dmin (high), words 1-3 the 12 bytes q of eight 6-bit scales and
// eight 6-bit mins (ggml's get_scale_min_k4): s < 4: sc = q[s] & 63, m = q[s + 4] & 63; s ≥ 4:
// sc = (q[s + 4] & 15) | (q[s − 4] >> 6) << 4, m = (q[s + 4] >> 4) | (q[s] >> 6) << 4.
// Returns (d · sc, −dmin · m): w = d · sc · q − dmin · m.
fn k_scale_byte(at: u32, i: u32) -> u32 {
  return qb_byte(scales[at + 1u + i / 4u], i % 4u);
}

fn k_scale_min(at: u32, s: u32) -> vec2<f32> {
  var sc: u32;
  var m: u32;
  if (s < 4u) {
    sc = k_scale_byte(at, s) & 63u;
    m = k_scale_byte(at, s + 4u) & 63u;
  } else {
    let hi = k_scale_byte(at, s + 4u);
    sc = (hi & 15u) | ((k_scale_byte(at, s - 4u) >> 6u) << 4u);
    m = (hi >> 4u) | ((k_scale_byte(at, s) >> 6u) << 4u);
  }
  let dm = unpack2x16float(scales[at]);
  return vec2<f32>(dm.x * f32(sc), -(dm.y * f32(m)));
}
