import { describe, expect, it } from 'vitest';
import { tokenizerMeta } from '../model/gguf-writer.ts';
import { promptText, writerTokenIds } from './prompt-text.ts';

describe('prompts as text', () => {
  it('gives n − 1 lowercase letters for n tokens, and no letters for one token', () => {
    expect(promptText(1)).toBe('');
    expect(promptText(33)).toMatch(/^[a-z]{32}$/);
  });

  it('maps each letter to the byte token the GGUF writer’s vocabulary names for it, after "▁"', () => {
    const meta = new Map(tokenizerMeta(509));
    const tokens = (meta.get('tokenizer.ggml.tokens') as { strs: string[] }).strs;
    const ids = writerTokenIds('az');
    expect(ids.map((id) => tokens[id])).toEqual(['▁', '<0x61>', '<0x7A>']);
    expect(() => writerTokenIds('a b')).toThrow(/lowercase/);
  });
});
