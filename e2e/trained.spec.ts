import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { parseTaskSet } from '../src/model/task-set.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import { TRAINED_DEMO_PROMPT } from '../src/ui/form/prompt-box.ts';
import { llamaGreedy } from '../test-support/llama-generate/generate.ts';
import { llamaQuantize } from '../test-support/llama-quantize/quantize.ts';
import { NATIVE, runCli } from './cli.ts';
import {
  openFromHistory,
  openPage,
  panel,
  screenshot,
  watchConsole,
  withoutAutotune,
} from './page-helpers.ts';

// Its tests share nothing (each writes its own files), and the file is among the longest: in
// parallel mode the two workers split its tests instead of one running them all at the end.
test.describe.configure({ mode: 'parallel' });

/**
 * The model trained here (models/trained-4m.gguf, train/): what it writes is llama.cpp's greedy
 * text on the same file, it goes on with the page's demo JSON, and the format sweep scores every
 * format on its held-out set by slice; the page opens on it and Run shows its text.
 */

const MODEL = join(import.meta.dirname, '..', 'models', 'trained-4m.gguf');
const SLICES = parseTaskSet(new Uint8Array(readFileSync('models/trained-4m-eval.json')), 'eval set').map(
  (s) => s.name,
);

// The CLI tests score a slice of each kind (--task-slices); the page's test scores them all.
const FORMAT_SLICES = ['add-2digit', 'json', 'recall-64', 'prose'];
const KV_SLICES = ['add-2digit', 'recall-256', 'prose'];

let dir: string;
test.beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trained-'));
});
test.afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('generate --preset trained-4m: the demo prompt goes on as JSON, as llama.cpp writes it on the same file', async () => {
  test.setTimeout(120_000);
  const llama = await llamaGreedy(MODEL, TRAINED_DEMO_PROMPT, 16, false);
  const run = await runCli(
    'bench/generate.ts',
    [...NATIVE, '--preset', 'trained-4m', '--prompt', TRAINED_DEMO_PROMPT, '--max-tokens', '16'],
    110_000,
  );
  expect(run.code, run.stderr).toBe(0);
  // The model goes on with the object: a key of the corpus's grammar and its value.
  expect(llama.text).toMatch(/^ "(id|name|age|tags|active|score|city|items)": /);
  expect(run.stdout).toBe(llama.text);
  expect(run.stderr).toContain('trained here');
});

test('bench --model <trained F32> --peer llama.cpp --prompt-file: the agreement on 64 positions of held-out JSON', async () => {
  test.setTimeout(180_000);
  // The shipped F16 file widened to F32 by llama.cpp's own quantizer: both engines then compute in f32.
  const f32 = join(dir, 'trained-4m-F32.gguf');
  llamaQuantize(MODEL, f32, 'F32');
  const text = join(dir, 'json.txt');
  const held = parseTaskSet(new Uint8Array(readFileSync('models/trained-4m-eval.json')), 'eval set');
  const json = held.find((s) => s.name === 'json');
  if (json?.kind !== 'json') throw new Error('the held-out set has no JSON slice');
  writeFileSync(
    text,
    json.cases
      .slice(0, 12)
      .map((c) => `${c.prompt}${c.answer}\n`)
      .join(''),
  );
  const out = join(dir, 'agreement.json');
  const run = await runCli(
    'bench/bench.ts',
    [
      ...NATIVE,
      '--model',
      f32,
      '--prefill',
      '16',
      '--depth',
      '',
      '--reps',
      '3',
      '--no-autotune',
      '--peer',
      'llama.cpp',
      '--prompt-file',
      text,
      '--agreement-tokens',
      '64',
      '--out',
      out,
    ],
    170_000,
  );
  expect(run.code, run.stderr).toBe(0);
  const a = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8'))).peers?.[0]?.agreement;
  expect(a?.tokens).toBe(64);
  // The same f32 sums in another order: every top-1 the same, log p within 1e-3.
  expect(a?.top1).toBe(1);
  expect(a?.maxAbsLogprobDiff).toBeLessThan(1e-3);
  expect(a?.maxAbsLogprobDiffLikely).toBeLessThanOrEqual(a?.maxAbsLogprobDiff ?? 0);
  expect(run.stdout).toMatch(/Agreement on 64 prompt positions: top-1 100\.0% .* over tokens of p ≥ 1e-3/);
  // More positions than the text holds is a usage error, before anything runs.
  const tooMany = await runCli(
    'bench/bench.ts',
    [
      '--model',
      f32,
      '--prefill',
      '4',
      '--depth',
      '',
      '--peer',
      'llama.cpp',
      '--prompt',
      'JSON: {"id": 1}',
      '--agreement-tokens',
      '64',
    ],
    60_000,
  );
  expect(tooMany.code).toBe(2);
  expect(tooMany.stderr).toMatch(
    /the agreement prompt: the text gives \d+ positions to compare, fewer than the 64 asked for/,
  );
});

