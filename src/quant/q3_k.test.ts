import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q3_K } from './q3_k.ts';

describe('Q3_K, one block worked by hand', () => {
  it('is (d · (scale − 32)) · q, q = the 2 low bits, less 4 where the hmask bit is clear', () => {
    // d = 0.5 at 108. Scales (bytes 96…107): scale 0 is the low nibble of byte 96 (4) with bits 0–1
    // of byte 104 (2) on top: 36 − 32 = 4. Scale 9 is the high nibble of byte 97 (7) with bits 4–5
    // of byte 105 (0): 7 − 32 = −25.
    const block = handBlock(110, [
      ...half(108, F16['0.5']),
      [96, 0x04],
      [104, 0x02],
      [97, 0x70],
      [0, 0x01], // hmask[0] bit 0: weight 0 has no offset
      [32, 0x03], // qs[0]: weight 0, q = 3
      [33, 0x01], // qs[1]: weight 1, q = 1, hmask[1] clear: 1 − 4
      // Weight 144 = second half, sub-block 9: qs[48] at shift 0, hmask[16] bit 4.
      [32 + 48, 0x02],
      [16, 0x10],
    ]);
    const out = new Float32Array(256);
    Q3_K.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(6); // 2 · 3
    expect(out[1]).toBe(-6); // 2 · −3
    expect(out[144]).toBe(-25); // −12.5 · 2
    expect(out[145]).toBe(50); // −12.5 · (0 − 4)
  });
});
