import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q5_K } from './q5_k.ts';

describe('Q5_K, one block worked by hand', () => {
  it("is Q4_K's formula with bit c of qh byte l as the fifth bit of sub-block c's weight l", () => {
    // d = 1, dmin = 0.5; scales at 4, qh at 16, qs at 48.
    const block = handBlock(176, [
      ...half(0, F16['1']),
      ...half(2, F16['0.5']),
      [4 + 0, 0x02], // sub-block 0 scale 2
      [4 + 4, 0x01], // sub-block 0 min 1
      [4 + 3, 0x01], // sub-block 3 scale 1, min 0
      [16 + 0, 0x09], // qh[0]: bits 0 (sub-block 0) and 3 (sub-block 3)
      [48 + 0, 0x03], // qs[0]: weight 0 low nibble 3
      [48 + 1, 0x04], // qs[1]: weight 1 low nibble 4, qh[1] = 0
      [48 + 32, 0xf0], // qs[32]: weight 96 (sub-block 3, high nibble) 15, weight 64 (sub-block 2) 0
    ]);
    const out = new Float32Array(256);
    Q5_K.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(37.5); // 2 · (3 + 16) − 0.5
    expect(out[1]).toBe(7.5); // 2 · 4 − 0.5
    expect(out[96]).toBe(31); // 1 · (15 + 16) − 0
    expect(out[64]).toBe(0);
  });
});