test('bench --preset trained-4m --suite formats: the task table, every format by slice, against f32', async () => {
  test.setTimeout(300_000);
  const out = join(dir, 'formats.json');
  const run = await runCli(
    'bench/bench.ts',
    [
      '--preset',
      'trained-4m',
      '--suite',
      'formats',
      '--weights',
      'f32,q4_k',
      '--task-tokens',
      '96',
      // A slice of each kind (the page's test below scores every slice): the recall slices past 64
      // tokens are the table's longest prompts, and the kv test runs the 256-token one.
      '--task-slices',
      FORMAT_SLICES.join(','),
      '--runtime',
      'node',
      '--no-autotune',
      '--out',
      out,
    ],
    280_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('**Task quality by slice** (trained-4m: a model trained here');
  const result = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  // The task table replaces the seeded error table on a trained model.
  expect(result.quality ?? []).toEqual([]);
  const rows = result.taskQuality ?? [];
  expect(rows.map((r) => `${r.format}:${r.slice}`).sort()).toEqual(
    ['f32', 'q4_k'].flatMap((f) => FORMAT_SLICES.map((s) => `${f}:${s}`)).sort(),
  );
  for (const r of rows) {
    expect(r.cases, r.slice).toBeGreaterThan(0);
    expect(r.score95[0]).toBeLessThanOrEqual(r.score);
    expect(r.score95[1]).toBeGreaterThanOrEqual(r.score);
    if (r.format === 'f32') {
      expect(r.kld).toBeNull();
      expect(r.deltaPoints).toBeNull();
      continue;
    }
    // Δ and the verdict from the two rows, recomputed here.
    const f32 = rows.find((q) => q.format === 'f32' && q.slice === r.slice);
    expect(r.cases).toBe(f32?.cases);
    expect(r.deltaPoints).toBeCloseTo((r.score - (f32?.score ?? 0)) * 100, 9);
    expect(r.verdict).toBe((r.deltaPoints ?? 0) < -5 ? 'degraded' : 'acceptable');
    expect(r.kld?.positions).toBeGreaterThan(0);
    // The same model, 4-bit: a small divergence at most positions of every slice (Q4_K's median on
    // the default sample: 1.5e-5 nats on the additions' answers, 8.8e-3 on prose). The mean is
    // bounded looser: on the additions a few digits the rounding turns carry most of it (Q4_K 0.107
    // over all 200 cases, its 99th percentile 2.0). A wrong or garbled format is nats away from f32.
    expect(r.kld?.median, r.slice).toBeLessThan(0.05);
    expect(r.kld?.mean, r.slice).toBeLessThan(0.5);
  }
  // Its top token is f32's at most positions, pooled (one slice of a few passkey digits, where the
  // model is unsure, can flip half of them).
  const scored = rows.filter((r) => r.kld);
  const positions = scored.reduce((n, r) => n + (r.kld?.positions ?? 0), 0);
  const same = scored.reduce((n, r) => n + (r.kld?.sameTop ?? 0) * (r.kld?.positions ?? 0), 0);
  expect(same / positions).toBeGreaterThan(0.8);
  // The model has learnt something: at f32 its next-token accuracy on held-out prose is far above
  // chance (1 in 4,096) and its perplexity far below the vocabulary's size. On these 96 tokens
  // (one file's opening) the phase-4 file scores 27.1%, against 51.8% over 768 tokens and 46.1%
  // over 20,101 in torch: a short sample moves by several points between checkpoints.
  const prose = rows.find((r) => r.format === 'f32' && r.slice === 'prose');
  expect(prose?.score).toBeGreaterThan(0.2);
  expect(prose?.perplexity).toBeLessThan(100);
  // The targets are judged in the result, met or not.
  expect(result.targets?.map((t) => t.name)).toEqual(
    expect.arrayContaining([
      'two-digit addition, exact match at f32 (held-out set)',
      'JSON validity at f32 (held-out set)',
    ]),
  );
});

test('bench --preset trained-4m --suite kv: the task table by KV cache, against f32 KV with full attention; the page shows it', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const out = join(dir, 'kv.json');
  // The model's own 2 KV heads, int8 KV with and without a 64-token window (the matrix is checked by
  // hand on ci-tiny in kv.spec.ts); the reference, f32 KV with full attention, is added by the suite.
  const run = await runCli(
    'bench/bench.ts',
    [
      ...['--preset', 'trained-4m', '--suite', 'kv', '--kv-heads', '2', '--kv-dtype', 'int8'],
      ...['--window', 'none,64', '--depth', '16', '--prefill', '16', '--gen', '2'],
      ...['--task-tokens', '16', '--task-slices', KV_SLICES.join(','), '--runtime', 'node'],
      ...['--no-autotune', '--out', out],
    ],
    160_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('f32 KV with full attention is the reference)');
  const rows = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8'))).kv?.taskQuality ?? [];
  const key = (q: (typeof rows)[number]) => `${q.kv?.dtype}/${q.kv?.window ?? 'none'}`;
  expect(rows.map((q) => `${key(q)}:${q.slice}`).sort()).toEqual(
    ['f32/none', 'int8/none', 'int8/64'].flatMap((k) => KV_SLICES.map((s) => `${k}:${s}`)).sort(),
  );
  for (const q of rows) {
    // The file's f16 weights throughout: only the KV cache differs.
    expect(q.format).toBe('f16');
    const ref = rows.find((x) => key(x) === 'f32/none' && x.slice === q.slice);
    expect(q.cases).toBe(ref?.cases);
    if (q === ref) {
      expect(q.deltaPoints).toBeNull();
      expect(q.kld).toBeNull();
      continue;
    }
    expect(q.deltaPoints).toBeCloseTo((q.score - (ref?.score ?? 0)) * 100, 9);
    expect(q.kld?.positions).toBeGreaterThan(0);
  }
  // int8 KV moves the distributions a little; a window of 64 changes nothing for a prompt inside
  // it (a two-digit addition: the windowed cache's KL is the unwindowed one's, to the bit), and
  // moves recall over 256 tokens, whose passkey lies outside it, further.
  const at = (k: string, slice: string) => rows.find((x) => key(x) === k && x.slice === slice);
  expect(at('int8/none', 'add-2digit')?.kld?.mean ?? 0).toBeGreaterThan(0);
  expect(at('int8/64', 'add-2digit')?.kld).toEqual(at('int8/none', 'add-2digit')?.kld);
  expect(at('int8/64', 'recall-256')?.kld?.mean ?? 0).toBeGreaterThan(
    10 * (at('int8/none', 'recall-256')?.kld?.mean ?? 0),
  );

  // The page: the result opened from history shows the table by KV cache and its chart.
  const problems = watchConsole(page);
  await openFromHistory(page, BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8'))));
  const table = page.getByTestId('kv-task-table');
  await expect(table.locator('tbody tr')).toHaveCount(rows.length);
  await expect(table.locator('thead')).toContainText('KV cache');
  await expect(table.locator('tbody tr').first().locator('td').first()).toHaveText(
    'f16, KV f32, full attention',
  );
  await expect(page.locator('[data-testid=kv-tasks-chart] g.task-point circle')).toHaveCount(rows.length);
  await screenshot(table, 'kv-task-table.png');
  await screenshot(panel(page, 'kv-tasks-chart'), 'kv-tasks-chart.png');
  expect(problems).toEqual([]);
});

test('bench --preset trained-4m --suite spec --temperature 0.8: speculative sampling by slice, against plain sampling', async () => {
  test.setTimeout(240_000);
  const out = join(dir, 'spec.json');
  const run = await runCli(
    'bench/bench.ts',
    [
      '--preset',
      'trained-4m',
      '--suite',
      'spec',
      // The trained drafter, which samples from its own q (a deterministic drafter's path is the
      // loop's unit test, src/speculative/loop-sampled.test.ts).
      '--drafter',
      'model:trained-4m-drafter',
      '--temperature',
      '0.8',
      '--prefill',
      '32',
      '--gen',
      '8',
      '--k',
      '3',
      '--verify-k',
      '1',
      '--reps',
      '3',
      '--runtime',
      'node',
      '--no-autotune',
      '--out',
      out,
    ],
    230_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('n/a (sampled at T = 0.8)');
  const s = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8'))).speculative;
  const runs = s?.runs ?? [];
  // Each slice whose cases fit a 32-token prompt is a class.
  expect(runs.map((r) => r.promptClass)).toEqual(expect.arrayContaining(['json', 'code', 'prose']));
  for (const r of runs) {
    // A sampled text is one draw: no token-for-token check, and the run says at what temperature.
    expect(r.identical).toBeNull();
    expect(r.temperature).toBe(0.8);
    expect(r.tokens).toBe(8);
    expect(r.acceptanceRate).toBeCloseTo(r.drafted > 0 ? r.accepted / r.drafted : 0, 10);
    expect(r.speedup).toBeCloseTo(r.baselineTpotMs / r.tpotMs, 6);
  }
  // The trained drafter proposes from its own distribution, and the target keeps some of it.
  expect(runs.every((r) => r.drafter === 'model:trained-4m-drafter')).toBe(true);
  expect(runs.reduce((a, r) => a + r.accepted, 0)).toBeGreaterThan(0);
});

test('page: opens on the trained model with its demo prompt; a run shows the JSON it writes, and Generate alone does too', async ({
  page,
}) => {
  test.setTimeout(240_000);
  const problems = watchConsole(page);
  await openPage(page, '');
  await expect(
    page.getByRole('group', { name: 'Benchmark configuration' }).getByLabel('Model preset'),
  ).toHaveValue('trained-4m');
  await expect(page.getByTestId('prompt')).toHaveValue(TRAINED_DEMO_PROMPT);
  await expect(page.getByTestId('prompt-note')).toContainText('trained here');
  await expect(page.getByTestId('generate')).toBeEnabled();
  // An adapter that reports no device or description (Chromium 156) says why beside the dashes.
  const unnamed = (await page.getByTestId('device').textContent())?.includes('Description–');
  await expect(page.getByTestId('adapter-info-note')).toHaveCount(unnamed ? 1 : 0);
  // A small sweep of its own, no kernel search: the default quick suite on this model costs
  // 80 s more of SwiftShader (static-host.spec.ts runs the quick suite), and the text is the point.
  await withoutAutotune(page);
  await page.getByLabel('Prefill lengths L').fill('16');
  await page.getByLabel('Decode depths').fill('16');
  await page.getByLabel('Tokens to generate').fill('4');
  await page.getByLabel('Repetitions').fill('3');
  await page.getByTestId('run').click();
  const text = page.getByTestId('generated-text');
  await expect(text).toHaveText(/^ "(id|name|age|tags|active|score|city|items)": /, { timeout: 200_000 });
  await expect(page.getByTestId('progress')).toContainText('Done', { timeout: 30_000 });
  await expect(page.getByTestId('results-table')).toBeVisible();
  // The run ends with what the model gets right: one row per held-out slice, the sample it stands on
  // (64 prompt tokens a slice: a text slice scores exactly 64 tokens), and a mark per slice.
  const tasks = page.getByTestId('tasks-table');
  await expect(tasks.locator('tbody tr')).toHaveCount(SLICES.length);
  await expect(tasks.locator('tbody tr th')).toHaveText([...SLICES]);
  await expect(tasks.locator('tbody tr').last().locator('td').nth(1)).toHaveText('64 tokens');
  await expect(page.locator('[data-testid=tasks-chart] g.task-point circle')).toHaveCount(SLICES.length);
  await screenshot(page, 'trained-default.png');
  await screenshot(page.getByTestId('tasks-summary'), 'trained-tasks.png');
  await screenshot(panel(page, 'tasks-chart'), 'trained-tasks-chart.png');
  // Compare reads it across runs: the run, added from History, shows its own task table there.
  await page
    .getByTestId('history')
    .getByRole('button', { name: /^Add the run of .* to the comparison/ })
    .first()
    .click();
  await page.getByTestId('tab-compare').click();
  const compared = page.getByTestId('compare-1-tasks-table');
  await expect(compared.locator('tbody tr th')).toHaveText([...SLICES]);
  await expect(page.getByTestId('compare-1-tasks-summary').locator('h2')).toHaveText(/: task quality$/);
  await page.getByTestId('tab-run').click();
  const ids = (await page.getByTestId('generated-ids').textContent())?.split(', ').map(Number) ?? [];

  // Generate, without a run: the model built for it, the text streamed into the same card.
  await page.getByTestId('prompt-tokens').fill('4');
  await page.getByTestId('generate').click();
  await expect(page.getByTestId('generation-status')).toHaveText(/^Generated greedily with Generate/, {
    timeout: 120_000,
  });
  expect((await page.getByTestId('generated-ids').textContent())?.split(', ').map(Number)).toEqual(
    ids.slice(0, 4),
  );
  expect(problems).toEqual([]);
});
