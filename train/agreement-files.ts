/**
 * What `--peer llama.cpp` compares the trained model on (docs/trained-model.md, "Agreement with
 * llama.cpp"): the shipped F16 file made into F32, Q8_0, Q4_0 and Q4_K files by llama.cpp's own
 * quantizer (llama_model_quantize, as `llama-quantize --pure` runs it: every 2-D tensor in the
 * type), and three held-out texts from models/trained-4m-eval.json: prose, code, and JSON objects
 * one per line (the model's best task).
 *
 *   npx tsx train/agreement-files.ts --out DIR
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { llamaQuantize } from '../test-support/llama-quantize/quantize.ts';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
if (!values.out) throw new Error('usage: npx tsx train/agreement-files.ts --out DIR');
const dir = values.out;
mkdirSync(dir, { recursive: true });

const source = join(import.meta.dirname, '..', 'models', 'trained-4m.gguf');
llamaQuantize(source, join(dir, 'trained-4m-F32.gguf'), 'F32');
for (const [ftype, name] of [
  ['Q8_0', 'Q8_0'],
  ['Q4_0', 'Q4_0'],
  ['Q4_K_S', 'Q4_K'],
] as const)
  llamaQuantize(source, join(dir, `trained-4m-${name}.gguf`), ftype, true);

interface Slice {
  name: string;
  texts?: { text: string }[];
  cases?: { prompt: string; answer: string }[];
}
const held = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'models', 'trained-4m-eval.json'), 'utf8'),
) as { slices: Slice[] };
const slice = (name: string) => {
  const s = held.slices.find((x) => x.name === name);
  if (!s) throw new Error(`the held-out set has no slice ${name}`);
  return s;
};
// 4,000 characters hold well over 256 tokens of any of them: the slice's first texts, in order.
const text = (name: string) =>
  (slice(name).texts ?? [])
    .map((t) => t.text)
    .join('\n\n')
    .slice(0, 4000);
writeFileSync(join(dir, 'prose.txt'), text('prose'));
writeFileSync(join(dir, 'code.txt'), text('code'));
writeFileSync(
  join(dir, 'json.txt'),
  (slice('json').cases ?? [])
    .slice(0, 40)
    .map((c) => `${c.prompt}${c.answer}\n`)
    .join(''),
);
console.log(`wrote ${dir}: trained-4m-{F32,Q8_0,Q4_0,Q4_K}.gguf, prose.txt, code.txt, json.txt`);
