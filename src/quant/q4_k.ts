import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import { unpackScalesAndMins } from './k-scales.ts';
import type { QuantType } from './types.ts';

/**
 * Q4_K (block_q4_K): a super-block of 256 weights in 8 sub-blocks of 32, each with a 6-bit scale
 * and a 6-bit min (packed in 12 bytes, see k-scales.ts) times the block's f16 d and dmin; a weight
 * is (d · scale) · q − (dmin · min), with q a 4-bit quant.
 *
 *   [0, 2) d   [2, 4) dmin   [4, 16) scales   [16, 144) qs
 *
 * Sub-blocks pair up on 32 bytes of qs: sub-block 2c reads the low nibbles of bytes 32c …,
 * sub-block 2c + 1 the high nibbles.
 */
export const Q4_K: QuantType = {
  name: 'Q4_K',
  ggml: 12,
  blockElems: 256,
  blockBytes: 144,
  quants: [[16, 144]],
  header: [[0, 16, 0]],
  headerWords: 4,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    const scales = new Uint8Array(8);
    const mins = new Uint8Array(8);
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 144;
      const y = outOffset + b * 256;
      const d = half[halfBits(src, at)];
      const dmin = half[halfBits(src, at + 2)];
      unpackScalesAndMins(src, at + 4, scales, mins);
      for (let c = 0; c < 4; c++) {
        const d1 = Math.fround(d * scales[2 * c]);
        const m1 = Math.fround(dmin * mins[2 * c]);
        const d2 = Math.fround(d * scales[2 * c + 1]);
        const m2 = Math.fround(dmin * mins[2 * c + 1]);
        const q = at + 16 + 32 * c;
        const y1 = y + 64 * c;
        for (let l = 0; l < 32; l++) {
          const byte = src[q + l];
          out[y1 + l] = Math.fround(d1 * (byte & 0xf)) - m1;
          out[y1 + 32 + l] = Math.fround(d2 * (byte >> 4)) - m2;
        }
      }
    }
  },
};
