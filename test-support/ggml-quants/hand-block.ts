/**
 * A block written byte by byte for the hand-worked tests: zeros except the listed bytes, each
 * written at [offset, value]; `half` writes a binary16 (given as its bits) little-endian.
 */
export function handBlock(
  size: number,
  bytes: readonly (readonly [at: number, value: number])[],
): Uint8Array {
  const block = new Uint8Array(size);
  for (const [at, value] of bytes) block[at] = value;
  return block;
}

/** The two bytes of the binary16 `bits` at `at`, little-endian. */
export function half(at: number, bits: number): [number, number][] {
  return [
    [at, bits & 0xff],
    [at + 1, bits >> 8],
  ];
}

/** binary16 bits of the values the hand-worked blocks use (exact powers of two and small sums). */
export const F16 = { '-1': 0xbc00, '0.25': 0x3400, '0.5': 0x3800, '1': 0x3c00, '2': 0x4000 } as const;
