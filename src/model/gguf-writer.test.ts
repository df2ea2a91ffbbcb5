import { describe, expect, it } from 'vitest';
import { MIN_TOKENIZER_VOCAB, tokenizerMeta } from './gguf-writer.ts';

describe('the tokenizer block', () => {
  it('holds the specials, ▁, the 128 ASCII byte tokens and text tokens, counted by hand', () => {
    const meta = new Map(tokenizerMeta(200));
    const tokens = (meta.get('tokenizer.ggml.tokens') as { strs: string[] }).strs;
    const types = (meta.get('tokenizer.ggml.token_type') as { i32s: number[] }).i32s;
    expect(tokens.slice(0, 5)).toEqual(['<unk>', '<s>', '</s>', '▁', '<0x00>']);
    // The line feed llama.cpp's SPM loader looks up: byte 0x0A, at 4 + 10.
    expect(tokens[14]).toBe('<0x0A>');
    expect(tokens[131]).toBe('<0x7F>');
    expect(tokens[132]).toBe('▁t132');
    // Types: 1 unknown (2), 2 control (3), 128 byte (6), and 200 − 131 = 69 normal (1) with ▁.
    const count = (t: number) => types.filter((x) => x === t).length;
    expect([count(2), count(3), count(6), count(1)]).toEqual([1, 2, 128, 69]);
    // Every token decodes to valid UTF-8 on its own: no byte token of 0x80 or above.
    expect(tokens.some((t) => /^<0x[89A-F][0-9A-F]>$/.test(t))).toBe(false);
    expect(meta.get('tokenizer.ggml.bos_token_id')).toEqual({ u32: 1 });
  });

  it('refuses a vocabulary too small to hold it', () => {
    expect(MIN_TOKENIZER_VOCAB).toBe(132);
    expect(() => tokenizerMeta(131)).toThrow(/at least 132 tokens/);
  });
});
