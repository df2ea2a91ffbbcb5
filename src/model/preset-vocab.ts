import { readAsset } from './assets.ts';
import type { PresetName } from './config.ts';
import { type GgufHeader, parseGgufHeader } from './gguf.ts';
import { TOKENIZER_GGUF_OPTIONS, type Tokenizer, tokenizerFromGguf } from './tokenizer/index.ts';

/**
 * The real vocabulary of the family each preset copies the shape of, from llama.cpp's own vocab
 * files (models/ggml-vocab-*.gguf of the release node-llama-cpp bundles; the build copies them into
 * dist/vocab/): text prompts then work on seeded weights too, tokenized as that family's models
 * tokenize them. The weights know nothing, so what they generate is the vocabulary's tokens at
 * random: the page and the CLI say so.
 */

/** llama.cpp's vocab files a preset can take, by the name in ggml-vocab-<name>.gguf. */
export const VOCAB_FILES = ['llama-bpe', 'qwen2', 'gpt-2'] as const;
export type VocabFile = (typeof VOCAB_FILES)[number];

/**
 * Each preset's vocabulary: Llama 3.2's (llama-bpe, 128,256 tokens), Qwen2's for Qwen2.5 and Qwen3
 * (151,936), and GPT-2's byte-level BPE for SmolLM2, whose own 49,152-token vocabulary llama.cpp
 * ships no file of: GPT-2's first 49,151 tokens and merges, with its end-of-text token as the last.
 */
export const PRESET_VOCABS: Partial<Record<PresetName, VocabFile>> = {
  'llama-3.2-1b': 'llama-bpe',
  'qwen2.5-0.5b': 'qwen2',
  'qwen3-0.6b': 'qwen2',
  'smollm2-135m': 'gpt-2',
  'smollm2-360m': 'gpt-2',
};

/** The file name of a vocabulary, as llama.cpp's models/ folder and dist/vocab/ hold it. */
export function vocabFileName(v: VocabFile): string {
  return `ggml-vocab-${v}.gguf`;
}

/**
 * `h`'s vocabulary cut to its first `size` tokens: BPE's tokens come in merge order, so dropping
 * the last ones and every merge that builds or uses them leaves a smaller BPE that spells every text
 * (down to bytes) as the full one would with those merges; the end-of-text token takes the last id.
 */
function truncated(h: GgufHeader, size: number): GgufHeader {
  const list = (key: string) => {
    const v = h.metadata.get(key);
    return v && typeof v === 'object' && 'array' in v && v.array ? v.array : undefined;
  };
  const tokens = list('tokenizer.ggml.tokens')?.map(String) ?? [];
  const types = list('tokenizer.ggml.token_type') ?? [];
  const eos = h.metadata.get('tokenizer.ggml.eos_token_id');
  const eosText = typeof eos === 'number' ? tokens[eos] : undefined;
  const keptTokens = [...tokens.slice(0, size - 1), eosText ?? tokens[size - 1]];
  const kept = new Set(keptTokens);
  const merges = (list('tokenizer.ggml.merges') ?? []).map(String).filter((m) => {
    const [a, b] = m.split(' ');
    return kept.has(a) && kept.has(b) && kept.has(a + b);
  });
  const metadata = new Map(h.metadata);
  metadata.set('tokenizer.ggml.tokens', { array: keptTokens, length: size });
  metadata.set('tokenizer.ggml.token_type', {
    array: [...types.slice(0, size - 1), typeof eos === 'number' ? types[eos] : types[size - 1]],
    length: size,
  });
  metadata.set('tokenizer.ggml.merges', { array: merges, length: merges.length });
  for (const key of ['tokenizer.ggml.eos_token_id', 'tokenizer.ggml.bos_token_id']) {
    if (typeof h.metadata.get(key) === 'number' && eosText !== undefined) metadata.set(key, size - 1);
  }
  return { ...h, metadata };
}

/**
 * The tokenizer of `preset` at `vocabSize` tokens, from its family's vocab file, or why it has none
 * (no file for the preset, or the runtime has none: `npm run dev`, the kit).
 */
export async function presetTokenizer(
  preset: string,
  vocabSize: number,
): Promise<{ tokenizer?: Tokenizer; warning?: string }> {
  const file = PRESET_VOCABS[preset as PresetName];
  if (!file) return {};
  const bytes = await readAsset(`vocab/${vocabFileName(file)}`);
  if (!bytes)
    return {
      warning: `The ${file} vocabulary (${vocabFileName(file)}) is not here, so text prompts are not available for ${preset}; build the app (npm run build) to copy it.`,
    };
  const header = parseGgufHeader(bytes, vocabFileName(file), TOKENIZER_GGUF_OPTIONS);
  const tokens = header.metadata.get('tokenizer.ggml.tokens');
  const count = tokens && typeof tokens === 'object' && 'length' in tokens ? tokens.length : 0;
  if (count < vocabSize)
    return { warning: `${vocabFileName(file)} has ${count} tokens, fewer than ${preset}'s ${vocabSize}` };
  return {
    tokenizer: tokenizerFromGguf(
      count > vocabSize ? truncated(header, vocabSize) : header,
      vocabFileName(file),
    ),
  };
}
