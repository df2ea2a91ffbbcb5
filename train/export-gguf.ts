/**
 * Writes a model trained by train/train.py as an F16 GGUF that llama.cpp and this engine both load:
 * the Hugging Face folder it saved (config.json, model.safetensors) read by the project's loader,
 * written by the project's GGUF writer (q/k rows permuted for llama.cpp's RoPE, as
 * convert_hf_to_gguf.py does), with the tokenizer of train/tokenizer.py as llama.cpp's `llama`
 * (SentencePiece) block.
 *
 *   npx tsx train/export-gguf.ts --model train/data/model --vocab train/data/vocab.json --out F.gguf [--type F16] [--context N]
 *
 * --context sets the context length the file declares (default: the length it was trained at). The
 * drafter is trained at 256 and declares the target's 1,152, so it can draft beside it on a long
 * prompt: past 256 its RoPE positions are ones it never saw, and its drafts are only guesses the
 * target checks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type MetaEntry, writeGguf } from '../src/model/gguf-writer.ts';
import { loadHfModel } from '../src/model/hf.ts';

interface Vocab {
  model: 'llama';
  tokens: string[];
  scores: number[];
  token_type: number[];
  bos_token_id: number;
  eos_token_id: number;
  unknown_token_id: number;
}

/** The tokenizer keys llama.cpp's SentencePiece vocabulary reads (llama-vocab.cpp). */
export function sentencePieceBlock(v: Vocab): MetaEntry[] {
  if (v.tokens.length !== v.scores.length || v.tokens.length !== v.token_type.length)
    throw new Error('vocab.json: tokens, scores and token_type differ in length');
  return [
    ['tokenizer.ggml.model', { str: 'llama' }],
    ['tokenizer.ggml.pre', { str: 'default' }],
    ['tokenizer.ggml.tokens', { strs: v.tokens }],
    ['tokenizer.ggml.scores', { f32s: v.scores }],
    ['tokenizer.ggml.token_type', { i32s: v.token_type }],
    ['tokenizer.ggml.bos_token_id', { u32: v.bos_token_id }],
    ['tokenizer.ggml.eos_token_id', { u32: v.eos_token_id }],
    ['tokenizer.ggml.unknown_token_id', { u32: v.unknown_token_id }],
    ['tokenizer.ggml.add_bos_token', { bool: true }],
    ['tokenizer.ggml.add_eos_token', { bool: false }],
    ['tokenizer.ggml.add_space_prefix', { bool: true }],
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      vocab: { type: 'string' },
      out: { type: 'string' },
      type: { type: 'string', default: 'F16' },
      context: { type: 'string' },
    },
  });
  if (!values.model || !values.vocab || !values.out) {
    console.error(
      'usage: npx tsx train/export-gguf.ts --model DIR --vocab vocab.json --out F.gguf [--type F16|F32|Q8_0|Q4_0] [--context N]',
    );
    process.exit(2);
  }
  const types = ['F32', 'F16', 'Q8_0', 'Q4_0'] as const;
  const type = types.find((t) => t === values.type?.toUpperCase());
  if (!type) {
    console.error(
      `--type: one of ${types.join(', ')} (Q8_0 and Q4_0 for the agreement checks against llama.cpp)`,
    );
    process.exit(2);
  }
  const { weights, warnings } = loadHfModel(
    readFileSync(`${values.model}/config.json`, 'utf8'),
    new Uint8Array(readFileSync(`${values.model}/model.safetensors`)),
    values.model,
  );
  for (const w of warnings) console.error(`warning: ${w}`);
  if (values.context) weights.config.maxSeqLen = Number(values.context);
  const vocab = JSON.parse(readFileSync(values.vocab, 'utf8')) as Vocab;
  const bytes = writeGguf(weights, { type, tokenizer: sentencePieceBlock(vocab) });
  writeFileSync(values.out, bytes);
  console.error(`${values.out}: ${(bytes.length / 1e6).toFixed(2)} MB, ${type}`);
}
