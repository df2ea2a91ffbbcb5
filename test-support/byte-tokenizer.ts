import type { Tokenizer } from '../src/model/tokenizer/index.ts';

/**
 * A tokenizer the unit tests can reason about by hand: ids 0…255 are the UTF-8 bytes themselves
 * (so a character of several bytes takes several tokens, as byte fallback and byte-level BPE split
 * them), 256 is EOS (an end-of-generation token, rendered as nothing) and 257 BOS, added in front
 * of every encoded text when `addBos`.
 */
export const BYTE_EOS = 256;
export const BYTE_BOS = 257;

export function byteTokenizer(addBos = true): Tokenizer {
  const piece = (id: number) => (id < 256 ? new Uint8Array([id]) : new Uint8Array());
  return {
    model: 'gpt2',
    pre: 'default',
    vocabSize: 258,
    bos: BYTE_BOS,
    eos: BYTE_EOS,
    addBos,
    addEos: false,
    encode: (text, opts = {}) => [
      ...((opts.addSpecial ?? true) && addBos ? [BYTE_BOS] : []),
      ...new TextEncoder().encode(text),
    ],
    decode: (ids) => new TextDecoder().decode(new Uint8Array(ids.flatMap((id) => [...piece(id)]))),
    decoder: () => {
      const d = new TextDecoder();
      return { push: (id) => d.decode(piece(id), { stream: true }), flush: () => d.decode() };
    },
    isEog: (id) => id === BYTE_EOS,
  };
}
