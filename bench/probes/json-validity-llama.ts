/**
 * llama.cpp's greedy JSON completions of the trained model's held-out JSON prompts, scored as the
 * engine scores them (valid when the prompt's object and the completion's first line parse as one):
 * the check beside docs/trained-model.md's "llama.cpp on the same blocks". DIR holds the files
 * `npx tsx train/agreement-files.ts --out DIR` makes (llama-quantize --pure's F32, Q4_0, Q4_K).
 * Prints each file's count and a mark per case (V valid, - not), in the held-out set's order, to
 * set beside `train/gguf_eval.py`'s marks for the same cases.
 *
 *   npx tsx bench/probes/json-validity-llama.ts DIR [N] [TYPES, default F32,Q4_0,Q4_K]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonCompletionValid } from '../../src/measure/task-score.ts';
import { parseTaskSet } from '../../src/model/task-set.ts';
import { llamaGreedy } from '../../test-support/llama-generate/generate.ts';

const [dir, count, types] = process.argv.slice(2);
if (!dir) throw new Error('usage: npx tsx bench/probes/json-validity-llama.ts DIR [N]');
const n = Number(count ?? 60);
const set = parseTaskSet(new Uint8Array(readFileSync('models/trained-4m-eval.json')), 'eval set');
const json = set.find((s) => s.name === 'json');
if (json?.kind !== 'json') throw new Error('the held-out set has no JSON slice');
for (const type of (types ?? 'F32,Q4_0,Q4_K').split(',')) {
  let marks = '';
  for (const c of json.cases.slice(0, n)) {
    // 100 tokens: about the budget the engine and train/eval.py give (the answer's length + 64).
    const out = await llamaGreedy(join(dir, `trained-4m-${type}.gguf`), c.prompt, 100);
    marks += jsonCompletionValid(c.prompt, out.text) ? 'V' : '-';
  }
  console.log(`${type}: ${marks.split('V').length - 1}/${n} valid ${marks}`);
}
