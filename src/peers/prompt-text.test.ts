import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { llamaPath } from '../../test-support/llama-bundle.ts';
import { parseGgufHeader } from '../model/gguf.ts';
import { encodeGgufHeader, type MetaEntry, tokenizerMeta, VOCAB_IDS } from '../model/gguf-writer.ts';
import { TOKENIZER_GGUF_OPTIONS, type Tokenizer, tokenizerFromGguf } from '../model/tokenizer/index.ts';
import { PromptSpeller, PromptSpellingError } from './prompt-text.ts';

/** A tokenizer from a bare tokenizer block, as a file carrying it would give. */
function fromMeta(meta: MetaEntry[]): Tokenizer {
  const bytes = encodeGgufHeader({ version: 3, meta, tensors: [] });
  const tok = tokenizerFromGguf(parseGgufHeader(bytes, 'block', TOKENIZER_GGUF_OPTIONS), 'block');
  if (!tok) throw new Error('no tokenizer');
  return tok;
}

/** One of llama.cpp's vocab files (the release bundle's models/). */
function vocab(name: string): Tokenizer {
  const file = llamaPath(`models/ggml-vocab-${name}.gguf`);
  const tok = tokenizerFromGguf(
    parseGgufHeader(new Uint8Array(readFileSync(file)), file, TOKENIZER_GGUF_OPTIONS),
    file,
  );
  if (!tok) throw new Error(`${name} has no tokenizer`);
  return tok;
}

/** As llama.cpp's server tokenizes a completion's prompt. */
const SERVER = { addSpecial: true, parseSpecial: true };

describe('prompts spelled with the file’s tokenizer', () => {
  it('the GGUF writer’s vocabulary: "▁" then one byte token per ASCII letter, as the server reads the text', () => {
    const tok = fromMeta(tokenizerMeta(509));
    const s = new PromptSpeller(tok);
    // SentencePiece puts "▁" before the first letter: no text is a one-token prompt.
    expect(s.shortest).toBe(2);
    const p = s.spell(10);
    expect(p.text).toMatch(/^[A-Za-z]{9}$/);
    expect(p.ids).toHaveLength(10);
    expect(p.ids[0]).toBe(VOCAB_IDS.space);
    // Byte token of letter c is VOCAB_IDS.firstByte + its code.
    expect(p.ids.slice(1)).toEqual(Array.from(p.text, (c) => VOCAB_IDS.firstByte + c.charCodeAt(0)));
    expect(tok.encode(p.text, SERVER)).toEqual(p.ids);
    // Another salt, another prompt of the same length.
    expect(s.spell(10, 1).ids).not.toEqual(p.ids);
    expect(() => s.spell(1)).toThrow(PromptSpellingError);
    expect(() => s.spell(1)).toThrow(/no text is a 1-token prompt .* the shortest is 2 tokens/);
  });

  it('every prefix from the shortest up, each read back as that prefix', () => {
    const tok = fromMeta(tokenizerMeta(509));
    const s = new PromptSpeller(tok);
    const p = s.spell(33, 2);
    const texts = s.prefixes(p);
    // 33 tokens, prefixes of 2 to 33: 32 texts.
    expect(texts).toHaveLength(32);
    for (const [k, text] of texts.entries()) expect(tok.encode(text, SERVER)).toEqual(p.ids.slice(0, k + 2));
    expect(texts[31]).toBe(p.text);
  });

  it('real vocabularies: words of their own tokens, BOS first where the vocabulary adds it', {
    timeout: 60_000,
  }, () => {
    for (const [name, bos, shortest] of [
      ['gpt-2', undefined, 1],
      ['qwen2', undefined, 1],
      ['llama-bpe', 128000, 2],
      ['llama-spm', 1, 2],
    ] as const) {
      const tok = vocab(name);
      const s = new PromptSpeller(tok);
      expect([name, s.shortest]).toEqual([name, shortest]);
      for (const n of [shortest, 16, 300]) {
        const p = s.spell(n, 1);
        expect(p.ids).toHaveLength(n);
        expect(tok.encode(p.text, SERVER)).toEqual(p.ids);
        if (bos !== undefined) expect(p.ids[0]).toBe(bos);
      }
      // Words after the first one, each a space and ASCII letters, each one token.
      const p = s.spell(40);
      expect(p.text).toMatch(/^[A-Za-z]+( [A-Za-z]+)+$/);
      expect(p.text.split(' ')).toHaveLength(40 - shortest + 1);
      const texts = s.prefixes(p);
      expect(texts).toHaveLength(40 - shortest + 1);
      for (const [k, text] of texts.entries())
        expect(tok.encode(text, SERVER)).toEqual(p.ids.slice(0, shortest + k));
    }
  });

  it('a prompt cut from a text: its first tokens, and each prefix’s own text', { timeout: 60_000 }, () => {
    const gpt2 = new PromptSpeller(vocab('gpt-2'));
    // GPT-2 adds no BOS: "Hello", " world" and "!" are one token each (hand-read from its vocabulary).
    const c = gpt2.cut('Hello world! More text follows.', 3);
    expect(c.from).toBe(0);
    expect(c.ids).toHaveLength(3);
    expect(c.texts).toEqual(['Hello', 'Hello world', 'Hello world!']);
    // Llama 3 adds BOS: the first prefix a text gives is BOS and one token.
    const bpe = vocab('llama-bpe');
    const l = new PromptSpeller(bpe).cut('def f(x):\n    return x + 1\n', 100);
    expect(l.from).toBe(1);
    expect(l.ids[0]).toBe(128000);
    expect(l.texts).toHaveLength(l.ids.length - 1);
    for (const [k, text] of (l.texts ?? []).entries())
      expect(bpe.encode(text, SERVER)).toEqual(l.ids.slice(0, k + 2));
    // A character GPT-2 spells in two byte tokens: the prefix that ends between them has no text.
    const split = gpt2.cut('a 𝔘 b', 10);
    expect(split.texts).toBeUndefined();
    expect(split.noText).toMatch(/first \d+ tokens have no text of their own/);
  });

  it('refuses a vocabulary with no word that reads back as itself', () => {
    // The writer's block with every letter's byte token renamed: no token is ASCII letters.
    const meta = tokenizerMeta(509).map(
      ([k, v]): MetaEntry =>
        k === 'tokenizer.ggml.tokens' && 'strs' in v
          ? [
              k,
              {
                strs: v.strs.map((t) =>
                  /^<0x(4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A])>$/.test(t) ? `x${t}` : t,
                ),
              },
            ]
          : [k, v],
    );
    expect(() => new PromptSpeller(fromMeta(meta))).toThrow(
      /no token of ASCII letters that its tokenizer reads back as itself/,
    );
  });
});
