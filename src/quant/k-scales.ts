/**
 * Q4_K and Q5_K share one packing of their eight 6-bit sub-block scales and eight 6-bit mins in 12
 * bytes (ggml's get_scale_min_k4). Sub-blocks 0–3 keep theirs whole in the low 6 bits of bytes 0–3
 * (scales) and 4–7 (mins); sub-blocks 4–7 put their low 4 bits in the nibbles of bytes 8–11 and
 * their top 2 bits in the otherwise unused top bits of bytes 0–7.
 */
export function unpackScalesAndMins(src: Uint8Array, at: number, scales: Uint8Array, mins: Uint8Array): void {
  for (let j = 0; j < 4; j++) {
    scales[j] = src[at + j] & 63;
    mins[j] = src[at + j + 4] & 63;
  }
  for (let j = 4; j < 8; j++) {
    const low = src[at + j + 4];
    scales[j] = (low & 0xf) | ((src[at + j - 4] >> 6) << 4);
    mins[j] = (low >> 4) | ((src[at + j] >> 6) << 4);
  }
}
