import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q6_K (block_q6_K): a super-block of 256 weights in 16 sub-blocks of 16, each with a signed 8-bit
 * scale times one f16 d; a weight is (d · scale) · (q − 32), q a 6-bit quant: 4 low bits in ql and
 * 2 high bits in qh.
 *
 *   [0, 128) ql   [128, 192) qh   [192, 208) scales (int8)   [208, 210) d
 *
 * Each half (128 weights) has 64 bytes of ql and 32 of qh. Weight l of the half (l < 32) is the low
 * nibble of ql byte l with qh bits 0–1 of byte l; weight 32 + l the low nibble of ql byte 32 + l
 * with bits 2–3; 64 + l the high nibble of ql byte l with bits 4–5; 96 + l the high nibble of ql
 * byte 32 + l with bits 6–7.
 */
export const Q6_K: QuantType = {
  name: 'Q6_K',
  ggml: 14,
  blockElems: 256,
  blockBytes: 210,
  quants: [[0, 192]],
  header: [[192, 210, 0]],
  headerWords: 5,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    const scale = new Float32Array(16);
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 210;
      const y = outOffset + b * 256;
      const d = half[halfBits(src, at + 208)];
      // d · scale, rounded to f32 as C rounds it before the multiply by q.
      for (let s = 0; s < 16; s++) scale[s] = d * ((src[at + 192 + s] << 24) >> 24);
      for (let h = 0; h < 2; h++) {
        const ql = at + 64 * h;
        const qh = at + 128 + 32 * h;
        const yh = y + 128 * h;
        for (let l = 0; l < 32; l++) {
          const lo = src[ql + l];
          const lo2 = src[ql + 32 + l];
          const hi = src[qh + l];
          const s = 8 * h + (l >> 4);
          out[yh + l] = scale[s] * (((lo & 0xf) | ((hi & 3) << 4)) - 32);
          out[yh + 32 + l] = scale[s + 2] * (((lo2 & 0xf) | (((hi >> 2) & 3) << 4)) - 32);
          out[yh + 64 + l] = scale[s + 4] * (((lo >> 4) | (((hi >> 4) & 3) << 4)) - 32);
          out[yh + 96 + l] = scale[s + 6] * (((lo2 >> 4) | ((hi >> 6) << 4)) - 32);
        }
      }
    }
  },
};
