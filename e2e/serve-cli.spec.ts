import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { summarize } from '../src/serve/metrics.ts';
import { traceFromJsonl } from '../src/serve/traffic.ts';
import { percentile } from '../src/stats.ts';
import { NATIVE, runCli } from './cli.ts';
import { openFromHistory, screenshot } from './page-helpers.ts';

// Its tests share nothing (each writes its own files), and the file is among the longest: in
// parallel mode the two workers split its tests instead of one running them all at the end.
test.describe.configure({ mode: 'parallel' });

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
      ...NATIVE,
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
    // Sessions and the KV budget (issue 36): caught before any engine starts.
    [
      ['--suite', 'serve', '--sessions', '4', '--turns', '3..40'],
      '--turns 3..40: a session of 40 turns can reach',
    ],
    [['--suite', 'serve', '--sessions', '4', '--tool-wait', 'gamma:3'], '--tool-wait gamma:3: unknown form'],
    [
      ['--suite', 'serve', '--turns', '3..6'],
      '--turns and --tool-wait shape agent sessions: add --sessions N',
    ],
    [['--suite', 'serve', '--sessions', '4', '--concurrency', '2'], '--sessions runs open loop'],
    [['--suite', 'serve', '--kv-budget', '8'], '--kv-budget 8: below one KV page (16 tokens)'],
    [['--suite', 'serve', '--kv-budget', 'lots'], '--kv-budget lots: give TOKENS'],
    [['--suite', 'serve', '--kv-budget-policy', 'truncate'], 'add --kv-budget TOKENS'],
    [
      ['--suite', 'serve', '--pools', 'short:0.5,long:0.4', '--route', 'prompt>200'],
      '--pools short:0.5,long:0.4: the shares sum to 0.9, not 1',
    ],
    [
      ['--suite', 'serve', '--pools', 'short:0.5,long:0.5', '--route', 'tokens>200'],
      '--route tokens>200: unknown field "tokens"',
    ],
    [['--suite', 'serve', '--pools', 'short:0.5,long:0.5'], '--pools needs a rule to route by'],
    [
      ['--suite', 'serve', '--pools', 'short:0.5,long:0.5', '--route', 'prompt>9', '--max-batch', '1'],
      '1 batch slots (--max-batch) cannot be split',
    ],
    [['--suite', 'case', '--rate', '3'], '--rate applies to --suite serve'],
  ];
  // Each exits before any engine starts: a Node start and a parse (the built CLI's, about 0.4 s).
  // Four at a time, since a start waits on loading its modules as much as it computes.
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const runs = await Promise.all(batch.map(([args]) => runCli('bench/bench.ts', args)));
    batch.forEach(([args, message], k) => {
      expect(runs[k].code, args.join(' ')).toBe(2);
      expect(runs[k].stderr, args.join(' ')).toContain(message);
    });
  }
  const trace = join(dir, 'long.jsonl');
  writeFileSync(
    trace,
    `${JSON.stringify({ arrival_s: 0, prompt_len: 1000, output_len: 100, prefix_id: null, class: 'rag', priority: 0 })}\n`,
  );
  const long = await runCli(
    'bench/bench.ts',
    [...NATIVE, '--suite', 'serve', '--trace', trace, '--no-autotune'],
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

/**
 * Agent sessions as the issue asks them (fewer and shorter, for time): multi-turn sessions whose
 * turns resend the whole history after a tool wait, with the prefix cache off and on, in-process
 * and over HTTP to this project's server (started with a prefix cache for the cache-on arm). With
 * the cache, a later turn computes little more than what it adds; without it, the whole history.
 */
test('bench --suite serve --sessions: per-turn TTFT and tool wait, the cache saves the re-prefill, the same sessions over HTTP; the page’s table', async ({
  page,
}) => {
  test.setTimeout(240_000);
  const out = join(dir, 'sessions.json');
  const traceOut = join(dir, 'sessions.jsonl');
  const run = await runCli(
    'bench/bench.ts',
    [
      '--suite',
      'serve',
      '--sessions',
      '5',
      '--turns',
      '2..4',
      '--tool-wait',
      'lognormal:150:0.5',
      '--rate',
      '3',
      '--prefix-cache',
      'both',
      '--batching',
      'continuous',
      '--no-autotune',
      '--runtime',
      'node',
      '--target',
      'loopback',
      '--out',
      out,
      '--trace-out',
      traceOut,
    ],
    230_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('**Agent sessions: where a session’s time goes**');
  const r = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  const runs = r.serve?.runs ?? [];
  expect(runs.map((x) => x.label)).toEqual([
    'continuous, prefix cache off',
    'continuous, prefix cache on',
    'continuous, prefix cache off · HTTP, loopback',
    'continuous, prefix cache on · HTTP, loopback',
  ]);
  const [off, on, httpOff, httpOn] = runs;
  for (const x of [off, on]) expect(x.identical).toMatchObject({ mismatches: 0 });
  for (const x of [httpOff, httpOn]) {
    expect(x.matchesInProcess?.mismatches).toBe(0);
    expect(x.matchesInProcess?.checked).toBe(x.summary.completed);
  }
  for (const x of runs) {
    const s = x.sessions;
    expect(s?.sessions).toBe(5);
    expect(s?.completed).toBe(5);
    // The split adds up to the mean duration, recounted from the requests.
    const bySession = new Map<number, typeof x.requests>();
    for (const q of x.requests)
      bySession.set(q.session?.id ?? -1, [...(bySession.get(q.session?.id ?? -1) ?? []), q]);
    const durations = [...bySession.values()].map((turns) => {
      const last = turns.reduce((a, q) => ((q.session?.turn ?? 0) > (a.session?.turn ?? 0) ? q : a));
      const first = turns.find((q) => q.session?.turn === 1);
      return (last.finishMs ?? 0) - (first?.arrivalMs ?? 0);
    });
    const meanDuration = durations.reduce((a, d) => a + d, 0) / durations.length;
    const sp = s?.split;
    expect(
      (sp?.queueMs ?? 0) + (sp?.prefillMs ?? 0) + (sp?.decodeMs ?? 0) + (sp?.toolWaitMs ?? 0),
    ).toBeCloseTo(meanDuration, 6);
    // Each later turn arrives no sooner than its tool wait after the turn before it.
    for (const turns of bySession.values()) {
      const sorted = [...turns].sort((a, b) => (a.session?.turn ?? 0) - (b.session?.turn ?? 0));
      for (let i = 1; i < sorted.length; i++) {
        expect(sorted[i].arrivalMs - (sorted[i - 1].finishMs ?? 0)).toBeGreaterThanOrEqual(
          (sorted[i].session?.toolWaitMs ?? 0) - 1,
        );
        // The prompt holds the whole history: the previous prompt, its answer, the new tokens.
        expect(sorted[i].promptTokens).toBe(
          sorted[i - 1].promptTokens + sorted[i - 1].outputTokens + (sorted[i].session?.newTokens ?? 0),
        );
      }
    }
  }
  // Without the cache a later turn computes its whole history; with it (in-process and on the
  // server), at most 1.2× what the turn adds (the target).
  const later = (x: (typeof runs)[number]) =>
    (x.sessions?.byTurn ?? []).filter((t) => t.turn > 1 && t.finished > 0);
  expect(later(off).length).toBeGreaterThan(0);
  for (const t of later(off)) expect(t.computedTokens).toBe(t.promptTokens);
  for (const x of [on, httpOn])
    for (const t of later(x)) expect(t.computedOverNewMax ?? 99).toBeLessThanOrEqual(1.2);
  // The server without a cache reports none: unknown, not zero.
  for (const t of later(httpOff)) expect(t.computedTokens).toBeNull();
  const trace = traceFromJsonl(readFileSync(traceOut, 'utf8'));
  expect(trace.every((q) => q.session !== undefined)).toBe(true);
  expect(trace.filter((q) => q.session?.turn === 1)).toHaveLength(5);

  // The page: the run opened from history shows the same table by turn, arm by arm.
  await openFromHistory(page, r);
  const byTurn = page.getByTestId('serve-sessions-table');
  await expect(byTurn.locator('tbody tr')).toHaveCount(
    runs.reduce((n, x) => n + (x.sessions?.byTurn.length ?? 0), 0),
  );
  await expect(page.getByTestId('serve-sessions-table-split').locator('li')).toHaveCount(4);
  await screenshot(byTurn, 'serve-sessions-table.png');
});
