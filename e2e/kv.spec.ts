import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { BenchResultSchema } from '../src/results/schema.ts';
import { runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'kv-suite-'));

test('bench --suite kv: the matrix runs on the engine, bytes per token as counted by hand, a window’s pages stay flat, the error table filled', async () => {
  test.setTimeout(240_000);
  const out = join(dir, 'kv.json');
  // ci-tiny: 2 layers, 4 heads of 32. MHA and MQA × f32 and int8 × no window and 64 tokens.
  const args = ['--runtime', 'node', '--preset', 'ci-tiny', '--suite', 'kv', '--no-autotune'];
  const matrix = ['--kv-heads', '4,1', '--kv-dtype', 'f32,int8', '--window', 'none,64'];
  const sizes = ['--depth', '64,256', '--prefill', '32', '--gen', '3', '--out', out];
  const run = await runCli('bench/bench.ts', [...args, ...matrix, ...sizes], 200_000);
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
  // By hand: 2 (K, V) × 2 layers × kvHeads × a row of 32 values: f32 128 bytes, int8 32 + a 4-byte scale.
  expect(cell(4, 'f32', null).allocatedBytesPerToken).toBe(2 * 2 * 4 * 128);
  expect(cell(4, 'int8', null).allocatedBytesPerToken).toBe(2 * 2 * 4 * 36);
  expect(cell(1, 'int8', 64).allocatedBytesPerToken).toBe(2 * 2 * 1 * 36);
  for (const c of kv.cells) expect(c.bytesPerToken).toBe(c.allocatedBytesPerToken);
  // Pages of 16: at depth 256 (+2 generated) a full-attention sequence holds ⌈258 / 16⌉ = 17 pages;
  // with a window of 64 no more than at depth 64 plus one.
  expect(cell(4, 'f32', null).pagesAt).toEqual([
    { depth: 64, pages: 5 },
    { depth: 256, pages: 17 },
  ]);
  const windowed = cell(4, 'f32', 64).pagesAt;
  expect(windowed[1].pages).toBeLessThanOrEqual(windowed[0].pages + 1);
  // One pool for all cells: int8 fits more sequences than f32, MQA more than MHA.
  expect(cell(4, 'int8', null).maxSequences).toBeGreaterThan(cell(4, 'f32', null).maxSequences);
  expect(cell(1, 'f32', null).maxSequences).toBe(4 * cell(4, 'f32', null).maxSequences);
  // The error table: none for each KV-head count's reference cell (f32, no window), three fifths
  // for the others; a window of 64 over the 512-token context changes the last fifth's logits.
  expect(cell(4, 'f32', null).error).toEqual([]);
  for (const c of kv.cells.filter((x) => x.kvDtype !== 'f32' || x.window !== null))
    expect(c.error.map((e) => e.bucket)).toEqual(['first', 'middle', 'last']);
  // Positions before 64 see the same keys with or without the window: no top-1 divergence there.
  const firstFifth = cell(4, 'f32', 64).error[0];
  expect(firstFifth.firstDivergence === null || firstFifth.firstDivergence >= 64).toBe(true);
  expect(cell(4, 'f32', 64).error[2].relErr).toBeGreaterThan(0);
  for (const c of kv.cells) expect(c.tpotMs.map((t) => t.depth)).toEqual([64, 256]);
  expect(kv.clocks.decodeAttentionMs).toBe('gpu');
});
