import type { GgufHeader } from '../gguf.ts';
import { detokenize, tokenPiece } from './decode.ts';
import { tokenize } from './encode.ts';
import { readVocab } from './vocab.ts';

/**
 * The tokenizer a GGUF file carries, tokenizing and detokenizing exactly as llama.cpp does with
 * the same file: SentencePiece (`llama`) with byte fallback, and byte-level BPE (`gpt2`) with the
 * pre-tokenizer `tokenizer.ggml.pre` names. llama.cpp's own conformance vectors check it
 * (tokenizer.conformance.test.ts; docs/tokenizer.md).
 *
 * Read the header with TOKENIZER_GGUF_OPTIONS, which keeps the vocabulary's arrays whole and
 * refuses one that claims more than 2^24 elements before reading it.
 */

export { TOKENIZER_GGUF_OPTIONS } from './vocab.ts';

/** How detokenizing treats control and unknown tokens (`<|im_end|>`, `</s>`): by default as nothing. */
export interface DecodeOptions {
  /** Render them as their text, as llama.cpp's `special = true` does. */
  special?: boolean;
}

export interface Tokenizer {
  readonly model: 'llama' | 'gpt2';
  /** tokenizer.ggml.pre, or 'default'. */
  readonly pre: string;
  readonly vocabSize: number;
  readonly bos: number | undefined;
  readonly eos: number | undefined;
  readonly addBos: boolean;
  readonly addEos: boolean;
  /**
   * As llama_tokenize(text, add_special, parse_special). `addSpecial` (default true) adds BOS and
   * EOS where the vocabulary asks for them; `parseSpecial` (default false, as in llama.cpp's
   * common_tokenize) turns the text of a control token such as `<|im_start|>` into that token
   * instead of spelling it out. User-defined tokens are always found.
   */
  encode(text: string, opts?: { addSpecial?: boolean; parseSpecial?: boolean }): number[];
  /**
   * As llama_detokenize(ids, remove_special = false, unparse_special): the whole text, with
   * llama.cpp's clean-ups (SPM drops the first token's leading space; most BPE vocabularies drop a
   * space before `?!.,`). Bytes that are not UTF-8 become U+FFFD.
   */
  decode(ids: readonly number[], opts?: DecodeOptions): string;
  /**
   * For streaming: push(id) returns the text that token completes, never half a character (a
   * character spelled by several byte tokens comes out with its last byte), flush() whatever is
   * left. Each token is llama.cpp's token_to_piece, as its server streams them: no clean-ups, so
   * a continuation keeps its leading space.
   */
  decoder(opts?: DecodeOptions): { push(id: number): string; flush(): string };
  /** End of generation: EOS, EOT and the other EOG ids llama.cpp counts. */
  isEog(id: number): boolean;
}

/** The file's tokenizer, or undefined when it has no tokenizer.ggml.model (or llama.cpp's "none"). */
export function tokenizerFromGguf(header: GgufHeader, source: string): Tokenizer | undefined {
  const vocab = readVocab(header, source);
  if (!vocab) return undefined;
  // ignoreBOM: a text that starts with U+FEFF keeps it.
  const utf8 = () => new TextDecoder('utf-8', { ignoreBOM: true });
  return {
    model: vocab.model,
    pre: vocab.pre,
    vocabSize: vocab.tokens.length,
    bos: vocab.bos,
    eos: vocab.eos,
    addBos: vocab.addBos,
    addEos: vocab.addEos,
    encode: (text, opts = {}) => tokenize(vocab, text, opts.addSpecial ?? true, opts.parseSpecial ?? false),
    decode: (ids, opts = {}) => utf8().decode(new Uint8Array(detokenize(vocab, ids, opts.special ?? false))),
    decoder: (opts = {}) => {
      const stream = utf8();
      return {
        push: (id) =>
          stream.decode(new Uint8Array(tokenPiece(vocab, id, opts.special ?? false)), { stream: true }),
        flush: () => stream.decode(),
      };
    },
    isEog: (id) => vocab.eog.has(id),
  };
}
