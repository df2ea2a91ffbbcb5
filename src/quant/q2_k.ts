import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q2_K (block_q2_K): a super-block of 256 weights in 16 sub-blocks of 16. Each sub-block has a byte
 * of scales: a 4-bit scale (low nibble) and a 4-bit min (high nibble), both multiplied by the
 * block's f16 d and dmin; a weight is (d · scale) · q − (dmin · min), with q a 2-bit quant.
 *
 *   [0, 16) scales   [16, 80) qs   [80, 82) d   [82, 84) dmin
 *
 * The quants of each half (128 weights) are 32 bytes; bits 2i..2i+1 of byte k of a half hold the
 * weight 32i + k of it, so sub-block s reads the 16 bytes 32·⌊s/8⌋ + 16·(s mod 2) … at shift
 * 2·⌊(s mod 8)/2⌋.
 */
export const Q2_K: QuantType = {
  name: 'Q2_K',
  ggml: 10,
  blockElems: 256,
  blockBytes: 84,
  quants: [[16, 80]],
  header: [
    [0, 16, 0],
    [80, 84, 16],
  ],
  headerWords: 5,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 84;
      const y = outOffset + b * 256;
      const d = half[halfBits(src, at + 80)];
      const dmin = half[halfBits(src, at + 82)];
      for (let s = 0; s < 16; s++) {
        const sc = src[at + s];
        const dl = Math.fround(d * (sc & 0xf));
        const ml = Math.fround(dmin * (sc >> 4));
        const q = at + 16 + 32 * (s >> 3) + 16 * (s & 1);
        const shift = 2 * ((s >> 1) & 3);
        for (let l = 0; l < 16; l++) {
          out[y + 16 * s + l] = Math.fround(dl * ((src[q + l] >> shift) & 3)) - ml;
        }
      }
    }
  },
};
