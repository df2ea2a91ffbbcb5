import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelConfig } from '../src/model/config.ts';
import { parseGgufHeader } from '../src/model/gguf.ts';
import { tokenizerBlockOf, writeGguf } from '../src/model/gguf-writer.ts';
import { TOKENIZER_GGUF_OPTIONS, tokenizerFromGguf } from '../src/model/tokenizer/index.ts';
import { randomWeights } from '../src/model/weights.ts';
import { llamaPath } from './llama-bundle.ts';
import { LLAMA_FTYPES, type LlamaFtype, llamaQuantize } from './llama-quantize/quantize.ts';

/**
 * A Qwen3-shaped seeded model with a real vocabulary, as the GGUF files people have are: written as
 * F32 by the project's writer with the tokenizer block of one of llama.cpp's vocab files
 * (`models/ggml-vocab-<name>.gguf` in the release bundle), then quantized by llama.cpp's own
 * quantizer. The peers' tests and the agreement measurements of docs/peers.md run on these.
 *
 *   npx tsx test-support/vocab-fixture.ts DIR VOCAB FTYPE[,FTYPE…]
 *
 * writes DIR/qwen3-<vocab>-F32.gguf and each DIR/qwen3-<vocab>-<ftype>[-pure].gguf (every type
 * "pure", each 2-D tensor in it, except the mixes Q4_K_M, Q5_K_M, Q3_K_M), skipping those there.
 */

/** The seed of the weights: any fixed one; the measurements in docs/peers.md used this one. */
export const VOCAB_FIXTURE_SEED = 7;

/** Qwen3's shape at a size the tests afford: K-quants need inner widths that are multiples of 256. */
export function vocabFixtureConfig(vocabSize: number): ModelConfig {
  return {
    arch: 'qwen3',
    vocabSize,
    hiddenSize: 256,
    intermediateSize: 512,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 64,
    ropeTheta: 1e6,
    rmsNormEps: 1e-6,
    tieWordEmbeddings: true,
    maxSeqLen: 512,
  };
}

/** The mixes llama-quantize makes from several types; every other file type is written pure. */
const MIXES: readonly LlamaFtype[] = ['Q3_K_M', 'Q4_K_M', 'Q5_K_M'];

/** The file's path for a vocabulary and a type. */
export function vocabFixturePath(dir: string, vocab: string, ftype: LlamaFtype | 'F32'): string {
  const pure = ftype !== 'F32' && !MIXES.includes(ftype);
  return join(dir, `qwen3-${vocab}-${ftype}${pure ? '-pure' : ''}.gguf`);
}

/** Writes (or finds) the F32 file of `vocab` and each of `ftypes` quantized from it; returns their paths. */
export function makeVocabFixtures(dir: string, vocab: string, ftypes: readonly LlamaFtype[]): string[] {
  const f32 = vocabFixturePath(dir, vocab, 'F32');
  if (!existsSync(f32)) {
    const file = llamaPath(`models/ggml-vocab-${vocab}.gguf`);
    const header = parseGgufHeader(new Uint8Array(readFileSync(file)), file, TOKENIZER_GGUF_OPTIONS);
    const vocabSize = tokenizerFromGguf(header, file)?.vocabSize;
    if (!vocabSize) throw new Error(`${file} has no tokenizer`);
    const bytes = writeGguf(randomWeights(vocabFixtureConfig(vocabSize), VOCAB_FIXTURE_SEED), {
      type: 'F32',
      name: `qwen3 ${vocab} fixture`,
      tokenizer: tokenizerBlockOf(header),
    });
    // Written aside and renamed: a test worker never reads half a file another one is writing.
    writeFileSync(`${f32}.part`, bytes);
    renameSync(`${f32}.part`, f32);
  }
  return ftypes.map((ftype) => {
    const out = vocabFixturePath(dir, vocab, ftype);
    if (!existsSync(out)) {
      llamaQuantize(f32, `${out}.part`, ftype, !MIXES.includes(ftype));
      renameSync(`${out}.part`, out);
    }
    return out;
  });
}

if (process.argv[1] === import.meta.filename) {
  const [dir, vocab, types] = process.argv.slice(2);
  const ftypes = (types ?? '').split(',').filter(Boolean);
  const unknown = ftypes.filter((t) => !(t in LLAMA_FTYPES));
  if (!dir || !vocab || unknown.length > 0) {
    console.error(
      `usage: npx tsx test-support/vocab-fixture.ts DIR VOCAB FTYPE[,FTYPE…] (types: ${Object.keys(LLAMA_FTYPES).join(', ')})`,
    );
    process.exit(2);
  }
  for (const path of makeVocabFixtures(dir, vocab, ftypes as LlamaFtype[])) console.log(path);
}
