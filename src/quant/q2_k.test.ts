import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q2_K } from './q2_k.ts';

describe('Q2_K, one block worked by hand', () => {
  it('is (d · scale) · q − dmin · min, four 2-bit quants a byte across the sub-blocks of a half', () => {
    // d = 0.5, dmin = 0.25 (after 16 scale bytes and 64 quant bytes).
    // qs[0] = 0xe4 holds q = 0, 1, 2, 3 at shifts 0, 2, 4, 6: weights 0, 32, 64, 96.
    const block = handBlock(84, [
      ...half(80, F16['0.5']),
      ...half(82, F16['0.25']),
      [0, 0x31], // sub-block 0: scale 1, min 3
      [1, 0x10], // sub-block 1: scale 0, min 1
      [2, 0x02], // sub-block 2: scale 2, min 0
      [4, 0x1f], // sub-block 4: scale 15, min 1
      [8, 0x23], // sub-block 8: scale 3, min 2
      [16, 0xe4], // qs[0]
      [16 + 32, 0x03], // qs[32]: the second half's first byte, q = 3 at shift 0 (weight 128)
    ]);
    const out = new Float32Array(256);
    Q2_K.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(-0.75); // 0.5 · 0 − 0.25 · 3
    expect(out[16]).toBe(-0.25); // sub-block 1 reads qs[16] = 0: 0 − 0.25 · 1
    expect(out[32]).toBe(1); // 1.0 · 1 − 0
    expect(out[64]).toBe(14.75); // 7.5 · 2 − 0.25
    expect(out[96]).toBe(0); // sub-block 6: scale 0, min 0
    expect(out[128]).toBe(4); // 1.5 · 3 − 0.5
  });
});
