import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q4_1 } from './q4_1.ts';

describe('Q4_1, one block worked by hand', () => {
  it('is q · d + m, low nibbles first', () => {
    // d = 0.25, m = −1; qs[3] = 0xf2.
    const block = handBlock(20, [...half(0, F16['0.25']), ...half(2, F16['-1']), [4 + 3, 0xf2]]);
    const out = new Float32Array(32);
    Q4_1.dequantize(block, 0, 1, out, 0);
    expect(out[3]).toBe(-0.5); // 2 · 0.25 − 1
    expect(out[19]).toBe(2.75); // 15 · 0.25 − 1
    expect(out[0]).toBe(-1); // q = 0 leaves the offset
  });
});
