import { f16Values } from '../weight-format.ts';
import { putHalf } from './ggml-round.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q4_0 (block_q4_0): 32 weights as an f16 scale d and 16 bytes of 4-bit quants. Byte j holds weight
 * j in its low nibble and weight j + 16 in its high one; a weight is (q − 8) · d.
 *
 *   [0, 2) d   [2, 18) qs
 */
export const Q4_0: QuantType = {
  name: 'Q4_0',
  ggml: 2,
  blockElems: 32,
  blockBytes: 18,
  quants: [[2, 18]],
  header: [[0, 2, 0]],
  headerWords: 1,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 18;
      const y = outOffset + b * 32;
      const d = half[halfBits(src, at)];
      for (let j = 0; j < 16; j++) {
        const byte = src[at + 2 + j];
        // An int times an f32 in C: exact in a double, then rounded once to f32.
        out[y + j] = ((byte & 0xf) - 8) * d;
        out[y + j + 16] = ((byte >> 4) - 8) * d;
      }
    }
  },
  /**
   * quantize_row_q4_0_ref: `max` is the first value of largest magnitude, with its sign; d = max / −8
   * (so the extreme weight lands on q = 0 exactly); q = min(15, (int)(x · (1 / d) + 8.5)), in f32.
   */
  quantize(src, offset, blocks, out, outOffset) {
    const f = Math.fround;
    for (let b = 0; b < blocks; b++) {
      const x = offset + 32 * b;
      const at = outOffset + 18 * b;
      let amax = 0;
      let max = 0;
      for (let j = 0; j < 32; j++) {
        const v = src[x + j];
        if (amax < Math.abs(v)) {
          amax = Math.abs(v);
          max = v;
        }
      }
      const d = f(max / -8);
      const id = d ? f(1 / d) : 0;
      putHalf(out, at, d);
      for (let j = 0; j < 16; j++) {
        const q0 = Math.min(15, Math.trunc(f(f(src[x + j] * id) + 8.5)));
        const q1 = Math.min(15, Math.trunc(f(f(src[x + 16 + j] * id) + 8.5)));
        out[at + 2 + j] = q0 | (q1 << 4);
      }
    }
  },
};
