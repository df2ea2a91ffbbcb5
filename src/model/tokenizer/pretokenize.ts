import { InternalError } from '../../errors.ts';
import { CATEGORY_MASK, cptFlags, FLAG } from './unicode.ts';

/**
 * The pre-tokenizer of byte-level BPE: llama.cpp's `unicode_regex_split`, which cuts a text into
 * words with a list of regexes, each applied to every piece the previous ones left. A regex that
 * llama.cpp runs by hand (GPT-2's, Llama 3's, Qwen2's, Qwen3.5's) is ported here line by line from
 * its src/unicode.cpp, quirks included; any other runs as a JavaScript regex the way llama.cpp runs
 * it through std::regex: on a "collapsed" text with one character per code point, each non-ASCII
 * code point replaced by a stand-in byte for its category, when the regex names a `\p{…}`
 * category, and on the code points themselves when it does not.
 *
 * Pieces are counted in code points, as llama.cpp counts them.
 */

const OUT_OF_RANGE = -1;
const APOSTROPHE = 0x27;
const SPACE = 0x20;
const CR = 0x0d;
const LF = 0x0a;

type Splitter = (cpts: readonly number[], offsets: readonly number[]) => number[];

/**
 * The loop every hand-written splitter shares: for each piece, a cursor over its code points that
 * reads past the piece's ends as OUT_OF_RANGE with no flags, and `add(end)`, which closes a word.
 */
function eachPiece(
  cpts: readonly number[],
  offsets: readonly number[],
  body: (piece: {
    ini: number;
    end: number;
    cpt: (pos: number) => number;
    flags: (pos: number) => number;
    add: (end: number) => number;
  }) => void,
): number[] {
  const out: number[] = [];
  let start = 0;
  for (const offset of offsets) {
    const ini = start;
    const end = start + offset;
    start = end;
    let prevEnd = ini;
    body({
      ini,
      end,
      cpt: (pos) => (pos >= ini && pos < end ? cpts[pos] : OUT_OF_RANGE),
      flags: (pos) => (pos >= ini && pos < end ? cptFlags(cpts[pos]) : 0),
      add: (wordEnd) => {
        const len = wordEnd - prevEnd;
        if (len > 0) out.push(len);
        prevEnd = wordEnd;
        return len;
      },
    });
  }
  return out;
}

const isRN = (c: number) => c === CR || c === LF;

/** Only ASCII capitals lower-case to the letters the contractions test, so this is llama.cpp's `unicode_tolower` there. */
const toLowerAscii = (c: number) => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c);

/**
 * `'s|'t|'re|'ve|'m|'ll|'d` at `pos`: the length of the contraction (0 if none), case-folded when
 * `fold` (Llama 3, Qwen: `(?i:…)`).
 */
function contraction(cpt: (pos: number) => number, pos: number, end: number, fold: boolean): number {
  if (cpt(pos) !== APOSTROPHE || pos + 1 >= end) return 0;
  const lower = fold ? toLowerAscii : (c: number) => c;
  const next = lower(cpt(pos + 1));
  if (next === 0x73 || next === 0x74 || next === 0x6d || next === 0x64) return 2; // s t m d
  if (pos + 2 < end) {
    const nextNext = lower(cpt(pos + 2));
    if (
      (next === 0x72 && nextNext === 0x65) || // re
      (next === 0x76 && nextNext === 0x65) || // ve
      (next === 0x6c && nextNext === 0x6c) // ll
    )
      return 3;
  }
  return 0;
}

/** GPT-2: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)` */
const splitGpt2: Splitter = (cpts, offsets) =>
  eachPiece(cpts, offsets, ({ end, cpt, flags, add, ini }) => {
    const LN = FLAG.letter | FLAG.number | FLAG.whitespace;
    for (let pos = ini; pos < end; ) {
      const c = cpt(pos);
      const n = contraction(cpt, pos, end, false);
      if (n > 0) {
        pos += add(pos + n);
        continue;
      }
      let f2 = c === SPACE ? flags(pos + 1) : flags(pos);
      if (f2 & FLAG.letter) {
        pos += c === SPACE ? 1 : 0;
        while (f2 & FLAG.letter) f2 = flags(++pos);
        add(pos);
        continue;
      }
      if (f2 & FLAG.number) {
        pos += c === SPACE ? 1 : 0;
        while (f2 & FLAG.number) f2 = flags(++pos);
        add(pos);
        continue;
      }
      if (!(f2 & LN) && f2) {
        pos += c === SPACE ? 1 : 0;
        while (!(f2 & LN) && f2) f2 = flags(++pos);
        add(pos);
        continue;
      }
      let spaces = 0;
      while (flags(pos + spaces) & FLAG.whitespace) spaces++;
      if (spaces > 1 && cpt(pos + spaces) !== OUT_OF_RANGE) {
        pos += spaces - 1;
        add(pos);
        continue;
      }
      if (spaces > 0) {
        pos += spaces;
        add(pos);
        continue;
      }
      add(++pos);
    }
  });

