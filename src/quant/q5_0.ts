import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q5_0 (block_q5_0): 32 weights as an f16 scale d, a 32-bit word qh of fifth bits and 16 bytes of
 * low nibbles. Weight j (j < 16) is the low nibble of byte j with bit j of qh above it; weight
 * j + 16 is the high nibble with bit j + 16; a weight is (q − 16) · d.
 *
 *   [0, 2) d   [2, 6) qh (little-endian u32)   [6, 22) qs
 */
export const Q5_0: QuantType = {
  name: 'Q5_0',
  ggml: 6,
  blockElems: 32,
  blockBytes: 22,
  quants: [[6, 22]],
  // qh gets a word of its own so the kernel reads it with one aligned load.
  header: [
    [0, 2, 0],
    [2, 6, 4],
  ],
  headerWords: 2,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 22;
      const y = outOffset + b * 32;
      const d = half[halfBits(src, at)];
      const qh = src[at + 2] | (src[at + 3] << 8) | (src[at + 4] << 16) | (src[at + 5] << 24);
      for (let j = 0; j < 16; j++) {
        const byte = src[at + 6 + j];
        const q0 = (byte & 0xf) | (((qh >>> j) & 1) << 4);
        const q1 = (byte >> 4) | (((qh >>> (j + 16)) & 1) << 4);
        out[y + j] = (q0 - 16) * d;
        out[y + j + 16] = (q1 - 16) * d;
      }
    }
  },
};
