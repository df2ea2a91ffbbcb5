import { InputError } from '../../errors.ts';
import { CHAR_TO_BYTE, codepoints, pushUtf8, utf8Bytes } from './unicode.ts';
import { ATTR, type Vocab } from './vocab.ts';

/**
 * Token ids back to text as llama.cpp does it: llama_token_to_piece for one token (SPM's ▁ is a
 * space, a byte token is its byte, a BPE token's GPT-2 characters are bytes again), and
 * llama_detokenize for a sequence (the first token's leading space dropped where the vocabulary
 * adds one when tokenizing, and BPE's clean-up of spaces before punctuation). Pieces are bytes: a
 * character split over byte tokens becomes text only once all its bytes are there.
 */

const SPACE = 0x20;

/** llama_vocab::impl::token_to_byte: the hex digits of `<0xXX>`, read as strtol reads them. */
function tokenByte(text: string): number {
  const hex = /^[0-9A-Fa-f]{1,2}/.exec(text.slice(3, 5));
  return hex ? Number.parseInt(hex[0], 16) : 0;
}

/** llama_decode_text: each GPT-2 character as its byte; one outside the table as llama.cpp marks it. */
function gpt2Bytes(text: string): number[] {
  const out: number[] = [];
  for (const cp of codepoints(text)) {
    const byte = CHAR_TO_BYTE.get(String.fromCodePoint(cp));
    if (byte !== undefined) {
      out.push(byte);
      continue;
    }
    const utf8: number[] = [];
    pushUtf8(cp, utf8);
    const hex = utf8.map((b) => b.toString(16).padStart(2, '0')).join('');
    out.push(...utf8Bytes(`[UNK_BYTE_0x${hex}${text}]`));
  }
  return out;
}

/**
 * The bytes of one token (llama_token_to_piece with lstrip 0): control and unknown tokens are
 * empty unless `special`; user-defined ones are always their text.
 */
export function tokenPiece(vocab: Vocab, id: number, special: boolean): number[] {
  if (!Number.isInteger(id) || id < 0 || id >= vocab.tokens.length) {
    throw new InputError(`token id ${id} is outside the vocabulary of ${vocab.tokens.length} tokens`);
  }
  const attr = vocab.attrs[id];
  if (!special && attr & (ATTR.unknown | ATTR.control)) return [];
  const text = vocab.tokens[id];
  if (attr & (ATTR.unknown | ATTR.control | ATTR.userDefined)) return utf8Bytes(text);
  if (attr & ATTR.normal)
    return vocab.model === 'llama' ? utf8Bytes(text.replaceAll('\u2581', ' ')) : gpt2Bytes(text);
  if (attr & ATTR.byte) return [tokenByte(text)];
  // Unused and undefined tokens render as nothing, as in llama.cpp.
  return [];
}

/**
 * llama_detokenize's clean-up for BPE vocabularies (clean_spaces), on the bytes in place, pass by
 * pass as llama.cpp writes it: " ?", " !", " .", " ," lose the space; " ' " loses both; " 's",
 * " 'm", " 're", " 've" lose the space.
 */
function cleanSpaces(text: number[]): number[] {
  const [apostrophe, qm, ex, dot, comma] = [0x27, 0x3f, 0x21, 0x2e, 0x2c];
  const ch = (c: string) => c.charCodeAt(0);
  let total = text.length;

  const total1 = total;
  total = total ? 1 : 0;
  for (let i = 1; i < total1; i++) {
    const x = text[i];
    if (text[i - 1] === SPACE && (x === qm || x === ex || x === dot || x === comma)) total--;
    text[total++] = x;
  }

  const total2 = total;
  total = total ? 1 : 0;
  for (let i = 1; i < total2; i++) {
    const x = text[i];
    if (x === apostrophe && i + 1 < total2 && text[i - 1] === SPACE && text[i + 1] === SPACE) {
      total--;
      text[++i] = 0;
    }
    text[total++] = x;
  }

  const total3 = total;
  total = total ? 1 : 0;
  for (let i = 1; i < total3; i++) {
    const x = text[i];
    if (text[i - 1] === SPACE && x === apostrophe && i + 1 < total3) {
      const x1 = text[i + 1];
      if (x1 === ch('s') || x1 === ch('m')) total--;
      else if (x1 !== ch('t') && x1 !== ch('d') && i + 2 < total3) {
        const x2 = text[i + 2];
        if ((x1 === ch('r') || x1 === ch('v')) && x2 === ch('e')) total--;
      }
    }
    text[total++] = x;
  }
  return text.slice(0, total);
}

/** llama_detokenize(tokens, remove_special = false, unparse_special = special), as bytes. */
export function detokenize(vocab: Vocab, ids: readonly number[], special: boolean): number[] {
  let out: number[] = [];
  let removeSpace = vocab.addSpacePrefix;
  for (const id of ids) {
    const piece = tokenPiece(vocab, id, special);
    const from = removeSpace && piece[0] === SPACE ? 1 : 0;
    removeSpace = false;
    for (let i = from; i < piece.length; i++) out.push(piece[i]);
  }
  if (vocab.cleanSpaces) out = cleanSpaces(out);
  return out;
}
