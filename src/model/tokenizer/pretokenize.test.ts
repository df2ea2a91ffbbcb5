import { describe, expect, it } from 'vitest';
import { PRE_TOKENIZERS } from './pre.ts';
import { splitWords } from './pretokenize.ts';
import { codepoints } from './unicode.ts';

/** The words of `text` under a named pre-tokenizer. */
function words(pre: string, text: string): string[] {
  const regexes = PRE_TOKENIZERS.get(pre)?.regexes;
  if (!regexes) throw new Error(`no pre-tokenizer ${pre}`);
  const cpts = codepoints(text);
  const out: string[] = [];
  let at = 0;
  for (const len of splitWords(cpts, regexes)) {
    out.push(String.fromCodePoint(...cpts.slice(at, at + len)));
    at += len;
  }
  return out;
}

describe('the pre-tokenizers', () => {
  it("split as GPT-2's regex: contractions, letters, digits and others each with one space before", () => {
    expect(words('gpt-2', "Hello world's 12345 ok!!  \n x")).toEqual([
      'Hello',
      ' world',
      "'s",
      ' 12345',
      ' ok',
      '!!',
      // \s+(?!\S): the whitespace run but its last space, which goes with the word after it.
      '  \n',
      ' x',
    ]);
  });

  it('group digits by three (Llama 3), one by one (Qwen2), and keep marks with letters (Qwen3.5)', () => {
    expect(words('llama-bpe', '1234567 a')).toEqual(['123', '456', '7', ' a']);
    expect(words('qwen2', '123')).toEqual(['1', '2', '3']);
    expect(words('llama-bpe', "I'M HERE\r\n\n  x")).toEqual(['I', "'M", ' HERE', '\r\n\n', ' ', ' x']);
    // U+0301 is a mark, not a letter: Qwen2 cuts "é" spelled e + ◌́ in two (the mark is the
    // optional non-letter before the next letters), Qwen3.5 keeps the word whole.
    expect(words('qwen2', 'cafe\u0301s')).toEqual(['cafe', '\u0301s']);
    expect(words('qwen35', 'cafe\u0301s')).toEqual(['cafe\u0301s']);
  });

  it('run the regexes llama.cpp runs through std::regex: on categories (StarCoder) and on code points (DeepSeek)', () => {
    // "\p{N}" first: every digit alone, whatever its script.
    expect(words('starcoder', 'x12 ٣٤')).toEqual(['x', '1', '2', ' ', '٣', '٤']);
    // A letter above U+FFFF in DeepSeek's own letter class, counted as one code point.
    expect(words('deepseek-llm', 'a 𐐀𐐁 b')).toEqual(['a', ' 𐐀𐐁', ' b']);
    expect(words('deepseek-llm', '中文 text\n')).toEqual(['中文', ' text', '\n']);
    // Default: punctuation runs first, then GPT-2's regex, then digits by three.
    expect(words('default', 'a...b 1234')).toEqual(['a', '...', 'b', ' ', '123', '4']);
  });

  it('all compile and cut a mixed text into words that spell it again', () => {
    const text = "Hi, it's 12345 x\u0301 ٣ 𐐀 中文 \u3000 \r\n\t!! ";
    for (const [name, pre] of PRE_TOKENIZERS) {
      const lengths = splitWords(codepoints(text), pre.regexes);
      expect(
        lengths.every((n) => n > 0),
        name,
      ).toBe(true);
      expect(
        lengths.reduce((a, b) => a + b, 0),
        name,
      ).toBe(codepoints(text).length);
    }
  });

  it('give nothing for nothing', () => {
    expect(splitWords([], PRE_TOKENIZERS.get('gpt-2')?.regexes ?? [])).toEqual([]);
  });
});
