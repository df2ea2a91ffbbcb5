import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q5_1 } from './q5_1.ts';

describe('Q5_1, one block worked by hand', () => {
  it('is q · d + m with the fifth bits in the word after the scales', () => {
    // d = 0.5, m = 2; qh = bit 31 (byte 7 = 0x80); qs[15] = 0xf1.
    const block = handBlock(24, [...half(0, F16['0.5']), ...half(2, F16['2']), [7, 0x80], [8 + 15, 0xf1]]);
    const out = new Float32Array(32);
    Q5_1.dequantize(block, 0, 1, out, 0);
    expect(out[15]).toBe(2.5); // 1 · 0.5 + 2
    expect(out[31]).toBe(17.5); // (15 + 16) · 0.5 + 2
  });
});
