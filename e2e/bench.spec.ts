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
import { runCli } from './cli.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const readResult = (path: string): BenchResult =>
  BenchResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));

/**
 * ci-tiny's dispatches per pass, counted by hand from the forward pass (2 layers): unfused, the
 * embedding, 16 calls a layer, the final norm, the LM head and argmax; fused, 6 a layer and the
 * final norm inside the LM head.
 */
const CI_TINY_DISPATCHES = { unfused: 1 + 2 * 16 + 1 + 2, fused: 1 + 2 * 6 + 2 } as const;
/** Where the autotuner chose split-K decode attention: its merge, a second dispatch in each of the 2 layers. */
const SPLIT_MERGES = 2;

test('bench CLI: the quick suite on ci-tiny writes a valid result, both clocks and per-point latency', async () => {
  test.setTimeout(200_000);
  const out = join(tmp('bench-'), 'quick.json');
  const started = Date.now();
  const run = await runCli('bench/bench.ts', ['--preset', 'ci-tiny', '--suite', 'quick', '--out', out]);
  const seconds = (Date.now() - started) / 1000;
  expect(run.code, run.stderr).toBe(0);
  expect(seconds, 'the quick suite must finish in under 3 minutes').toBeLessThan(180);
  expect(run.stderr).toMatch(/\[\d+\/\d+\] prefill: prefill L=16 .*elapsed \d+s/);
  expect(run.stdout).toContain(
    '| pass | L/depth | clock | ms | wall ms | GPU ms | tok/s | GFLOP/s | GB/s | FLOP/B | bound | % roof | predicted ms |',
  );

  const result = readResult(out);
  expect(result.status).toBe('complete');
  expect(result.validation.passed).toBe(true);
  expect(result.spec.workloads.map((w) => w.kind)).toEqual(['prefill', 'decode', 'fusion']);
  expect(result.spec.fuse).toBe(true);
  const graph = result.model.graph;
  if (!graph) throw new Error('the result does not say which graph the model ran');
  // The sweeps' points; the fusion workload's carry their graph.
  const sweep = result.points.filter((p) => !p.graph);
  const prefill = sweep.filter((p) => p.pass === 'prefill');
  const decode = sweep.filter((p) => p.pass === 'decode');
  expect(prefill.map((p) => p.tokens)).toEqual([16, 32, 64, 128, 256]);
  expect(decode.map((p) => p.depth)).toEqual([16, 128, 512]);
  // SwiftShader has timestamps, and the CLI asks Chromium not to quantize them.
  expect(result.env.timestamps).toEqual({ supported: true, quantumNs: null });
  const splitDecode = (result.tuning?.choices ?? []).some(
    (c) => c.op === 'attentionDecode' && c.chosen.startsWith('split('),
  );
  for (const p of result.points) {
    // One sample per repetition, in both clocks; the GPU clock placed it.
    expect(p.samplesMs).toHaveLength(3);
    expect(p.wallSamplesMs).toHaveLength(3);
    expect(p.gpuSamplesMs).toHaveLength(3);
    expect(p.timebase).toBe('gpu');
    expect(p.medianMs).toBe(p.gpuMedianMs);
    expect(p.wallMedianMs).toBeGreaterThan(0);
    // Nothing foreign inside the GPU span: it cannot exceed the wall time of the same repetition.
    for (const [i, gpu] of p.samplesMs.entries()) expect(gpu).toBeLessThanOrEqual(p.wallSamplesMs[i]);
    expect(p.kernels.length, `${p.pass} ${p.tokens}/${p.depth} has a kernel breakdown`).toBeGreaterThan(0);
    // The dispatches the cost model assumes are the ones the engine recorded, and both are the hand count.
    expect(p.dispatches).toBe(
      CI_TINY_DISPATCHES[p.graph ?? graph] + (p.pass === 'decode' && splitDecode ? SPLIT_MERGES : 0),
    );
    expect(p.kernels.reduce((n, k) => n + k.calls, 0)).toBe(p.dispatches);
    expect(p.predictedMs).toBeGreaterThan(0);
  }
  for (const p of result.points.filter((x) => x.pass === 'prefill'))
    expect(p.ttftMs?.p50).toBe(p.wallMedianMs);
  for (const p of result.points.filter((x) => x.pass === 'decode')) {
    // TPOT samples are the wall samples, one per repetition; ITLs are every gap of 15 steps × 3 reps.
    expect(p.tpotMs?.p50).toBe(p.wallMedianMs);
    expect(p.itlSamplesMs).toHaveLength(15 * 3);
    expect(p.itlMs?.p99).toBeGreaterThanOrEqual(p.itlMs?.p50 ?? Number.POSITIVE_INFINITY);
  }
  // Long prefills are compute-bound on a software adapter; decode steps bandwidth- or overhead-bound.
  expect(prefill[prefill.length - 1].bound).toBe('compute');
  for (const d of decode) expect(['bandwidth', 'overhead']).toContain(d.bound);
  expect(result.peaks.dispatchUs).toBeGreaterThan(0);
  expect(result.peaks.emptyDispatchUs).toBeGreaterThan(0);
  expect(result.peaksAfter?.fmaGflops).toBeGreaterThan(0);

  // Fused against unfused at the suite's largest L and first depth: what the engine recorded per
  // layer, the hand count; the times are the points' own p50s, the ratio theirs.
  expect(result.points.filter((p) => p.graph).map((p) => [p.pass, p.graph, p.tokens, p.depth])).toEqual([
    ['prefill', 'fused', 256, 0],
    ['decode', 'fused', 1, 16],
    ['prefill', 'unfused', 256, 0],
    ['decode', 'unfused', 1, 16],
  ]);
  const [fused, unfused] = result.fusion ?? [];
  expect([fused?.graph, fused?.fused, unfused?.graph, unfused?.fused]).toEqual([
    'fused',
    true,
    'unfused',
    false,
  ]);
  for (const [row, perLayer] of [
    [fused, 6],
    [unfused, 16],
  ] as const) {
    const merge = splitDecode ? SPLIT_MERGES : 0;
    expect([row.prefillPerLayer, row.decodePerLayer]).toEqual([perLayer, perLayer + merge / 2]);
    expect([row.prefillDispatches, row.decodeDispatches]).toEqual([
      CI_TINY_DISPATCHES[row.graph],
      CI_TINY_DISPATCHES[row.graph] + merge,
    ]);
    const point = (pass: string) => result.points.find((p) => p.graph === row.graph && p.pass === pass);
    expect(row.prefillMs).toBe(point('prefill')?.ttftMs?.p50);
    expect(row.tpotMs).toBe(point('decode')?.tpotMs?.p50);
  }
  expect(fused.tpotRatio).toBeCloseTo(fused.tpotMs / unfused.tpotMs, 12);
  expect(result.validation.checks.map((c) => c.name)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^fused graph: /),
      expect.stringMatching(/^unfused graph: /),
    ]),
  );
  const target = result.targets?.find((t) => t.name.startsWith('fused against unfused decode step'));
  expect(target?.met).not.toBeNull();
  // The report's fusion row: per layer and per pass, split-K's merge counted in decode.
  const merge = splitDecode ? SPLIT_MERGES : 0;
  expect(run.stdout).toContain(
    `| fused | 6 | ${6 + merge / 2} | ${CI_TINY_DISPATCHES.fused}, ${CI_TINY_DISPATCHES.fused + merge} |`,
  );
});

