import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q4_1 (block_q4_1): 32 weights as an f16 scale d, an f16 offset m and 16 bytes of 4-bit quants
 * (byte j: weight j low, weight j + 16 high); a weight is q · d + m.
 *
 *   [0, 2) d   [2, 4) m   [4, 20) qs
 */
export const Q4_1: QuantType = {
  name: 'Q4_1',
  ggml: 3,
  blockElems: 32,
  blockBytes: 20,
  quants: [[4, 20]],
  header: [[0, 4, 0]],
  headerWords: 1,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 20;
      const y = outOffset + b * 32;
      const d = half[halfBits(src, at)];
      const m = half[halfBits(src, at + 2)];
      for (let j = 0; j < 16; j++) {
        const byte = src[at + 4 + j];
        // C rounds the product to f32 before adding m (no fused multiply-add in ggml's build);
        // the store into the Float32Array rounds the sum.
        out[y + j] = Math.fround((byte & 0xf) * d) + m;
        out[y + j + 16] = Math.fround((byte >> 4) * d) + m;
      }
    }
  },
};
