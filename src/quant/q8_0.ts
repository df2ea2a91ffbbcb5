import { f16Values } from '../weight-format.ts';
import { putHalf, roundf } from './ggml-round.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q8_0 (block_q8_0): 32 weights as an f16 scale d and 32 signed bytes; a weight is q · d.
 *
 *   [0, 2) d   [2, 34) qs (int8)
 */
export const Q8_0: QuantType = {
  name: 'Q8_0',
  ggml: 8,
  blockElems: 32,
  blockBytes: 34,
  quants: [[2, 34]],
  header: [[0, 2, 0]],
  headerWords: 1,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 34;
      const y = outOffset + b * 32;
      const d = half[halfBits(src, at)];
      for (let j = 0; j < 32; j++) {
        // (x << 24) >> 24 reads the byte as int8.
        out[y + j] = ((src[at + 2 + j] << 24) >> 24) * d;
      }
    }
  },
  /** quantize_row_q8_0_ref: d = amax / 127, q = roundf(x · (1 / d)), in f32; d stored as f16. */
  quantize(src, offset, blocks, out, outOffset) {
    const f = Math.fround;
    for (let b = 0; b < blocks; b++) {
      const x = offset + 32 * b;
      const at = outOffset + 34 * b;
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(src[x + j]));
      const d = f(amax / 127);
      const id = d ? f(1 / d) : 0;
      putHalf(out, at, d);
      for (let j = 0; j < 32; j++) out[at + 2 + j] = roundf(f(src[x + j] * id)) & 0xff;
    }
  },
};
