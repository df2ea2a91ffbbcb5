import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q5_0 } from './q5_0.ts';

describe('Q5_0, one block worked by hand', () => {
  it('puts bit j of qh above weight j, as (q − 16) · d', () => {
    // d = 1; qh = bits 0 and 17 (bytes 2…5 = 01 00 02 00); qs[0] = 0x3a, qs[1] = 0.
    const block = handBlock(22, [...half(0, F16['1']), [2, 0x01], [4, 0x02], [6, 0x3a]]);
    const out = new Float32Array(32);
    Q5_0.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(10); // 0xa with bit 0 set: 26 − 16
    expect(out[16]).toBe(-13); // 0x3 with bit 16 clear: 3 − 16
    expect(out[1]).toBe(-16); // 0 with bit 1 clear
    expect(out[17]).toBe(0); // 0 with bit 17 set: 16 − 16
  });
});