/**
 * Llama 3, Qwen2 and Qwen3.5 differ only in how many digits make a word and in whether marks
 * (`\p{M}`) join letters:
 * `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
 */
function llama3Like(maxDigits: number, marks: boolean): Splitter {
  const word = FLAG.letter | (marks ? FLAG.accentMark : 0);
  const notPunct = FLAG.whitespace | FLAG.number | word;
  return (cpts, offsets) =>
    eachPiece(cpts, offsets, ({ ini, end, cpt, flags, add }) => {
      for (let pos = ini; pos < end; ) {
        const c = cpt(pos);
        const f = flags(pos);
        const n = contraction(cpt, pos, end, true);
        if (n > 0) {
          pos += add(pos + n);
          continue;
        }
        // [^\r\n\p{L}\p{N}]?\p{L}+
        if (!(isRN(c) || f & FLAG.number) && (f & word || flags(pos + 1) & word)) {
          pos++;
          while (flags(pos) & word) pos++;
          add(pos);
          continue;
        }
        // \p{N}{1,3} (or \p{N})
        if (f & FLAG.number) {
          let first = pos;
          while (flags(pos) & FLAG.number) {
            if (++pos - first >= maxDigits) {
              add(pos);
              first = pos;
            }
          }
          add(pos);
          continue;
        }
        // <space>?[^\s\p{L}\p{N}]+[\r\n]*: llama.cpp tests the flags of pos itself, not of pos + 1
        let f2 = c === SPACE ? flags(pos + 1) : f;
        if (!(f2 & notPunct) && f) {
          pos += c === SPACE ? 1 : 0;
          while (!(f2 & notPunct) && f2) f2 = flags(++pos);
          while (isRN(cpt(pos))) pos++;
          add(pos);
          continue;
        }
        let spaces = 0;
        let lastRN = 0;
        while (flags(pos + spaces) & FLAG.whitespace) {
          if (isRN(cpt(pos + spaces))) lastRN = pos + spaces + 1;
          spaces++;
        }
        // \s*[\r\n]+
        if (lastRN > 0) {
          pos = lastRN;
          add(pos);
          continue;
        }
        // \s+(?!\S)
        if (spaces > 1 && cpt(pos + spaces) !== OUT_OF_RANGE) {
          pos += spaces - 1;
          add(pos);
          continue;
        }
        // \s+
        if (spaces > 0) {
          pos += spaces;
          add(pos);
          continue;
        }
        add(++pos);
      }
    });
}

/** The regexes llama.cpp runs by hand, by their exact text (unicode.cpp's unicode_regex_split_custom). */
const CUSTOM: ReadonlyMap<string, Splitter> = new Map([
  ["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", splitGpt2],
  [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    llama3Like(3, false),
  ],
  [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    llama3Like(1, false),
  ],
  [
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    llama3Like(1, true),
  ],
]);

/** The regexes split by hand here, which must be those llama.cpp splits by hand (pre.test.ts). */
export const HAND_WRITTEN: ReadonlySet<string> = new Set(CUSTOM.keys());

// ---------------------------------------------------------------------------------------------
// Every other regex, as std::regex runs it in llama.cpp

/** The categories a regex may name, and the stand-in byte each collapses to (unicode.cpp's k_ucat_*). */
const CATEGORY_NAMES: Readonly<Record<string, number>> = {
  '\\p{N}': FLAG.number,
  '\\p{L}': FLAG.letter,
  '\\p{P}': FLAG.punctuation,
  '\\p{M}': FLAG.accentMark,
  '\\p{S}': FLAG.symbol,
  '\\p{Lu}': FLAG.letter,
  '\\p{Ll}': FLAG.letter,
  '\\p{Lt}': FLAG.letter,
  '\\p{Lm}': FLAG.letter,
  '\\p{Lo}': FLAG.letter,
};

/** Each collapsible category: its stand-in byte, then the ASCII characters of it that stay as they are. */
const COLLAPSED: ReadonlyMap<number, string> = new Map([
  [FLAG.number, '\xD10-9'],
  [FLAG.letter, '\xD2A-Za-z'],
  [FLAG.punctuation, '\xD3!-#%-*,-/:-;?-@\\[-\\]_\\{\\}'],
  [FLAG.accentMark, '\xD4'],
  [FLAG.symbol, '\xD5\\$\\+<->^`\\|\\~'],
]);

/** The stand-in of a non-ASCII code point of no collapsible category. */
const OTHER = '\xD0';
/** What a non-ASCII whitespace code point becomes: std::regex's `\s` knows only ASCII. */
const VERTICAL_TAB = '\x0B';

const namesCategory = (regex: string) => Object.keys(CATEGORY_NAMES).some((name) => regex.includes(name));

