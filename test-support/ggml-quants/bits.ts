/**
 * Where two f32 arrays differ in their bit patterns (so −0 ≠ 0 and a NaN is compared by its bits):
 * '' when they are identical, else a message naming the first few mismatches by element and
 * block.
 */
export function bitMismatches(
  actual: Float32Array,
  expected: Float32Array,
  blockElems: number,
  limit = 8,
): string {
  if (actual.length !== expected.length) return `${actual.length} values, expected ${expected.length}`;
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  const lines: string[] = [];
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === e[i]) continue;
    count++;
    if (lines.length < limit) {
      const hex = (x: number) => `0x${x.toString(16).padStart(8, '0')}`;
      lines.push(
        `  [${i}] block ${Math.floor(i / blockElems)} elem ${i % blockElems}: ` +
          `${actual[i]} (${hex(a[i])}), expected ${expected[i]} (${hex(e[i])})`,
      );
    }
  }
  return count === 0 ? '' : `${count} of ${a.length} values differ:\n${lines.join('\n')}`;
}
