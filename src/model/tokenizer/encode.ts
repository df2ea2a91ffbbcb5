import { TokenizerError } from '../../errors.ts';
import { bpeTokenize } from './bpe.ts';
import { spmTokenize } from './spm.ts';
import { codepoints } from './unicode.ts';
import { ATTR, type Vocab } from './vocab.ts';

/**
 * llama_tokenize (llama_vocab::impl::tokenize): special tokens are split out of the text first,
 * then each stretch of text between them goes through the model's tokenizer, with BOS and EOS
 * around the whole when `addSpecial` and the vocabulary asks for them.
 */

/** A special token's id, or a stretch [start, end) of the text still to tokenize. */
type Fragment = number | { start: number; end: number };

/** C's isspace in the "C" locale, which llama.cpp's strip attributes use. */
const isSpace = (c: string) => c === ' ' || (c >= '\t' && c <= '\r');

/**
 * tokenizer_st_partition: for each special token, longest first, cut every stretch of text at
 * each of its occurrences, left to right. Control and unknown tokens are found only when
 * `parseSpecial`; user-defined ones always. A token with lstrip/rstrip swallows the whitespace
 * before/after it.
 */
function partition(vocab: Vocab, text: string, parseSpecial: boolean): Fragment[] {
  let fragments: Fragment[] = text.length > 0 ? [{ start: 0, end: text.length }] : [];
  for (const id of vocab.specials) {
    const attr = vocab.attrs[id];
    if (!parseSpecial && attr & (ATTR.control | ATTR.unknown)) continue;
    const token = vocab.tokens[id];
    const next: Fragment[] = [];
    for (const f of fragments) {
      if (typeof f === 'number') {
        next.push(f);
        continue;
      }
      let { start } = f;
      const { end } = f;
      for (
        let m = text.indexOf(token, start);
        m >= 0 && m + token.length <= end;
        m = text.indexOf(token, start)
      ) {
        let leftEnd = m;
        if (attr & ATTR.lstrip) while (leftEnd > start && isSpace(text[leftEnd - 1])) leftEnd--;
        if (leftEnd > start) next.push({ start, end: leftEnd });
        next.push(id);
        start = m + token.length;
        if (attr & ATTR.rstrip) while (start < end && isSpace(text[start])) start++;
      }
      if (start < end) next.push({ start, end });
    }
    fragments = next;
  }
  return fragments;
}

function special(vocab: Vocab, which: 'bos' | 'eos'): number {
  const id = vocab[which];
  // llama.cpp asserts here; a vocabulary that asks for a BOS or EOS it lacks is the file's fault.
  if (id === undefined)
    throw new TokenizerError(`the vocabulary adds ${which.toUpperCase()} but has no ${which} id`);
  return id;
}

/** A lone surrogate, which UTF-8 (what llama.cpp would be given) can only spell as U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function tokenize(vocab: Vocab, raw: string, addSpecial: boolean, parseSpecial: boolean): number[] {
  const text = raw.replace(LONE_SURROGATE, '\uFFFD');
  const out: number[] = [];
  const fragments = partition(vocab, text, parseSpecial);
  if (addSpecial && vocab.addBos) out.push(special(vocab, 'bos'));
  if (vocab.model === 'llama') {
    // SPM writes a space before the text and after every special token, then spaces as ▁.
    let afterSpecial = true;
    for (const f of fragments) {
      if (typeof f === 'number') {
        out.push(f);
        afterSpecial = true;
        continue;
      }
      const raw = (vocab.addSpacePrefix && afterSpecial ? ' ' : '') + text.slice(f.start, f.end);
      spmTokenize(vocab, raw.replaceAll(' ', '\u2581'), out);
      afterSpecial = false;
    }
  } else {
    for (const f of fragments) {
      if (typeof f === 'number') out.push(f);
      else bpeTokenize(vocab, codepoints(text.slice(f.start, f.end)), out);
    }
  }
  if (addSpecial && vocab.addEos) out.push(special(vocab, 'eos'));
  return out;
}
