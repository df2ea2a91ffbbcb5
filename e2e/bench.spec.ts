import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { prefillCost } from '../src/measure/cost.ts';
import { presetConfig } from '../src/model/config.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import { runCli } from './cli.ts';

test('bench CLI: the quick suite on ci-tiny writes a valid, classified result', async () => {
  test.setTimeout(200_000);
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const out = join(dir, 'quick.json');
  const started = Date.now();
  const run = await runCli('bench/bench.ts', ['--preset', 'ci-tiny', '--suite', 'quick', '--out', out]);
  const seconds = (Date.now() - started) / 1000;
  expect(run.code, run.stderr).toBe(0);
  expect(seconds, 'the quick suite must finish in under 3 minutes').toBeLessThan(180);
  expect(run.stderr).toMatch(/\[\d+\/\d+\] .* elapsed \d+s/);
  expect(run.stdout).toContain(
    '| pass | L/depth | ms | tok/s | GFLOP/s | GB/s | FLOP/B | bound | % roof | predicted ms |',
  );

  const result = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  expect(result.status).toBe('complete');
  expect(result.validation.passed).toBe(true);
  const prefill = result.points.filter((p) => p.pass === 'prefill');
  const decode = result.points.filter((p) => p.pass === 'decode');
  expect(prefill.length).toBeGreaterThanOrEqual(5);
  expect(decode.length).toBeGreaterThanOrEqual(3);
  const config = presetConfig('ci-tiny');
  for (const p of result.points) {
    expect(p.samplesMs.length).toBeGreaterThanOrEqual(3);
    expect(p.kernels.length, `${p.pass} ${p.tokens}/${p.depth} has a kernel breakdown`).toBeGreaterThan(0);
    expect(p.kernels.every((k) => k.medianMs >= 0)).toBe(true);
    expect(p.predictedMs).toBeGreaterThan(0);
  }
  // The cost model's counts in the result are the ones the unit tests check by hand.
  for (const p of prefill) {
    const cost = prefillCost(config, p.tokens);
    expect([p.flops, p.bytes, p.dispatches]).toEqual([cost.flops, cost.bytes, cost.dispatches]);
  }
  // Classification follows from the measured roofs; on a software adapter long prefills are
  // compute-bound and decode steps are bandwidth- or overhead-bound.
  expect(prefill[prefill.length - 1].bound).toBe('compute');
  for (const d of decode) expect(['bandwidth', 'overhead']).toContain(d.bound);
  expect(result.peaks.fmaGflops).toBeGreaterThan(0);
  expect(result.peaks.copyGBps).toBeGreaterThan(0);
  expect(result.latency.tpotMs.p50).toBeGreaterThan(0);
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
  expect(reps.stderr).toContain('reps');
  const page = await runCli('bench/bench.ts', ['--page-size', '12']);
  expect(page.code).toBe(2);
  expect(page.stderr).toContain('pageSize: must be one of 8, 16, 32');
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

test('bench CLI: the kernel suite times every kernel after validating it, and judges the targets', async () => {
  test.setTimeout(320_000);
  const out = join(mkdtempSync(join(tmpdir(), 'kernels-')), 'kernels.json');
  const started = Date.now();
  const run = await runCli('bench/bench.ts', ['--suite', 'kernels', '--out', out], 300_000);
  expect(run.code, run.stderr).toBe(0);
  expect((Date.now() - started) / 1000, 'the kernel suite must finish in under 5 minutes').toBeLessThan(300);
  const result = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  expect(result.validation.passed).toBe(true);
  const names = new Set(result.kernelPoints?.map((k) => k.name));
  for (const name of [
    'matmul gate/up proj',
    'gemv gate/up proj',
    'gemv large',
    'attention prefill',
    'attention decode',
    'rmsnorm',
  ]) {
    expect(names.has(name), `kernel suite measured ${name}`).toBe(true);
  }
  for (const k of result.kernelPoints ?? []) {
    expect(k.samplesMs.length).toBe(3);
    expect(k.medianMs).toBeGreaterThan(0);
  }
  expect(result.tuning?.enabled).toBe(true);
  // Every autotuned choice is one that passed validation.
  for (const choice of result.tuning?.choices ?? []) {
    expect(choice.trials.find((t) => t.variant === choice.chosen)?.valid).toBe(true);
  }
  expect(result.targets?.map((t) => t.name)).toEqual([
    'matmul, best prefill shape at L ≥ 256',
    'GEMV, M = 1, weights far larger than cache',
    'paged against contiguous decode attention',
  ]);
});
