import { f16Values } from '../weight-format.ts';
import { halfBits } from './half.ts';
import type { QuantType } from './types.ts';

/**
 * Q3_K (block_q3_K): a super-block of 256 weights in 16 sub-blocks of 16, with signed 6-bit scales
 * times one f16 d. A quant is 2 low bits (qs, packed as in Q2_K) and a high bit (hmask); the high bit
 * *set* means no offset, clear means −4, so q runs −4…3. A weight is (d · (scale − 32)) · q.
 *
 *   [0, 32) hmask   [32, 96) qs   [96, 108) scales   [108, 110) d
 *
 * Sub-block s reads qs bytes 32·⌊s/8⌋ + 16·(s mod 2) … at shift 2·⌊(s mod 8)/2⌋, and bit ⌊s/2⌋ of
 * hmask bytes 16·(s mod 2) ….
 */
export const Q3_K: QuantType = {
  name: 'Q3_K',
  ggml: 11,
  blockElems: 256,
  blockBytes: 110,
  quants: [[0, 96]],
  header: [[96, 110, 0]],
  headerWords: 4,
  dequantize(src, offset, blocks, out, outOffset) {
    const half = f16Values();
    const scales = new Int32Array(16);
    for (let b = 0; b < blocks; b++) {
      const at = offset + b * 110;
      const y = outOffset + b * 256;
      const d = half[halfBits(src, at + 108)];
      unpackQ3Scales(src, at + 96, scales);
      for (let s = 0; s < 16; s++) {
        const dl = Math.fround(d * scales[s]);
        const q = at + 32 + 32 * (s >> 3) + 16 * (s & 1);
        const hm = at + 16 * (s & 1);
        const shift = 2 * ((s >> 1) & 3);
        const bit = 1 << (s >> 1);
        for (let l = 0; l < 16; l++) {
          const low = (src[q + l] >> shift) & 3;
          out[y + 16 * s + l] = dl * (src[hm + l] & bit ? low : low - 4);
        }
      }
    }
  },
};

/**
 * The 16 scales, 6 bits each in 12 bytes, minus their bias of 32. Scale s keeps its low 4 bits in
 * byte s mod 8 (low nibble for s < 8, high for s ≥ 8) and its top 2 bits in byte 8 + (s mod 4), at
 * bit 2·⌊s/4⌋.
 */
function unpackQ3Scales(src: Uint8Array, at: number, scales: Int32Array): void {
  for (let s = 0; s < 16; s++) {
    const low = (src[at + (s & 7)] >> (s < 8 ? 0 : 4)) & 0xf;
    const high = (src[at + 8 + (s & 3)] >> (2 * (s >> 2))) & 3;
    scales[s] = (low | (high << 4)) - 32;
  }
}
