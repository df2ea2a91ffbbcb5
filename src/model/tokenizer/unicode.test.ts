import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { llamaPath } from '../../../test-support/llama-bundle.ts';
import { BYTE_TO_CHAR, CHAR_TO_BYTE, codepoints, cptFlags, FLAG, utf8Bytes, utf8Length } from './unicode.ts';
import { CATEGORY_RANGES, WHITESPACE } from './unicode-data.ts';

/** llama.cpp's src/unicode-data.cpp, its category ranges and whitespace set. */
function llamaTables() {
  const src = readFileSync(llamaPath('src/unicode-data.cpp'), 'utf8');
  const block = (name: string) => {
    const at = src.indexOf(`${name} = {`);
    return src.slice(at, src.indexOf('};', at));
  };
  const ranges = [...block('unicode_ranges_flags').matchAll(/\{0x([0-9A-F]+), 0x([0-9A-F]+)\}/g)].map(
    (m) => [Number.parseInt(m[1], 16), Number.parseInt(m[2], 16)] as const,
  );
  const whitespace = [...block('unicode_set_whitespace').matchAll(/0x([0-9A-F]+)/g)].map((m) =>
    Number.parseInt(m[1], 16),
  );
  return { ranges, whitespace };
}

/** The ranges in unicode-data.ts's encoding (see there). */
function encode(ranges: readonly (readonly [number, number])[]): string {
  const letter: Record<number, string> = {
    0: 'X',
    1: 'U',
    2: 'N',
    4: 'L',
    8: 'Z',
    16: 'M',
    32: 'P',
    64: 'S',
    128: 'C',
  };
  let prev = 0;
  let out = '';
  for (const [start, flags] of ranges) {
    out += (start - prev).toString(36) + letter[flags];
    prev = start;
  }
  return out;
}

describe("the Unicode table, against llama.cpp's unicode-data.cpp", () => {
  it('holds the same categories and whitespace (on a mismatch, the message is the new table)', () => {
    const { ranges, whitespace } = llamaTables();
    expect(ranges.length).toBeGreaterThan(2000);
    const expected = encode(ranges);
    expect(CATEGORY_RANGES, `CATEGORY_RANGES should be:\n${expected}`).toBe(expected);
    expect([...WHITESPACE].sort((a, b) => a - b)).toEqual([...whitespace].sort((a, b) => a - b));
  });

  it('gives each code point its category, whitespace on top', () => {
    expect(cptFlags(0x41)).toBe(FLAG.letter);
    expect(cptFlags(0x33)).toBe(FLAG.number);
    expect(cptFlags(0x20)).toBe(FLAG.separator | FLAG.whitespace);
    expect(cptFlags(0x0a)).toBe(FLAG.control | FLAG.whitespace);
    expect(cptFlags(0x2c)).toBe(FLAG.punctuation);
    expect(cptFlags(0x24)).toBe(FLAG.symbol);
    expect(cptFlags(0x301)).toBe(FLAG.accentMark);
    expect(cptFlags(0x4e00)).toBe(FLAG.letter);
    expect(cptFlags(0x1f999)).toBe(FLAG.symbol); // 🦙
    expect(cptFlags(0x10ffff)).toBe(FLAG.undefined);
  });
});

describe('code points and bytes', () => {
  it('read a string by code points, a lone surrogate as U+FFFD, and count UTF-8 bytes', () => {
    expect(codepoints('a🦙\ud800b')).toEqual([0x61, 0x1f999, 0xfffd, 0x62]);
    expect(utf8Bytes('é🦙')).toEqual([0xc3, 0xa9, 0xf0, 0x9f, 0xa6, 0x99]);
    expect(utf8Length('<｜end▁of▁sentence｜>')).toBe(27);
  });

  it("map bytes to GPT-2's characters and back", () => {
    expect(BYTE_TO_CHAR[0x20]).toBe('Ġ');
    expect(BYTE_TO_CHAR[0x0a]).toBe('Ċ');
    expect(BYTE_TO_CHAR[0x41]).toBe('A');
    expect(BYTE_TO_CHAR[0xad]).toBe('Ń'); // the last of the 68 non-printable bytes: U+0100 + 67
    expect(new Set(BYTE_TO_CHAR).size).toBe(256);
    for (let b = 0; b < 256; b++) expect(CHAR_TO_BYTE.get(BYTE_TO_CHAR[b])).toBe(b);
  });
});
