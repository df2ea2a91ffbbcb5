import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q4_0 } from './q4_0.ts';

describe('Q4_0, one block worked by hand', () => {
  it('reads weight j from the low nibble of byte j and weight j + 16 from its high nibble, as (q − 8) · d', () => {
    // d = 0.5; qs[0] = 0x9f, qs[5] = 0x08, every other quant byte 0.
    const block = handBlock(18, [...half(0, F16['0.5']), [2, 0x9f], [2 + 5, 0x08]]);
    const out = new Float32Array(32);
    Q4_0.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(3.5); // low nibble 15: (15 − 8) · 0.5
    expect(out[16]).toBe(0.5); // high nibble 9: (9 − 8) · 0.5
    expect(out[5]).toBe(0); // 8 is zero
    expect(out[21]).toBe(-4); // high nibble 0: (0 − 8) · 0.5
    expect(out[31]).toBe(-4);
  });
});
