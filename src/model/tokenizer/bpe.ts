import { InternalError } from '../../errors.ts';
import { Heap } from './heap.ts';
import { splitWords } from './pretokenize.ts';
import { BYTE_TO_CHAR, pushUtf8 } from './unicode.ts';
import { mergeKey, type Vocab } from './vocab.ts';

/**
 * Byte-level BPE as llama.cpp runs it (llm_tokenizer_bpe_session): the pre-tokenizer cuts the text
 * into words, each word's UTF-8 bytes are spelled in GPT-2's byte characters, and within a word the
 * adjacent pair of lowest merge rank (the leftmost of equal ranks) is merged until no pair has a
 * rank. Each GPT-2 byte character is one UTF-16 unit, so a symbol is a range of units; it carries
 * its token id, since merges are looked up by the ids of the pair (llama.cpp looks them up by text,
 * to the same effect: every merge names two tokens).
 */

interface BpeSymbol {
  start: number;
  len: number;
  prev: number;
  next: number;
  /** The token the symbol spells, if it is one; merges name only tokens, so no other merges. */
  id: number | undefined;
}

interface BpeBigram {
  left: number;
  right: number;
  rank: number;
  size: number;
}

/** Lowest rank first; of equal ranks, the leftmost. */
const before = (a: BpeBigram, b: BpeBigram) => a.rank < b.rank || (a.rank === b.rank && a.left < b.left);

/** Tokenizes one raw fragment of text and appends the ids to `out`. */
export function bpeTokenize(vocab: Vocab, cpts: readonly number[], out: number[]): void {
  const pre = vocab.preTokenizer;
  if (!pre) throw new InternalError('bpeTokenize was given a vocabulary without a pre-tokenizer');
  let start = 0;
  for (const length of splitWords(cpts, pre.regexes)) {
    const bytes: number[] = [];
    for (let i = start; i < start + length; i++) pushUtf8(cpts[i], bytes);
    start += length;
    let word = '';
    for (const b of bytes) word += BYTE_TO_CHAR[b];
    const whole = pre.ignoreMerges ? vocab.ids.get(word) : undefined;
    if (whole !== undefined) out.push(whole);
    else mergeWord(vocab, word, out);
  }
}

function mergeWord(vocab: Vocab, word: string, out: number[]): void {
  const symbols: BpeSymbol[] = [];
  for (let i = 0; i < word.length; i++) {
    symbols.push({
      start: i,
      len: 1,
      prev: i - 1,
      next: i + 1 < word.length ? i + 1 : -1,
      id: vocab.ids.get(word[i]),
    });
  }
  const queue = new Heap<BpeBigram>(before);
  const tryAdd = (left: number, right: number) => {
    if (left < 0 || right < 0) return;
    const l = symbols[left];
    const r = symbols[right];
    if (l.id === undefined || r.id === undefined) return;
    const rank = vocab.mergeRanks.get(mergeKey(l.id, r.id));
    if (rank !== undefined) queue.push({ left, right, rank, size: l.len + r.len });
  };
  for (let i = 1; i < symbols.length; i++) tryAdd(i - 1, i);

  for (let bigram = queue.pop(); bigram !== undefined; bigram = queue.pop()) {
    const left = symbols[bigram.left];
    const right = symbols[bigram.right];
    // llama.cpp compares the pair's text with the bigram's; symbols only grow, so equal lengths
    // mean the same text.
    if (left.len === 0 || right.len === 0 || left.len + right.len !== bigram.size) continue;
    left.len += right.len;
    left.id = vocab.ids.get(word.slice(left.start, left.start + left.len));
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    tryAdd(left.prev, bigram.left);
    tryAdd(bigram.left, left.next);
  }

  for (const s of symbols) {
    if (s.len === 0) continue;
    if (s.id !== undefined) {
      out.push(s.id);
      continue;
    }
    const piece = word.slice(s.start, s.start + s.len);
    // llama.cpp then looks up each byte of the piece as a one-byte token: only an ASCII byte can be
    // one (a lone byte above 0x7F is not UTF-8), and the others are dropped, as there.
    for (const ch of piece) {
      const byteId = ch.charCodeAt(0) < 0x80 ? vocab.ids.get(ch) : undefined;
      if (byteId !== undefined) out.push(byteId);
    }
  }
}
