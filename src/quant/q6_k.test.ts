import { describe, expect, it } from 'vitest';
import { F16, half, handBlock } from '../../test-support/ggml-quants/hand-block.ts';
import { Q6_K } from './q6_k.ts';

describe('Q6_K, one block worked by hand', () => {
  it('is (d · scale) · (q − 32), 4 low bits from ql and 2 high bits from qh, signed 8-bit scales', () => {
    // d = 0.5 at 208; ql at 0, qh at 128, scales (int8) at 192.
    const block = handBlock(210, [
      ...half(208, F16['0.5']),
      [0, 0x21], // ql[0]: weight 0 low nibble 1, weight 64 high nibble 2
      [128 + 0, 0x02], // qh[0]: bits 0–1 = 2 (weight 0), bits 2–3 = 0 (weight 32), 4–5 = 0 (weight 64)
      [32, 0x0f], // ql[32]: weight 32 low nibble 15
      [32 + 17, 0xf0], // ql[49]: weight 96 + 17 high nibble 15
      [128 + 17, 0xc0], // qh[17]: bits 6–7 = 3 (weight 113)
      [192 + 0, 0xfd], // scale 0 = −3
      [192 + 2, 0x7f], // scale 2 = 127
      [192 + 4, 0x02], // scale 4 = 2
      [192 + 7, 0x80], // scale 7 = −128
      [192 + 8, 0x01], // scale 8 = 1 (the second half's first)
    ]);
    const out = new Float32Array(256);
    Q6_K.dequantize(block, 0, 1, out, 0);
    expect(out[0]).toBe(-1.5); // (0.5 · −3) · (1 + 32 − 32)
    expect(out[32]).toBe(-1079.5); // 63.5 · (15 − 32)
    expect(out[64]).toBe(-30); // 1 · (2 − 32)
    expect(out[113]).toBe(-1984); // −64 · (63 − 32)
    expect(out[128]).toBe(-16); // 0.5 · (0 − 32)
  });
});
