import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import { unpackScalesAndMins } from './k-scales.ts';
import type { QuantType } from './types.ts';

/**
 * Q5_K (block_q5_K): Q4_K with a fifth bit per weight. Sub-block 2c reads the low nibbles of qs
 * bytes 32c … and bit 2c of qh bytes 0 … 31; sub-block 2c + 1 the high nibbles and bit 2c + 1. A
 * weight is (d · scale) · q − (dmin · min), q in 0…31.
 *
 *   [0, 2) d   [2, 4) dmin   [4, 16) scales   [16, 48) qh   [48, 176) qs
 */
export const Q5_K: QuantType = {
  name: 'Q5_K',
  ggml: 13,
  blockElems: 256,
  blockBytes: 176,
  quants: [[16, 176]],
  header: [[0, 16, 0]],
  headerWords: 4,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    const scales = new Uint8Array(8);
    const mins = new Uint8Array(8);
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 176;
      const y = outOffset + b * 256;
      const d = half[halfBits(src, at)];
      const dmin = half[halfBits(src, at + 2)];
      unpackScalesAndMins(src, at + 4, scales, mins);
      for (let c = 0; c < 4; c++) {
        const d1 = Math.fround(d * scales[2 * c]);
        const m1 = Math.fround(dmin * mins[2 * c]);
        const d2 = Math.fround(d * scales[2 * c + 1]);
        const m2 = Math.fround(dmin * mins[2 * c + 1]);
        const ql = at + 48 + 32 * c;
        const y1 = y + 64 * c;
        for (let l = 0; l < 32; l++) {
          const byte = src[ql + l];
          const high = src[at + 16 + l] >> (2 * c);
          out[y1 + l] = Math.fround(d1 * ((byte & 0xf) | ((high & 1) << 4))) - m1;
          out[y1 + 32 + l] = Math.fround(d2 * ((byte >> 4) | ((high & 2) << 3))) - m2;
        }
      }
    }
  },
};
