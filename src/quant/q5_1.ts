import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q5_1 (block_q5_1): Q5_0's 5-bit quants (low nibbles in qs, fifth bits in the word qh) with an f16
 * offset m beside the scale d; a weight is q · d + m.
 *
 *   [0, 2) d   [2, 4) m   [4, 8) qh (little-endian u32)   [8, 24) qs
 */
export const Q5_1: QuantType = {
  name: 'Q5_1',
  ggml: 7,
  blockElems: 32,
  blockBytes: 24,
  quants: [[8, 24]],
  header: [[0, 8, 0]],
  headerWords: 2,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 24;
      const y = outOffset + b * 32;
      const d = half[halfBits(src, at)];
      const m = half[halfBits(src, at + 2)];
      const qh = src[at + 4] | (src[at + 5] << 8) | (src[at + 6] << 16) | (src[at + 7] << 24);
      for (let j = 0; j < 16; j++) {
        const byte = src[at + 8 + j];
        const q0 = (byte & 0xf) | (((qh >>> j) & 1) << 4);
        const q1 = (byte >> 4) | (((qh >>> (j + 16)) & 1) << 4);
        // Product rounded to f32 first, as C does, then the sum rounded by the store.
        out[y + j] = Math.fround(q0 * d) + m;
        out[y + j + 16] = Math.fround(q1 * d) + m;
      }
    }
  },
};
