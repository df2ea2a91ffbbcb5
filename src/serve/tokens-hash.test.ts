import { describe, expect, it } from 'vitest';
import { hashTokens } from './tokens-hash.ts';

describe('hashTokens', () => {
  it('is FNV-1a over the little-endian bytes of each id', () => {
    // FNV-1a 32 of no bytes is its offset basis; of the four bytes 01 00 00 00 it was computed
    // independently, in Python:
    expect(hashTokens([])).toBe('0:811c9dc5');
    // Python: h = 0x811c9dc5; for b in (1, 0, 0, 0): h = ((h ^ b) * 0x01000193) % 2**32 → 0xfb69b604.
    expect(hashTokens([1])).toBe('1:fb69b604');
  });
  it('tells apart order and length', () => {
    expect(hashTokens([1, 2])).not.toBe(hashTokens([2, 1]));
    expect(hashTokens([0])).not.toBe(hashTokens([0, 0]));
  });
});
