import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { parseTaskSet } from '../src/model/task-set.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import { runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'kv-suite-'));
const SLICES = parseTaskSet(new Uint8Array(readFileSync('models/trained-4m-eval.json')), 'eval set').map(
  (s) => s.name,
);

/**
 * On the trained model, so that the same run also scores its held-out task set by KV cache: the
 * memory, fits, speed and error of every cell, and the task table of its own KV heads.
 */
test('bench --suite kv: the matrix runs on the engine, bytes per token as counted by hand, a window’s pages stay flat, the error table filled, the task table by KV cache', async () => {
  test.setTimeout(300_000);
  const out = join(dir, 'kv.json');
  // trained-4m: 4 layers, 8 query heads of 32, 2 KV heads. Its own GQA and MQA × f32 and int8 ×
  // no window and 64 tokens; the task table on a sample (each slice's first case at least).
  const args = ['--runtime', 'node', '--preset', 'trained-4m', '--suite', 'kv', '--no-autotune'];
  const matrix = ['--kv-heads', '2,1', '--kv-dtype', 'f32,int8', '--window', 'none,64'];
  const sizes = ['--depth', '64,256', '--prefill', '32', '--gen', '3', '--task-tokens', '32', '--out', out];
  const run = await runCli('bench/bench.ts', [...args, ...matrix, ...sizes], 280_000);
  expect(run.code, run.stderr).toBe(0);
  const r = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  const kv = r.kv;
  if (!kv) throw new Error('no kv section');
  expect(kv.cells).toHaveLength(8);
  const cell = (kvHeads: number, kvDtype: string, window: number | null) => {
    const c = kv.cells.find((x) => x.kvHeads === kvHeads && x.kvDtype === kvDtype && x.window === window);
    if (!c) throw new Error(`no cell ${kvHeads}/${kvDtype}/${window}`);
    return c;
  };
  // By hand: 2 (K, V) × 4 layers × kvHeads × a row of 32 values: f32 128 bytes, int8 32 + a 4-byte scale.
  expect(cell(2, 'f32', null).allocatedBytesPerToken).toBe(2 * 4 * 2 * 128);
  expect(cell(2, 'int8', null).allocatedBytesPerToken).toBe(2 * 4 * 2 * 36);
  expect(cell(1, 'int8', 64).allocatedBytesPerToken).toBe(2 * 4 * 1 * 36);
  for (const c of kv.cells) expect(c.bytesPerToken).toBe(c.allocatedBytesPerToken);
  // Pages of 16: at depth 256 (+2 generated) a full-attention sequence holds ⌈258 / 16⌉ = 17 pages;
  // with a window of 64 no more than at depth 64 plus one.
  expect(cell(2, 'f32', null).pagesAt).toEqual([
    { depth: 64, pages: 5 },
    { depth: 256, pages: 17 },
  ]);
  const windowed = cell(2, 'f32', 64).pagesAt;
  expect(windowed[1].pages).toBeLessThanOrEqual(windowed[0].pages + 1);
  // One pool for all cells: int8 fits more sequences than f32, MQA more than MHA.
  expect(cell(2, 'int8', null).maxSequences).toBeGreaterThan(cell(2, 'f32', null).maxSequences);
  expect(cell(1, 'f32', null).maxSequences).toBe(2 * cell(2, 'f32', null).maxSequences);
  // The error table: none for each KV-head count's reference cell (f32, no window), three fifths
  // for the others; a window of 64 over the 512-token context changes the last fifth's logits.
  expect(cell(2, 'f32', null).error).toEqual([]);
  for (const c of kv.cells.filter((x) => x.kvDtype !== 'f32' || x.window !== null))
    expect(c.error.map((e) => e.bucket)).toEqual(['first', 'middle', 'last']);
  // Positions before 64 see the same keys with or without the window: no top-1 divergence there.
  const firstFifth = cell(2, 'f32', 64).error[0];
  expect(firstFifth.firstDivergence === null || firstFifth.firstDivergence >= 64).toBe(true);
  expect(cell(2, 'f32', 64).error[2].relErr).toBeGreaterThan(0);
  for (const c of kv.cells) expect(c.tpotMs.map((t) => t.depth)).toEqual([64, 256]);
  expect(kv.clocks.decodeAttentionMs).toBe('gpu');

  // The task table: every slice once per KV cache of the model's own KV heads (MQA's K and V are
  // seeded: nothing to score), in the file's f16 weights, against f32 KV with full attention.
  expect(run.stdout).toContain('f32 KV with full attention is the reference)');
  const rows = kv.taskQuality ?? [];
  const key = (q: (typeof rows)[number]) => `${q.kv?.dtype}/${q.kv?.window ?? 'none'}`;
  expect(rows.map((q) => `${key(q)}:${q.slice}`).sort()).toEqual(
    ['f32/none', 'int8/none', 'f32/64', 'int8/64'].flatMap((k) => SLICES.map((s) => `${k}:${s}`)).sort(),
  );
  for (const q of rows) {
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
  // A window of 64 changes nothing for a prompt inside it: f32 KV windowed on a short two-digit
  // addition has the reference's every distribution (KL 0, the same top everywhere); on recall
  // over 1,024 tokens it no longer sees the passkey, and its distributions move.
  const at = (k: string, slice: string) => rows.find((x) => key(x) === k && x.slice === slice);
  expect(at('f32/64', 'add-2digit')?.kld).toMatchObject({ mean: 0, sameTop: 1 });
  expect(at('f32/64', 'recall-1024')?.kld?.mean ?? 0).toBeGreaterThan(0);
});
