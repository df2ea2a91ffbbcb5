import { describe, expect, it } from 'vitest';
import { hashTokens } from './tokens-hash.ts';

describe('hashTokens', () => {
  it('is FNV-1a over the little-endian bytes of each id', () => {
    // FNV-1a 32 of no bytes is its offset basis; of the four bytes 01 00 00 00, counted by hand:
    // ((0x811c9dc5 ^ 1) · 0x01000193) mod 2³², then three zero bytes, each times the prime.
    expect(hashTokens([])).toBe('0:811c9dc5');
    let h = BigInt(0x811c9dc5 ^ 1);
    const p = 0x01000193n;
    const m = 2n ** 32n;
    h = (h * p) % m;
    for (let i = 0; i < 3; i++) h = (h * p) % m;
    expect(hashTokens([1])).toBe(`1:${h.toString(16).padStart(8, '0')}`);
  });
  it('tells apart order and length', () => {
    expect(hashTokens([1, 2])).not.toBe(hashTokens([2, 1]));
    expect(hashTokens([0])).not.toBe(hashTokens([0, 0]));
  });
});
