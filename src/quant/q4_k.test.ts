import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q4_K } from './q4_k.ts';

describe('Q4_K, one block worked by hand', () => {
  it('is (d · scale) · q − dmin · min with the 6-bit scales and mins of the 12 packed bytes', () => {
    // d = 0.5, dmin = 0.25; scale bytes s[0…11] at 4…15, quants at 16.
    const block = handBlock(144, [
      ...half(0, F16['0.5']),
      ...half(2, F16['0.25']),
      [4 + 0, 0x03], // s[0]: sub-block 0 scale 3
      [4 + 4, 0x04], // s[4]: sub-block 0 min 4
      [4 + 1, 0x41], // s[1]: sub-block 1 scale 1; its top bits (01) are sub-block 5's scale bits 4–5
      [4 + 9, 0x32], // s[9]: sub-block 5 scale low bits 2, min 3
      [16 + 0, 0x5a], // qs[0]: weight 0 = 0xa, weight 32 = 0x5
      [16 + 64, 0x70], // qs[64]: weight 128 = 0, weight 160 = 7
    ]);
    const out = new Float32Array(256);
    Q4_K.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(14); // (0.5 · 3) · 10 − 0.25 · 4
    expect(out[32]).toBe(2.5); // (0.5 · 1) · 5 − 0
    expect(out[160]).toBe(62.25); // sub-block 5: scale 16 + 2 = 18, min 3: 9 · 7 − 0.75
    expect(out[128]).toBe(0); // sub-block 4: scale 0, min 0
  });
});
