/**
 * This engine's greedy JSON completion (`generate --model FILE`, natively) beside llama.cpp's on
 * the same GGUF file, for the first N held-out JSON prompts: V or - for each one's validity
 * (llama.cpp first), and whether their first lines are the same text. The check beside
 * docs/trained-model.md's "llama.cpp on the same blocks".
 *
 *   npx tsx bench/probes/json-side-by-side.ts FILE.gguf [N]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { jsonCompletionValid } from '../../src/measure/task-score.ts';
import { parseTaskSet } from '../../src/model/task-set.ts';
import { llamaGreedy } from '../../test-support/llama-generate/generate.ts';

const [file, count] = process.argv.slice(2);
if (!file) throw new Error('usage: npx tsx bench/probes/json-side-by-side.ts FILE.gguf [N]');
const set = parseTaskSet(new Uint8Array(readFileSync('models/trained-4m-eval.json')), 'eval set');
const json = set.find((s) => s.name === 'json');
if (json?.kind !== 'json') throw new Error('the held-out set has no JSON slice');
for (const c of json.cases.slice(0, Number(count ?? 8))) {
  const llama = (await llamaGreedy(file, c.prompt, 60)).text;
  const engine = execFileSync(
    'npx',
    [
      'tsx',
      'bench/generate.ts',
      '--model',
      file,
      '--prompt',
      c.prompt,
      '--max-tokens',
      '60',
      '--runtime',
      'node',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const mark = (text: string) => (jsonCompletionValid(c.prompt, text) ? 'V' : '-');
  const same = llama.split('\n')[0] === engine.split('\n')[0];
  console.log(`${mark(llama)}${mark(engine)} ${same ? 'same' : 'differ'}`);
  if (!same)
    console.log(
      `  llama.cpp: ${JSON.stringify(llama.split('\n')[0])}\n  engine:    ${JSON.stringify(engine.split('\n')[0])}`,
    );
}
