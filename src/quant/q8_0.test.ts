import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q8_0 } from './q8_0.ts';

describe('Q8_0, one block worked by hand', () => {
  it('is the signed byte times d', () => {
    // d = 0.25; qs[0] = 127, qs[1] = −128, qs[31] = −1.
    const block = handBlock(34, [...half(0, F16['0.25']), [2, 0x7f], [3, 0x80], [2 + 31, 0xff]]);
    const out = new Float32Array(32);
    Q8_0.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(31.75);
    expect(out[1]).toBe(-32);
    expect(out[31]).toBe(-0.25);
    expect(out[2]).toBe(0);
  });

  it('reads each block at its own offset and writes where it is told', () => {
    const two = new Uint8Array(3 + 2 * 34);
    two.set(handBlock(34, [...half(0, F16['1']), [2, 5]]), 3);
    two.set(handBlock(34, [...half(0, F16['2']), [2, 5]]), 3 + 34);
    const out = new Float32Array(70).fill(Number.NaN);
    Q8_0.dequantize(two, 3, 2, out, 6);
    expect([out[5], out[6], out[38], out[69]]).toEqual([Number.NaN, 5, 10, 0]);
  });
});
