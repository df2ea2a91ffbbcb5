import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { summarize } from '../src/serve/metrics.ts';
import { traceFromJsonl } from '../src/serve/traffic.ts';
import { percentile } from '../src/stats.ts';
import { runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'serve-'));

/**
 * `--suite serve` on ci-tiny as a user runs it, small: twelve requests of the default mix at t = 0,
 * continuous against static, then each alone. A 400-token pool cannot hold the longest RAG
 * requests: they fail with their own error while the others run. The trace is written back. The
 * same run replays the continuous arm over HTTP (`--target`): through this project's server on
 * loopback, which the CLI starts with the run's model and pool, and against a port where nothing
 * listens.
 */
test('bench --suite serve: both arms, every request timed, failures per request, identical to solo, the trace written, the same trace over HTTP', async () => {
  test.setTimeout(300_000);
  const out = join(dir, 'serve.json');
  const traceOut = join(dir, 'trace.jsonl');
  // A port nothing listens on: one the system just handed out, closed again.
  const probe = createServer();
  await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
  const dead = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1`;
  await new Promise((ok) => probe.close(ok));
  const run = await runCli(
    'bench/bench.ts',
    [
      '--suite',
      'serve',
      '--requests',
      '12',
      '--rate',
      'inf',
      '--kv-tokens',
      '400',
      // Nothing here is about tuning: the adapter's default kernels, and no search.
      '--no-autotune',
      '--out',
      out,
      '--trace-out',
      traceOut,
      '--target',
      `in-process,loopback,${dead}`,
      // A stalled stream fails after this; generous, since a busy 2-core machine can pause one.
      '--http-timeout',
      '60',
    ],
    290_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/serve: (continuous|static): \d+ of 12 requests, batch \d+, KV \d+%/);
  const r: BenchResult = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  expect(r.status).toBe('complete');
  const serve = r.serve;
  if (!serve) throw new Error('no serve section');
  expect(serve.runs.map((x) => x.label)).toEqual([
    'continuous',
    'static',
    'continuous · HTTP, loopback',
    `continuous · HTTP, ${dead}`,
  ]);
  for (const arm of serve.runs.slice(0, 2)) {
    expect(arm.requests).toHaveLength(12);
    const failed = arm.requests.filter((q) => q.status === 'failed');
    // Whatever needs more than 400 tokens (25 pages of 16) of KV fails alone, with the reason.
    for (const q of arm.requests) {
      const need = Math.ceil((q.promptTokens + (q.requestedTokens ?? 0) - 1) / 16);
      expect(q.status, `request ${q.id}`).toBe(need > 25 ? 'failed' : 'finished');
    }
    expect(failed.length).toBeGreaterThan(0);
    for (const q of failed) expect(q.error).toMatch(/can never run/);
    // Every aggregate comes from the raw records.
    expect(arm.summary).toEqual(summarize(arm.requests, { durationMs: arm.durationMs, slo: arm.slo }));
    expect(arm.identical?.mismatches).toBe(0);
    expect(arm.identical?.checked).toBe(12 - failed.length);
    expect(arm.timeline.length).toBe(arm.steps);
  }
  // Over HTTP, request for request: the same tokens as in process (by fingerprint), the same
  // requests refused (the server's pool is the run's: HTTP 400 before any stream), and the client's
  // TTFT split by the server's timeline into network and HTTP, queue and prefill.
  const [inProcess, , http, refused] = serve.runs;
  expect(http.target).toMatchObject({ kind: 'http', tokenCounting: 'token_ids' });
  expect(inProcess.target).toEqual({ kind: 'in-process' });
  const finished = inProcess.requests.filter((q) => q.status === 'finished');
  expect(http.matchesInProcess).toEqual({ checked: finished.length, mismatches: 0 });
  expect(http.requests.map((q) => q.status)).toEqual(inProcess.requests.map((q) => q.status));
  const hashes = (x: typeof http) => x.requests.map((q) => (q.status === 'finished' ? q.outputHash : null));
  expect(hashes(http)).toEqual(hashes(inProcess));
  expect(http.errors).toEqual({ http_4xx: 12 - finished.length });
  for (const q of http.requests.filter((x) => x.status === 'failed')) {
    expect(q.error).toMatch(/^HTTP 400: kv_cache_exceeded: The request needs \d+ KV pages/);
  }
  const done = http.requests.filter((q) => q.status === 'finished');
  const ttft = done.map((q) => q.tokenTimesMs[0] - q.arrivalMs);
  const sum = done.map(
    (q) => (q.networkMs ?? Number.NaN) + (q.queueMs ?? Number.NaN) + (q.prefillMs ?? Number.NaN),
  );
  const p50 = percentile(ttft, 50);
  expect(Math.abs(p50 - percentile(sum, 50))).toBeLessThanOrEqual(Math.max(2, 0.05 * p50));
  for (const q of done) expect(q.networkMs).toBeGreaterThan(0);
  // The server's /metrics over the arm saw the finished requests, and its mean prefill fits in the
  // client's mean TTFT.
  expect(http.serverMetrics?.requests).toBe(done.length);
  expect(http.serverMetrics?.prefillMsMean ?? Number.POSITIVE_INFINITY).toBeLessThan(
    http.summary.ttftMs?.mean ?? 0,
  );
  // Nothing listens there: every request counted as refused, the run and its other arms kept.
  expect(refused.errors).toEqual({ connection_refused: 12 });
  expect(refused.summary.completed).toBe(0);
  expect(run.stderr).toMatch(/errors connection_refused 12/);
  expect(run.stdout).toContain('Interface against inference');

  const checks = r.validation.checks.filter((c) => c.name.includes('identical'));
  expect(checks).toHaveLength(2);
  expect(r.validation.passed).toBe(true);
  // The trace round-trips: the same requests, lengths and classes.
  const trace = traceFromJsonl(readFileSync(traceOut, 'utf8'));
  expect(trace.map((t) => [t.promptTokens, t.outputTokens, t.class])).toEqual(
    serve.runs[0].requests.map((q) => [q.promptTokens, q.requestedTokens, q.class]),
  );
});

test('bench --suite serve: bad traffic flags and a trace past the context exit 2 naming the field', async () => {
  const cases: [string[], string][] = [
    [['--suite', 'serve', '--rate', '-1'], 'rate'],
    [['--suite', 'serve', '--rate', '2', '--concurrency', '3'], 'give --rate or --concurrency, not both'],
    [['--suite', 'serve', '--slo', 'ttft:abc'], '--slo'],
    [['--suite', 'serve', '--batching', 'sometimes'], '--batching must be continuous, static, both'],
    [['--suite', 'serve', '--max-batch', '64'], 'maxBatch'],
    [['--suite', 'quick', '--rate', '2'], '--rate applies to --suite serve'],
    [['--suite', 'serve', '--target', 'ftp://h/v1'], '--target: "ftp://h/v1" must be an http'],
    [['--suite', 'serve', '--target', 'http://h:8000/v1/completions'], 'ending in /v1'],
    [['--suite', 'serve', '--served-model', 'm'], '--served-model names the model of a --target URL'],
  ];
  for (const [args, message] of cases) {
    const run = await runCli('bench/bench.ts', args);
    expect(run.code, args.join(' ')).toBe(2);
    expect(run.stderr, args.join(' ')).toContain(message);
  }
  const trace = join(dir, 'long.jsonl');
  writeFileSync(
    trace,
    `${JSON.stringify({ arrival_s: 0, prompt_len: 1000, output_len: 100, prefix_id: null, class: 'rag', priority: 0 })}\n`,
  );
  const long = await runCli(
    'bench/bench.ts',
    ['--suite', 'serve', '--trace', trace, '--no-autotune'],
    120_000,
  );
  expect(long.code).toBe(2);
  expect(long.stderr).toContain(
    "needs 1100 tokens of context (prompt + output), past the model's maxSeqLen of 1024",
  );
  const broken = join(dir, 'broken.jsonl');
  writeFileSync(broken, '{"arrival_s": 0, "prompt_len": -3}\n');
  const bad = await runCli('bench/bench.ts', ['--suite', 'serve', '--trace', broken]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--trace .*line 1/);
});
