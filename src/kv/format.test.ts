import { describe, expect, it } from 'vitest';
import { decodeKvRow, encodeKvRow, kvRowBytes, parseKvDtype, roundTripKv } from './format.ts';
import { pageBytes } from './layout.ts';

describe('KV element types', () => {
  it('row bytes: f32 4 per value, f16 2, int8 1 plus a 4-byte scale (hand counts)', () => {
    // headDim 32: 128, 64 and 32 + 4 bytes; headDim 64: 256, 128, 68.
    expect([kvRowBytes(32, 'f32'), kvRowBytes(32, 'f16'), kvRowBytes(32, 'int8')]).toEqual([128, 64, 36]);
    expect([kvRowBytes(64, 'f32'), kvRowBytes(64, 'f16'), kvRowBytes(64, 'int8')]).toEqual([256, 128, 68]);
    // A page of 16 tokens, 2 KV heads, K and V: 2 · 2 · 16 rows.
    const g = { kvHeads: 2, pageSize: 16, headDim: 32 } as const;
    expect(pageBytes({ ...g, dtype: 'f32' })).toBe(64 * 128);
    expect(pageBytes({ ...g, dtype: 'int8' })).toBe(64 * 36);
  });

  it('f16 stores pairs in one u32, low half first, rounded to nearest', () => {
    const words = encodeKvRow('f16', [1, -2, 0.5, 65504]);
    // binary16: 1 = 0x3c00, −2 = 0xc000, 0.5 = 0x3800, 65504 = 0x7bff.
    expect([...words]).toEqual([0xc0003c00, 0x7bff3800]);
    expect([...decodeKvRow('f16', words, 4)]).toEqual([1, -2, 0.5, 65504]);
    // 1 + 2⁻¹² is below half an f16 ulp (2⁻¹¹) above 1: it rounds to 1.
    expect(decodeKvRow('f16', encodeKvRow('f16', [1 + 2 ** -12, 0, 0, 0]), 4)[0]).toBe(1);
  });

  it('int8: q = round(x / absmax · 127), the absmax after the row; reads back as q / 127 · absmax', () => {
    const row = [2, -1, 0.5, 0, -2, 1.015625, 0, 0];
    const words = encodeKvRow('int8', row);
    expect(words.length).toBe(3);
    // absmax 2: q = 127, −63.5 → −64 (ties to even), 31.75 → 32, 0, −127, 64.496… → 64, 0, 0.
    const bytes = (w: number) => [0, 1, 2, 3].map((b) => (((w >>> (8 * b)) & 0xff) << 24) >> 24);
    expect([...bytes(words[0]), ...bytes(words[1])]).toEqual([127, -64, 32, 0, -127, 64, 0, 0]);
    expect(new Float32Array(words.buffer)[2]).toBe(2);
    const back = decodeKvRow('int8', words, 8);
    expect(back[0]).toBe(2);
    expect(back[1]).toBeCloseTo((-64 / 127) * 2, 12);
    // Every value within half a step (absmax / 254) of the original.
    for (const [i, x] of row.entries()) expect(Math.abs(back[i] - x)).toBeLessThanOrEqual(2 / 254 + 1e-12);
  });

  it('an all-zero int8 row stores scale 0 and reads back zeros', () => {
    expect([...roundTripKv('int8', new Float64Array(8), 8)]).toEqual(new Array(8).fill(0));
  });

  it('an unknown type is an input error naming the flag', () => {
    expect(() => parseKvDtype('fp8')).toThrow(/--kv-dtype: "fp8" is not a KV type \(f32, f16, int8\)/);
  });
});
