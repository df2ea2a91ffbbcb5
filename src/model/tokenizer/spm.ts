import { TokenizerError } from '../../errors.ts';
import { Heap } from './heap.ts';
import { codepoints, utf8Bytes } from './unicode.ts';
import type { Vocab } from './vocab.ts';

/**
 * SentencePiece as llama.cpp runs it (llm_tokenizer_spm_session): start from one symbol per
 * character, keep merging the adjacent pair whose concatenation is the token of highest score
 * (the leftmost of equal scores), and spell what is left with its token or, failing that, with
 * byte tokens `<0xXX>`. Symbols are measured in UTF-16 units here and in bytes there; both only
 * grow as symbols merge, so a stale pair is recognised the same way.
 *
 * llama.cpp also keeps a map to re-split a symbol that is not a token; every merged symbol is a
 * token, and an unmerged one is a single character, so with valid UTF-8 (all a string can hold)
 * that path never runs, and it is left out.
 */

interface SpmSymbol {
  start: number;
  len: number;
  prev: number;
  next: number;
}

interface SpmBigram {
  left: number;
  right: number;
  score: number;
  size: number;
}

/** Highest score first; of equal scores, the leftmost. */
const before = (a: SpmBigram, b: SpmBigram) => a.score > b.score || (a.score === b.score && a.left < b.left);

/** Tokenizes `text` (spaces already written as ▁) and appends the ids to `out`. */
export function spmTokenize(vocab: Vocab, text: string, out: number[]): void {
  const symbols: SpmSymbol[] = [];
  let at = 0;
  for (const cp of codepoints(text)) {
    const len = cp > 0xffff ? 2 : 1;
    symbols.push({ start: at, len, prev: symbols.length - 1, next: -1 });
    at += len;
  }
  for (let i = 0; i + 1 < symbols.length; i++) symbols[i].next = i + 1;

  const queue = new Heap<SpmBigram>(before);
  const tryAdd = (left: number, right: number) => {
    if (left < 0 || right < 0) return;
    const start = symbols[left].start;
    const size = symbols[left].len + symbols[right].len;
    const id = vocab.ids.get(text.slice(start, start + size));
    if (id !== undefined) queue.push({ left, right, score: vocab.scores[id], size });
  };
  for (let i = 1; i < symbols.length; i++) tryAdd(i - 1, i);

  for (let bigram = queue.pop(); bigram !== undefined; bigram = queue.pop()) {
    const left = symbols[bigram.left];
    const right = symbols[bigram.right];
    if (left.len === 0 || right.len === 0 || left.len + right.len !== bigram.size) continue;
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    tryAdd(left.prev, bigram.left);
    tryAdd(bigram.left, left.next);
  }

  for (let i = symbols.length > 0 ? 0 : -1; i !== -1; i = symbols[i].next) {
    const piece = text.slice(symbols[i].start, symbols[i].start + symbols[i].len);
    const id = vocab.ids.get(piece);
    if (id !== undefined) out.push(id);
    else for (const b of utf8Bytes(piece)) out.push(byteToken(vocab, b));
  }
}

/** llama_vocab::byte_to_token for SPM: `<0xXX>`, else the byte itself as a one-character token. */
function byteToken(vocab: Vocab, byte: number): number {
  const hex = byte.toString(16).toUpperCase().padStart(2, '0');
  const id =
    vocab.ids.get(`<0x${hex}>`) ?? (byte < 0x80 ? vocab.ids.get(String.fromCharCode(byte)) : undefined);
  if (id === undefined) {
    // llama.cpp throws here too (std::out_of_range from the vocabulary's map).
    throw new TokenizerError(`the vocabulary has no byte token <0x${hex}> for a character it cannot spell`);
  }
  return id;
}
