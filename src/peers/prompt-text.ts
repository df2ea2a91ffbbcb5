import { VOCAB_IDS } from '../model/gguf-writer.ts';

/**
 * Prompts as text, for a peer that takes no token ids (wllama). The GGUF writer's vocabulary has
 * no multi-character piece a tokenizer could reach from plain letters (its words are "▁t<id>",
 * unreachable by SentencePiece's merges), so llama.cpp spells lowercase ASCII letters one byte
 * token each, after the "▁" it puts before the text: n letters are n + 1 tokens, with known ids.
 */

/** Text that tokenizes to `tokens` tokens: "▁" and tokens − 1 letters (a deterministic stride through a–z). */
export function promptText(tokens: number): string {
  return Array.from({ length: Math.max(0, tokens - 1) }, (_, i) =>
    String.fromCharCode(97 + ((i * 7 + 3) % 26)),
  ).join('');
}

/** The ids the writer's vocabulary gives `text` (lowercase letters only): "▁", then one byte token per letter. */
export function writerTokenIds(text: string): number[] {
  if (!/^[a-z]*$/.test(text)) throw new Error(`writerTokenIds: "${text}" is not lowercase ASCII letters`);
  return [VOCAB_IDS.space, ...Array.from(text, (c) => VOCAB_IDS.firstByte + c.charCodeAt(0))];
}
