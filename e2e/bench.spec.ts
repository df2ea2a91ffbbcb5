import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { presetConfig } from '../src/model/config.ts';
import { saveHfModel } from '../src/model/hf.ts';
import { randomWeights } from '../src/model/weights.ts';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { makeResult } from '../test-support/fixtures/base.ts';
import { CI_TINY_DISPATCHES } from './ci-tiny.ts';
import { cliArgv, NATIVE, runCli } from './cli.ts';

// Its tests share nothing (each writes its own files), and the file is among the longest: in
// parallel mode the two workers split its tests instead of one running them all at the end.
test.describe.configure({ mode: 'parallel' });

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const readResult = (path: string): BenchResult =>
  BenchResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));

test('bench CLI: contiguous KV with a batch of 4 gives every sequence its own maxSeqLen slot', async () => {
  test.setTimeout(150_000);
  // The pool used to be sized in tokens (4 × 19 here, one 1024-token slot), so the second sequence
  // of the batch found no slot; contiguous capacity is now batch × maxSeqLen.
  const out = join(tmp('bench-'), 'contiguous.json');
  const run = await runCli('bench/bench.ts', [
    ...NATIVE,
    '--kv',
    'contiguous',
    '--batch',
    '4',
    // The unfused graph (--no-fuse) here, so the CLI runs a whole model of each graph.
    '--no-fuse',
    '--prefill',
    '',
    '--depth',
    '16',
    '--gen',
    '4',
    '--no-autotune',
    '--out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  const result = readResult(out);
  expect(result.status).toBe('complete');
  expect(result.points.map((p) => [p.pass, p.depth, p.batch, p.kvMode, p.dispatches])).toEqual([
    ['decode', 16, 4, 'contiguous', CI_TINY_DISPATCHES.unfused],
  ]);
  expect([result.spec.fuse, result.model.graph]).toEqual([false, 'unfused']);
  expect(run.stdout).toContain('- **Graph:** unfused (--no-fuse)');
});

test('bench CLI: --fail-on-fallback exits 3 on a software adapter', async () => {
  const run = await runCli('bench/bench.ts', ['--fail-on-fallback']);
  expect(run.code, run.stderr).toBe(3);
  expect(run.stderr).toContain('fallback/software adapter');
});

test('bench CLI: bad flags exit 2 with a clear message', async () => {
  const unknown = await runCli('bench/bench.ts', ['--frobnicate']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("Unknown option '--frobnicate'");
  const reps = await runCli('bench/bench.ts', ['--reps', '2']);
  expect(reps.code).toBe(2);
  expect(reps.stderr).toContain('reps: Too small: expected number to be >=3');
  const page = await runCli('bench/bench.ts', ['--page-size', '12']);
  expect(page.code).toBe(2);
  expect(page.stderr).toContain('pageSize: must be one of 8, 16, 32');
  const suite = await runCli('bench/bench.ts', ['--suite', 'fast']);
  expect(suite.code).toBe(2);
  expect(suite.stderr).toContain(
    '--suite must be quick, full, kernels, capacity, spec, serve, case, batch, formats, fusion, sustained, kv, got "fast"',
  );
  const gate = await runCli('bench/bench.ts', ['--max-regression', '10']);
  expect(gate.code).toBe(2);
  expect(gate.stderr).toContain('--max-regression needs --baseline FILE');
  const baseline = await runCli('bench/bench.ts', [
    '--baseline',
    '/no/such/result.json',
    '--max-regression',
    '10',
  ]);
  expect(baseline.code).toBe(2);
  expect(baseline.stderr).toContain('/no/such/result.json');
  // An --out whose extension names no format is refused, not written as JSON under another name.
  const out = await runCli('bench/bench.ts', ['--out', 'results/small.txt']);
  expect(out.code).toBe(2);
  expect(out.stderr).toContain(
    '--out results/small.txt: its extension names no format (.json, .jsonl, .csv or .md); rename it or pass --format',
  );
});

test('bench CLI: bad KV types, windows and KV head counts exit 2 naming the flag, before measuring', async () => {
  const cases: [string[], string][] = [
    [['--kv-dtype', 'f8'], '--kv-dtype: "f8" is not a KV type (f32, f16, int8)'],
    [
      ['--kv-dtype', 'f16,int8'],
      'several KV types (--kv-dtype) make a sweep: add --suite kv, or give one type',
    ],
    [['--window', '0'], '--window takes a positive whole number of tokens (or none), got "0"'],
    [['--window', '8'], '--window 8 is shorter than one KV page of 16 tokens'],
    [['--window', '1024'], "--window 1024 is not shorter than the model's maxSeqLen of 1024"],
    [['--kv-heads', '2'], '--kv-heads applies to --suite kv'],
    [['--suite', 'kv', '--kv-heads', '4,3'], "--kv-heads 3 does not divide the model's 4 heads"],
    [['--suite', 'kv', '--window', 'none,8'], '--window 8 is shorter than one KV page of 16 tokens'],
  ];
  const runs = await Promise.all(cases.map(([args]) => runCli('bench/bench.ts', args)));
  expect(runs.map((r, i) => [r.code, r.stderr.includes(cases[i][1]) ? cases[i][1] : r.stderr])).toEqual(
    cases.map(([, message]) => [2, message]),
  );
});

test('bench CLI: a prompt longer than the model exits 2 naming the limit, before measuring', async () => {
  const run = await runCli('bench/bench.ts', ['--prefill', '2000', '--depth', '', '--no-autotune']);
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("SpecError: prompt length 2000 exceeds the model's maxSeqLen of 1024");
});

test('bench CLI: Ctrl-C exits 130 and writes the points finished so far', async () => {
  test.setTimeout(150_000);
  const out = join(tmp('bench-'), 'interrupted.json');
  // Node itself (not npx), so the signal reaches the CLI as a terminal's Ctrl-C would.
  const args = cliArgv('bench/bench.ts', ['--prefill', '16,32,64,128,256', '--depth', '', '--no-autotune']);
  const child = spawn(process.execPath, [...args, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const code = await new Promise<number | null>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // Interrupt once the second point has started, so the first is finished and kept.
      if (/prefill: prefill L=32/.test(stderr) && !child.killed) child.kill('SIGINT');
    });
    child.on('exit', resolve);
  });
  expect(code, stderr).toBe(130);
  expect(stderr).toContain('stopping after the current repetition');
  const result = readResult(out);
  expect(result.status).toBe('cancelled');
  expect(result.error?.name).toBe('CancelledError');
  expect(result.points.length).toBeGreaterThanOrEqual(1);
  expect(result.points.length).toBeLessThan(5);
  expect(result.points[0]).toMatchObject({ pass: 'prefill', tokens: 16 });
});

test('bench CLI: a model the GPU cannot match to the reference exits 1 with nothing timed', async () => {
  test.setTimeout(120_000);
  // Embeddings of 1e20 square to 1e40 in RMSNorm: past f32 (Inf on the GPU), fine in the float64
  // reference. Validation must catch it, and no point may be timed.
  const weights = randomWeights(presetConfig('ci-tiny'), 3);
  const table = weights.tensors.get('model.embed_tokens.weight');
  if (!table) throw new Error('ci-tiny has no embedding table');
  for (let i = 0; i < table.length; i++) table[i] *= 1e20;
  const dir = tmp('overflow-');
  const model = saveHfModel(weights);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), model.configJson);
  writeFileSync(join(dir, 'model.safetensors'), model.safetensors);
  const out = join(dir, 'result.json');
  const run = await runCli('bench/bench.ts', [
    ...NATIVE,
    '--model',
    dir,
    '--prefill',
    '16',
    '--depth',
    '',
    '--no-autotune',
    '--out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(1);
  expect(run.stderr).toContain('ReferenceMismatchError: GPU logits differ from the CPU reference');
  const result = readResult(out);
  expect(result.status).toBe('failed');
  expect(result.validation.passed).toBe(false);
  expect(result.points).toEqual([]);
});

test('bench CLI: --baseline with --max-regression exits 1 on a regression', async () => {
  test.setTimeout(120_000);
  const dir = tmp('baseline-');
  // A baseline in which ci-tiny's prefill of 16 tokens took 1 µs: any real run is a regression.
  const fixture = makeResult();
  const point = { ...fixture.points[0], medianMs: 0.001, wallMedianMs: 0.001 };
  const baseline = makeResult({
    model: { ...fixture.model, preset: 'ci-tiny' },
    points: [point],
  });
  const baselinePath = join(dir, 'baseline.json');
  writeFileSync(baselinePath, JSON.stringify(baseline));
  const run = await runCli('bench/bench.ts', [
    ...NATIVE,
    '--prefill',
    '16',
    '--depth',
    '',
    '--no-autotune',
    '--baseline',
    baselinePath,
    '--max-regression',
    '10',
    '--out',
    join(dir, 'now.json'),
  ]);
  expect(run.code, run.stderr).toBe(1);
  expect(run.stderr).toMatch(/REGRESSION ci-tiny prefill L=16 B=1: 0\.001 ms → [\d.]+ ms/);
});

test('bench CLI: the kernel suite times every kernel after validating it, and judges the targets', async () => {
  test.setTimeout(320_000);
  const out = join(tmp('kernels-'), 'kernels.json');
  const started = Date.now();
  // The adapter's default families, no search: the autotuner's choices are the quick suite's
  // test (quick.spec.ts); searching every kernel here took 111 s under load against 70. Natively:
  // the suite is the engine's, the same in both runtimes. One tiny kernel's GPU span used to read 0
  // there once in four runs, as Dawn masked its timestamps to 65,536 ns; the native runtime now
  // turns that off (src/runtime/node/dawn-globals.ts), and this test asks GPU time of every kernel.
  const run = await runCli(
    'bench/bench.ts',
    [...NATIVE, '--suite', 'kernels', '--no-autotune', '--out', out],
    300_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect((Date.now() - started) / 1000, 'the kernel suite must finish in under 5 minutes').toBeLessThan(300);
  const result = readResult(out);
  expect(result.validation.passed).toBe(true);
  expect(result.spec.workloads).toEqual([{ kind: 'kernels', reps: 3, warmup: 1 }]);
  const names = new Set(result.kernelPoints?.map((k) => k.name));
  for (const name of [
    'matmul gate/up proj',
    'gemv gate/up proj',
    'gemv large',
    'gemv large int4',
    'attention prefill',
    'attention decode',
    'rmsnorm',
  ]) {
    expect(names.has(name), `kernel suite measured ${name}`).toBe(true);
  }
  for (const k of result.kernelPoints ?? []) {
    expect(k.samplesMs).toHaveLength(3);
    expect(k.wallSamplesMs).toHaveLength(3);
    expect(k.medianMs).toBeGreaterThan(0);
    expect(k.timebase).toBe('gpu');
  }
  expect(result.tuning?.enabled ?? false).toBe(false);
  expect(result.targets?.map((t) => t.name)).toEqual([
    'matmul, best prefill shape at L ≥ 256',
    'GEMV, M = 1, weights far larger than cache',
    'int4 GEMV, M = 1, weights far larger than cache (packed words and scales counted)',
    'paged against contiguous decode attention',
    'split-K decode attention at batch 1, depth 4000',
  ]);
});

test('bench --help: each flag under its own group, each group after a blank line, words as docs/cli.md has them', async () => {
  const help = await runCli('bench/bench.ts', ['--help']);
  expect(help.code).toBe(0);
  const lines = help.stdout.split('\n');
  // A group header is a line that starts at the margin; each but the usage line follows a blank one.
  const headers = lines.map((l, i) => ({ l, i })).filter(({ l, i }) => i > 0 && /^[A-Z][a-z]/.test(l));
  expect(headers.map((h) => h.l)).toContain('Kernels and graph');
  for (const { l, i } of headers) expect(lines[i - 1], `the line before "${l}"`).toBe('');
  const group = (title: string) => {
    const start = lines.findIndex((l) => l.startsWith(title));
    const end = lines.findIndex((l, i) => i > start && l === '');
    return lines.slice(start, end).join('\n');
  };
  for (const flag of ['--profile', '--no-autotune', '--no-fuse']) {
    expect(group('Kernels and graph')).toContain(flag);
    expect(group('Load test')).not.toContain(flag);
  }
  // --no-autotune says what docs/cli.md says.
  const words = (s: string) => s.replace(/\s+/g, ' ').trim();
  const helpText = words(group('Kernels and graph').split('--no-autotune')[1].split('--no-fuse')[0]);
  const docRow = readFileSync('docs/cli.md', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('| `--no-autotune`'));
  expect(words(docRow?.split('|')[2] ?? '')).toBe(helpText);
});
