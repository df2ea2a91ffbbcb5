import { CATEGORY_RANGES, WHITESPACE } from './unicode-data.ts';

/**
 * Code points as llama.cpp's tokenizers see them (its src/unicode.cpp): a category per code point
 * from llama.cpp's own table, its whitespace set, and GPT-2's mapping of bytes to printable
 * characters that byte-level BPE vocabularies are written in.
 */

/** llama.cpp's `unicode_cpt_flags` bits, the ones its pre-tokenizers read. */
export const FLAG = {
  undefined: 0x0001,
  /** `\p{N}` */
  number: 0x0002,
  /** `\p{L}` */
  letter: 0x0004,
  /** `\p{Z}` */
  separator: 0x0008,
  /** `\p{M}` */
  accentMark: 0x0010,
  /** `\p{P}` */
  punctuation: 0x0020,
  /** `\p{S}` */
  symbol: 0x0040,
  /** `\p{C}` */
  control: 0x0080,
  /** The one bit that is not a category: `\s`. */
  whitespace: 0x0100,
} as const;

/** The category bits, without whitespace: exactly one is set for every code point. */
export const CATEGORY_MASK = 0x00ff;

const CATEGORY_OF_LETTER: Record<string, number> = {
  X: 0,
  U: FLAG.undefined,
  N: FLAG.number,
  L: FLAG.letter,
  Z: FLAG.separator,
  M: FLAG.accentMark,
  P: FLAG.punctuation,
  S: FLAG.symbol,
  C: FLAG.control,
};

const MAX_CODEPOINT = 0x10ffff;

let table: Uint16Array | undefined;

/** The flags of every code point, decoded once from the table on first use (2.2 MB). */
function flagTable(): Uint16Array {
  if (table) return table;
  const t = new Uint16Array(MAX_CODEPOINT + 1);
  let start = 0;
  let flags = 0;
  let digits = '';
  for (const ch of CATEGORY_RANGES) {
    const category = CATEGORY_OF_LETTER[ch];
    if (category === undefined) {
      digits += ch;
      continue;
    }
    const next = start + Number.parseInt(digits, 36);
    t.fill(flags, start, Math.min(next, MAX_CODEPOINT + 1));
    start = next;
    flags = category;
    digits = '';
  }
  for (const cp of WHITESPACE) t[cp] |= FLAG.whitespace;
  table = t;
  return t;
}

/** llama.cpp's flags for one code point (`unicode_cpt_flags_from_cpt`). */
export function cptFlags(cp: number): number {
  return flagTable()[cp];
}

/** The code points of a string; a lone surrogate becomes U+FFFD, as UTF-8 encoding would make it. */
export function codepoints(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
        i++;
        continue;
      }
    }
    out.push(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
  }
  return out;
}

/** The UTF-8 bytes of one code point, appended to `out`. */
export function pushUtf8(cp: number, out: number[]): void {
  if (cp < 0x80) out.push(cp);
  else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
}

/** The UTF-8 bytes of a string (lone surrogates as U+FFFD). */
export function utf8Bytes(text: string): number[] {
  const out: number[] = [];
  for (const cp of codepoints(text)) pushUtf8(cp, out);
  return out;
}

/** The length of a string in UTF-8 bytes, the unit llama.cpp measures token texts in. */
export function utf8Length(text: string): number {
  let n = 0;
  for (const cp of codepoints(text)) n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  return n;
}

/**
 * GPT-2's bytes-to-unicode table: printable bytes stand for themselves, the other 68 take the
 * code points from U+0100 up, in byte order. Byte-level BPE vocabularies spell every token in it
 * (a space is "Ġ", a line feed "Ċ").
 */
function byteToCharTable(): string[] {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
  const out: string[] = [];
  let next = 0x100;
  for (let b = 0; b < 256; b++) out.push(String.fromCharCode(printable(b) ? b : next++));
  return out;
}

/** Byte → its GPT-2 character (each one UTF-16 code unit). */
export const BYTE_TO_CHAR: readonly string[] = byteToCharTable();

/** GPT-2 character → its byte. */
export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));