/** The regex over collapsed text: each `\p{…}` becomes a class of its stand-in and its ASCII members. */
function collapseRegex(regex: string): RegExp {
  let out = '';
  let inside = false;
  for (let i = 0; i < regex.length; i++) {
    const ch = regex[i];
    if (ch.charCodeAt(0) >= 0x80) {
      throw new InternalError(`pre-tokenizer regex ${regex} names categories and non-ASCII characters`);
    }
    if (ch === '[' && (i === 0 || regex[i - 1] !== '\\')) {
      out += '[';
      inside = true;
      continue;
    }
    if (inside && ch === ']' && regex[i - 1] !== '\\') {
      out += ']';
      inside = false;
      continue;
    }
    if (ch === '\\' && regex.startsWith('p{', i + 1)) {
      const close = regex.indexOf('}', i + 3);
      const category = close >= 0 && close <= i + 10 ? CATEGORY_NAMES[regex.slice(i, close + 1)] : undefined;
      if (category !== undefined) {
        const members = COLLAPSED.get(category) ?? '';
        out += inside ? members : `[${members}]`;
        i = close;
        continue;
      }
    }
    out += ch;
  }
  // No 'u' flag: the collapsed text is one code unit per code point, and its `\s` is ASCII's.
  return new RegExp(out, 'g');
}

/** ASCII whitespace, std::regex's `\s` in the C locale (JavaScript's also takes U+FEFF and others). */
const ASCII_SPACE = '\\t\\n\\v\\f\\r ';

/** A regex over the code points themselves, with `\s` and `\S` narrowed to ASCII as std::wregex has them. */
function wideRegex(regex: string): RegExp {
  let out = '';
  let inside = false;
  for (let i = 0; i < regex.length; i++) {
    const ch = regex[i];
    if (ch === '\\' && i + 1 < regex.length) {
      const next = regex[i + 1];
      if (next === 's') out += inside ? ASCII_SPACE : `[${ASCII_SPACE}]`;
      else if (next === 'S' && !inside) out += `[^${ASCII_SPACE}]`;
      else if (next === 'S') throw new InternalError(`pre-tokenizer regex ${regex} has \\S inside a class`);
      else out += ch + next;
      i++;
      continue;
    }
    if (ch === '[') inside = true;
    else if (ch === ']') inside = false;
    out += ch;
  }
  return new RegExp(out, 'gu');
}

const compiled = new Map<string, RegExp>();

function compile(regex: string): RegExp {
  let re = compiled.get(regex);
  if (!re) {
    re = namesCategory(regex) ? collapseRegex(regex) : wideRegex(regex);
    compiled.set(regex, re);
  }
  return re;
}

/** The text one regex runs over: collapsed, or the code points with non-ASCII whitespace as \v. */
function regexText(cpts: readonly number[], collapsed: boolean): string {
  let s = '';
  for (const cp of cpts) {
    if (cp < 0x80) s += String.fromCharCode(cp);
    else {
      const flags = cptFlags(cp);
      if (flags & FLAG.whitespace) s += VERTICAL_TAB;
      else if (!collapsed) s += String.fromCodePoint(cp);
      else s += COLLAPSED.get(flags & CATEGORY_MASK)?.[0] ?? OTHER;
    }
  }
  return s;
}

/**
 * unicode.cpp's unicode_regex_split_stl: within each piece, every match is a word and so is every
 * stretch between matches. Match positions come back in code units and are counted in code points.
 */
function splitByRegex(cpts: readonly number[], offsets: readonly number[], regex: string): number[] {
  const re = compile(regex);
  const collapsed = namesCategory(regex);
  const out: number[] = [];
  let start = 0;
  for (const offset of offsets) {
    const piece = cpts.slice(start, start + offset);
    const text = regexText(piece, collapsed);
    // Code unit → code point index: they differ after a code point above U+FFFF, which the
    // uncollapsed text spells with two units.
    const cpAt = new Int32Array(text.length + 1);
    let unit = 0;
    for (let cp = 0; cp < piece.length; cp++) {
      cpAt[unit++] = cp;
      if (!collapsed && piece[cp] > 0xffff) cpAt[unit++] = cp;
    }
    cpAt[unit] = piece.length;
    let done = 0;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      if (m[0].length === 0) {
        // No regex llama.cpp lists matches empty; step on rather than loop.
        re.lastIndex++;
        continue;
      }
      const at = cpAt[m.index];
      const to = cpAt[m.index + m[0].length];
      if (at > done) out.push(at - done);
      out.push(to - at);
      done = to;
    }
    if (done < offset) out.push(offset - done);
    start += offset;
  }
  return out;
}

/**
 * llama.cpp's unicode_regex_split, without the byte encoding: the words of a text given as its
 * code points, cut by `regexes` in order, as their lengths in code points.
 */
export function splitWords(cpts: readonly number[], regexes: readonly string[]): number[] {
  if (cpts.length === 0) return [];
  let offsets: number[] = [cpts.length];
  for (const regex of regexes) {
    const custom = CUSTOM.get(regex);
    offsets = custom ? custom(cpts, offsets) : splitByRegex(cpts, offsets, regex);
  }
  return offsets;
}
