/**
 * SmolLM2-135M's shape as GGUF files the way people's are made (docs/gguf.md, "Speed"): the seeded
 * preset (seed 0) written as F32 by the project's writer, with its tokenizer, then quantized by
 * llama.cpp's own quantizer into each file type named.
 *
 *   npx tsx bench/probes/smol-files.ts DIR Q4_0,Q4_K_M
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRESETS } from '../../src/model/config.ts';
import { writeGguf } from '../../src/model/gguf-writer.ts';
import { randomWeights } from '../../src/model/weights.ts';
import { LLAMA_FTYPES, type LlamaFtype, llamaQuantize } from '../../test-support/llama-quantize/quantize.ts';

const [dir, types = 'Q4_0,Q4_K_M'] = process.argv.slice(2);
if (!dir) throw new Error('usage: npx tsx bench/probes/smol-files.ts DIR [FTYPE,FTYPE]');
mkdirSync(dir, { recursive: true });
const f32 = join(dir, 'F32.gguf');
writeFileSync(
  f32,
  writeGguf(randomWeights(PRESETS['smollm2-135m'].config, 0), {
    type: 'F32',
    tokenizer: true,
    name: 'smollm2-135m',
  }),
);
for (const t of types.split(',')) {
  if (!(t in LLAMA_FTYPES)) throw new Error(`${t} is not one of ${Object.keys(LLAMA_FTYPES).join(', ')}`);
  llamaQuantize(f32, join(dir, `${t}.gguf`), t as LlamaFtype);
  console.log(`wrote ${join(dir, `${t}.gguf`)}`);
}
