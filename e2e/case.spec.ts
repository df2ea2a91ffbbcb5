/**
 * `--suite case` as a user runs it (10 requests an arm, for time), then its result opened from
 * history into the page: the diagnosis, the arms, the pools and the four charts. Every figure the
 * test checks is recounted from the arms' own requests and timelines, not read back from the report.
 * The same run replays the case against a server at a URL (`--target`): this project's server,
 * started here as a user would start llama-server, so the CLI treats it as any OpenAI server: it
 * calibrates the case on it, then replays the baseline and the incident.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startApiServer } from '../bench/api-process.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import { SERVE_DEFAULTS } from '../src/spec/workloads/serve-settings.ts';
import { runCli } from './cli.ts';
import { openFromHistory, panel, screenshot, watchConsole } from './page-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'case-'));

test('bench --suite case: the diagnosis from the incident’s figures, each remedy and all four, every request as if alone; the page view', async ({
  page,
}) => {
  test.setTimeout(300_000);
  const out = join(dir, 'case.json');
  const server = await startApiServer({
    preset: 'ci-tiny',
    port: 0,
    maxBatch: SERVE_DEFAULTS.maxBatch,
    tokenBudget: SERVE_DEFAULTS.tokenBudget,
    pageSize: 16,
  });
  const url = server.info.url;
  let run: Awaited<ReturnType<typeof runCli>>;
  try {
    run = await runCli(
      'bench/bench.ts',
      [
        '--suite',
        'case',
        '--requests',
        '10',
        '--runtime',
        'node',
        '--no-autotune',
        '--out',
        out,
        '--target',
        url,
        '--http-timeout',
        '60',
      ],
      260_000,
    );
  } finally {
    await server.close();
  }
  expect(run.code, run.stderr).toBe(0);
  for (const step of [
    'Queue share of TTFT',
    'Concurrency',
    'KV usage at its peak',
    'Length distribution by class',
    'Root cause',
  ])
    expect(run.stdout).toContain(`**${step}.**`);
  const r = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  const runs = r.caseStudy?.runs ?? [];
  const arms = runs.filter((x) => x.caseRole && x.target?.kind !== 'http');
  expect(arms.map((x) => x.caseRole)).toEqual([
    'baseline',
    'incident',
    'routing',
    'prefix-cache',
    'capacity',
    'kv-budget',
    'all',
  ]);
  const [baseline, incident, routing, cache, capacity, budget, all] = arms;
  for (const a of arms) {
    expect(a.identical?.mismatches, a.label).toBe(0);
    expect(a.identical?.checked, a.label).toBe(a.summary.completed);
    expect(a.summary.completed, a.label).toBe(10);
  }
  // The baseline has the short class only; the incident adds the summaries, at most 3/4 of the context.
  expect(new Set(baseline.requests.map((q) => q.class))).toEqual(new Set(['qa']));
  const summaries = incident.requests.filter((q) => q.class === 'summary');
  expect(summaries.length).toBeGreaterThan(0);
  for (const q of summaries) expect(q.promptTokens).toBeGreaterThanOrEqual(640);
  // The printed queue share, recounted: Σ queue ÷ Σ TTFT of the incident's short requests.
  const short = incident.requests.filter((q) => q.class === 'qa');
  const queue = short.reduce((a, q) => a + ((q.admittedMs ?? 0) - q.arrivalMs), 0);
  const ttft = short.reduce((a, q) => a + (q.tokenTimesMs[0] - q.arrivalMs), 0);
  expect(run.stdout).toContain(
    `The queue is ${((100 * queue) / ttft).toFixed(0)}% of the short requests' TTFT in the incident`,
  );
  // Each remedy is the setting it says: summaries routed to the long pool, the cache hitting the
  // system prompt, twice the pool and budget, long prompts cut to the budget.
  for (const q of routing.requests) expect(q.pool).toBe(q.class === 'summary' ? 'long' : 'short');
  expect(cache.summary.prefixHitRate).toBeGreaterThan(0);
  expect(capacity.kvTokens).toBe(2 * incident.kvTokens);
  expect(capacity.tokenBudget).toBe(2 * incident.tokenBudget);
  const cap = budget.kvBudget?.tokens ?? 0;
  expect(cap).toBe(256);
  for (const q of budget.requests.filter((x) => x.class === 'summary')) {
    expect(q.truncatedTokens ?? 0).toBeGreaterThan(0);
    expect(q.promptTokens + q.outputTokens - 1).toBeLessThanOrEqual(cap);
  }
  expect(all.pools?.length).toBe(2);
  expect(all.prefixCache).toBe(true);
  // The targets are judged, met or not.
  const names = (r.targets ?? []).map((t) => t.name);
  expect(names).toContain('case study: the incident multiplies the short requests’ TTFT p99');
  expect(names).toContain('case study: all four remedies, short TTFT p99 against the baseline');

  // Over the URL: the calibration burst first, then the baseline and the incident, request for
  // request the same tokens as in process, their arrivals scaled by this engine's saturation
  // throughput over the server's (recounted from both bursts' finished requests and durations).
  const http = runs.filter((x) => x.target?.kind === 'http');
  expect(http.map((x) => x.label)).toEqual([
    `saturation (calibration) · HTTP, ${url}`,
    `${baseline.label} · HTTP, ${url}`,
    `${incident.label} · HTTP, ${url}`,
  ]);
  const calIn = runs.find((x) => x.experiment === 'calibration' && x.target?.kind !== 'http');
  const throughput = (x: (typeof runs)[number] | undefined) =>
    (x?.requests.filter((q) => q.status === 'finished').length ?? 0) / ((x?.durationMs ?? 0) / 1000);
  const scale = throughput(calIn) / throughput(http[0]);
  for (const [x, inProcess] of [
    [http[1], baseline],
    [http[2], incident],
  ] as const) {
    expect(x.matchesInProcess, x.label).toEqual({ checked: 10, mismatches: 0 });
    expect(x.target?.timeScale ?? 0).toBeCloseTo(scale, 6);
    // Sent when scheduled (the scale itself is checked exactly above): within 50 ms on an idle
    // machine, but one request went 83 ms late in two runs while another SwiftShader run shared
    // the two cores (the same 83 ms both times, not yet explained), so the bound is a busy machine's.
    inProcess.requests.forEach((q, k) => {
      expect(Math.abs(x.requests[k].arrivalMs - q.arrivalMs * scale)).toBeLessThan(250);
    });
  }
  expect(run.stdout).toContain(
    `**The case over HTTP, ${url}** (the same requests, calibrated on this server`,
  );

  // The page: opened from history, the diagnosis beside the charts.
  const problems = watchConsole(page);
  await openFromHistory(page, r);
  await expect(page.getByTestId('case-summary')).toBeVisible();
  await expect(page.getByTestId('case-diagnosis').locator('li')).toHaveCount(5);
  await expect(page.getByTestId('case-table').locator('tbody tr')).toHaveCount(7);
  // The routing arm and all four: each pool's row, its requests counted.
  const poolRows = page.getByTestId('case-pools-table').locator('tbody tr');
  await expect(poolRows).toHaveCount(4);
  await expect(poolRows.nth(1).locator('td').nth(1)).toHaveText('long');
  await expect(poolRows.nth(1).locator('td').nth(3)).toHaveText(
    String(routing.requests.filter((q) => q.pool === 'long' && q.status === 'finished').length),
  );
  const charts = ['case-ttft-chart', 'case-split-chart', 'case-kv-chart', 'case-pools-chart'];
  for (const id of charts) await expect(page.getByTestId(id).locator('svg').first()).toBeVisible();
  // One line per pool in the routing arm's KV plot.
  await expect(page.getByTestId('case-pools-chart').locator('.serve-kv-pool-line')).toHaveCount(2);
  await screenshot(page.getByTestId('case-summary'), 'case-summary.png');
  for (const id of charts) await screenshot(panel(page, id), `${id}.png`);
  expect(problems).toEqual([]);
});