test('bench CLI: contiguous KV with a batch of 4 gives every sequence its own maxSeqLen slot', async () => {
  test.setTimeout(150_000);
  // The pool used to be sized in tokens (4 × 19 here, one 1024-token slot), so the second sequence
  // of the batch found no slot; contiguous capacity is now batch × maxSeqLen.
  const out = join(tmp('bench-'), 'contiguous.json');
  const run = await runCli('bench/bench.ts', [
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
    '--suite must be quick, full, kernels, capacity, spec, serve, batch, formats, fusion, got "fast"',
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
  const args = [
    '--import',
    'tsx',
    'bench/bench.ts',
    '--prefill',
    '16,32,64,128,256',
    '--depth',
    '',
    '--no-autotune',
  ];
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
  const run = await runCli('bench/bench.ts', ['--suite', 'kernels', '--out', out], 300_000);
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
  expect(result.tuning?.enabled).toBe(true);
  // Every autotuned choice is one that passed validation.
  for (const choice of result.tuning?.choices ?? []) {
    expect(choice.trials.find((t) => t.variant === choice.chosen)?.valid).toBe(true);
  }
  expect(result.targets?.map((t) => t.name)).toEqual([
    'matmul, best prefill shape at L ≥ 256',
    'GEMV, M = 1, weights far larger than cache',
    'int4 GEMV, M = 1, weights far larger than cache (packed words and scales counted)',
    'paged against contiguous decode attention',
    'split-K decode attention at batch 1, depth 4000',
  ]);
});
