/**
 * The load-test views, driven as a user would. A `--suite serve` result (makeServeResult: ci-tiny
 * on SwiftShader, continuous against static batching) imported into the compare view with a
 * `--suite batch` one, or opened from history into the run view, must show the A/B headline, the
 * goodput line, the identical-to-solo check, the tables, and every chart: batch slots over time,
 * the request waterfall, TTFT split into queue and prefill, latency CDFs, KV and batch over time,
 * the rate sweep (its own variant) and B-scaling; a request whose tokens differ from its solo run
 * must be shown loudly. The form offers the serve and batch suites and reports bad values at the
 * serve fields. Screenshots at desktop and phone width go to e2e/artifacts/serve-*.png.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import type { BenchResult } from '../src/results/schema.ts';
import type { ServeResult, ServeRun } from '../src/spec/workloads/serve-result.ts';
import { makeBatchScalingResult } from '../test-support/fixtures/batch.ts';
import { makeServeResult } from '../test-support/fixtures/serve.ts';
import {
  DESKTOP,
  expectNoHorizontalOverflow,
  openFromHistory,
  openPage,
  PHONE,
  panel,
  saveToHistory,
  screenshot,
  watchConsole,
} from './page-helpers.ts';

/** The chart panels of the load-test section, by test id (without the view's prefix) and screenshot name. */
const PANELS = [
  ['serve-timeline-chart', 'timeline'],
  ['serve-waterfall-chart', 'waterfall'],
  ['serve-split-chart', 'ttft-split'],
  ['serve-cdf-chart', 'cdf'],
  ['serve-kv-chart', 'kv'],
] as const;

function serveOf(r: BenchResult): ServeResult {
  if (!r.serve) throw new Error('the fixture has no serve section');
  return r.serve;
}

function arm(s: ServeResult, label: string): ServeRun {
  const run = s.runs.find((r) => r.label === label);
  if (!run) throw new Error(`no arm ${label}`);
  return run;
}

/** A latency as the page prints it: one decimal under 100 ms. */
const ms = (x: number) => x.toFixed(x < 100 ? 1 : 0);

async function writeFixture(name: string, r: BenchResult): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'serve-ui-')), name);
  writeFileSync(file, JSON.stringify(r));
  return file;
}

/** The figures and charts every view of the default fixture must show, read off the fixture itself. */
async function expectFixtureShown(page: Page, prefix: string, r: BenchResult): Promise<void> {
  const s = serveOf(r);
  const id = (name: string) => (prefix ? `${prefix}-${name}` : name);
  const continuous = arm(s, 'continuous');
  const batch = arm(s, 'static');
  await expect(page.getByTestId(id('serve-summary'))).toBeVisible();

  // The A/B headline: output tokens/s ratio and short requests' p95 TTFT in both arms.
  const ratio = continuous.summary.outputTokensPerSec / batch.summary.outputTokensPerSec;
  expect(ratio).toBeGreaterThan(1);
  await expect(page.getByTestId(id('serve-tile-throughput'))).toContainText(`${ratio.toFixed(2)}×`);
  await expect(page.getByTestId(id('serve-tile-throughput'))).toContainText(
    `${continuous.summary.outputTokensPerSec.toFixed(1)} against ${batch.summary.outputTokensPerSec.toFixed(1)}`,
  );
  const shortP95 = (run: ServeRun) => run.byClass.short.ttftMs?.p95 ?? 0;
  await expect(page.getByTestId(id('serve-tile-short-ttft'))).toContainText(
    `${ms(shortP95(continuous))} / ${ms(shortP95(batch))} ms`,
  );
  await expect(page.getByTestId(id('serve-tile-goodput'))).toContainText(
    `${continuous.summary.goodputRps.toFixed(2)} req/s`,
  );
  await expect(page.getByTestId(id('serve-tile-identical'))).toContainText('40 / 40');
  await expect(page.getByTestId(id('serve-identical'))).toContainText(
    'every finished request’s tokens equal the same request run alone (continuous 20, static 20)',
  );
  await expect(page.getByTestId(id('serve-ab')).locator('li')).toHaveText([
    `continuous against static: ${ratio.toFixed(2)}× the output tokens/s (${continuous.summary.outputTokensPerSec.toFixed(1)} against ${batch.summary.outputTokensPerSec.toFixed(1)}); short requests' p95 TTFT ${shortP95(continuous).toFixed(0)} against ${shortP95(batch).toFixed(0)} ms`,
  ]);
  await expect(page.getByTestId(id('serve-goodput'))).toContainText(
    `(SLOs: TTFT ≤ 500 ms, TPOT ≤ 50 ms): saturation (calibration) ${s.runs[0].summary.goodputRps.toFixed(2)} req/s of ${s.runs[0].summary.requestsPerSec.toFixed(2)}`,
  );
  await expect(page.getByTestId(id('serve-slowdown'))).toContainText(
    `continuous: TTFT ×${continuous.slowdown?.ttft.p50.toFixed(2)} median`,
  );

  // The runs table: one row per arm, as the Markdown report has it.
  const table = page.getByTestId(id('serve-runs-table'));
  await expect(table.locator('tbody tr')).toHaveCount(s.runs.length);
  const c = continuous.summary;
  await expect(table.locator('tbody tr').nth(1).locator('th, td')).toHaveText([
    'continuous',
    `Poisson ${continuous.arrival.rateRps?.toFixed(2)} req/s`,
    (continuous.durationMs / 1000).toFixed(1),
    c.requestsPerSec.toFixed(2),
    c.outputTokensPerSec.toFixed(1),
    c.goodputRps.toFixed(2),
    `${ms(c.ttftMs?.p50 ?? 0)} / ${ms(c.ttftMs?.p95 ?? 0)}`,
    `${ms(c.tpotMs?.p50 ?? 0)} / ${ms(c.tpotMs?.p95 ?? 0)}`,
    `${ms(c.e2eMs?.p50 ?? 0)} / ${ms(c.e2eMs?.p95 ?? 0)}`,
    ms(c.queueMs?.p95 ?? 0),
    '1',
    '0.0%',
    String(c.prefillTokensComputed),
    'yes (20)',
  ]);
  // Latency by class: every class of every arm.
  await expect(page.getByTestId(id('serve-class-table')).locator('tbody tr')).toHaveCount(
    s.runs.reduce((n, run) => n + Object.keys(run.byClass).length, 0),
  );
  await expect(page.getByTestId(id('serve-clock'))).toHaveText(`Clock: ${s.clock}`);

  // Slots: one bar per stay of both A/B arms, one cross for the preempted stay.
  const timeline = page.getByTestId(id('serve-timeline-chart'));
  await expect(timeline.locator('g.serve-stay > *')).toHaveCount(
    continuous.slots.length + batch.slots.length,
  );
  await expect(timeline.locator('g.serve-stay-ended > *')).toHaveCount(1);
  for (const text of [
    'short',
    'rag',
    'long-gen',
    'preempted (or failed) here',
    'continuous: 8 slots',
    'static: 8 slots',
  ]) {
    await expect(timeline).toContainText(text);
  }
  // The waterfall: fastest, median and slowest TTFT of each class of the continuous arm.
  const waterfall = page.getByTestId(id('serve-waterfall-chart'));
  await expect(waterfall.locator('g.serve-waterfall-bar > *')).toHaveCount(9 * 3);
  await expect(waterfall).toContainText('prefill (admitted → first token)');
  await page.getByTestId(id('serve-waterfall-pick')).selectOption('preempted');
  await expect(waterfall.locator('g.serve-waterfall-bar > *')).toHaveCount(3);
  await expect(waterfall).toContainText('preempted 1×');
  await page.getByTestId(id('serve-waterfall-arm')).selectOption({ label: 'static' });
  await expect(waterfall).toContainText('No finished request matches.');
  await page.getByTestId(id('serve-waterfall-pick')).selectOption('mix');
  await page.getByTestId(id('serve-waterfall-arm')).selectOption({ label: 'continuous' });
  // TTFT split: a queue and a prefill bar per class and arm, the mean TTFT written at the end.
  const split = page.getByTestId(id('serve-split-chart'));
  await expect(split.locator('g.serve-split-bar > *')).toHaveCount(3 * 2 * 2);
  await expect(split).toContainText('queue (arrival → admitted)');
  // CDFs: one line per class and arm, for TTFT, then E2E.
  const cdf = page.getByTestId(id('serve-cdf-chart'));
  await expect(cdf.locator('g.serve-cdf-line > *')).toHaveCount(3 * 2);
  await expect(cdf).toContainText('SLO 500 ms');
  await expect(cdf).toContainText('Time to first token (ms, log)');
  await page.getByTestId(id('serve-cdf-metric')).selectOption('e2e');
  await expect(cdf).toContainText('End-to-end latency (ms, log)');
  await expect(cdf.locator('g.serve-cdf-line > *')).toHaveCount(3 * 2);
  await page.getByTestId(id('serve-cdf-metric')).selectOption('ttft');
  // KV and batch: a KV line and a running line per arm, with the pool and the batch limit.
  const kv = page.getByTestId(id('serve-kv-chart'));
  await expect(kv.locator('g.serve-kv-line')).toHaveCount(2);
  await expect(kv.locator('g.serve-running-line')).toHaveCount(2);
  await expect(kv).toContainText(`pool: ${continuous.timeline[0].kvTotalPages} pages`);
  await expect(kv).toContainText('max batch 8');
  // No sweep in this variant: its panel stays hidden.
  await expect(panel(page, id('serve-sweep-chart'))).toBeHidden();
  // Every chart can be downloaded.
  for (const [testId] of PANELS) await expect(page.getByTestId(`${id(testId)}-svg`)).toBeEnabled();
}

test('an imported load test and B-scaling run show their figures and every chart', async ({ page }) => {
  const problems = watchConsole(page);
  const serve = makeServeResult();
  const batch = makeBatchScalingResult();
  const files = [
    await writeFixture('ci-tiny-serve.json', serve),
    await writeFixture('smollm2-batch.json', batch),
  ];
  await openPage(page);
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles(files);
  await expect(page.getByTestId('compare-list').locator('li')).toHaveCount(2);
  await expect(page.getByTestId('compare-serve-summary').locator('h2')).toHaveText(
    '#1 google/swiftshader: load test',
  );
  await expectFixtureShown(page, 'compare', serve);

  // B-scaling of the batch run: the table and both plots, the bound drawn beside the measurement.
  const points = batch.batchScaling ?? [];
  await expect(page.getByTestId('compare-batch-summary').locator('h2')).toHaveText(
    '#2 Apple M2 Pro: B-scaling',
  );
  await expect(page.getByTestId('compare-batch-table').locator('tbody tr')).toHaveCount(points.length);
  const chart = page.getByTestId('compare-batch-scaling-chart');
  await expect(chart.locator('g.batch-step-point > *')).toHaveCount(points.length);
  for (const text of [
    'Decode step time',
    'Decode throughput',
    'roofline bound (FLOPs, bytes, submit)',
    '32',
  ]) {
    await expect(chart).toContainText(text);
  }
  await expect(page.getByTestId('compare-batch-headline')).toContainText(
    `B = 32 decodes ${(points[points.length - 1].tokensPerSec / points[0].tokensPerSec).toFixed(1)}× the tokens/s of B = 1`,
  );

  // The download is one SVG holding every stacked part: the legend and each arm's slots.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('compare-serve-timeline-chart-svg').click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/-slots\.svg$/);
  const svg = readFileSync(await download.path(), 'utf8');
  for (const text of ['Batch slots over time', 'continuous: 8 slots', 'static: 8 slots', 'long-gen']) {
    expect(svg).toContain(text);
  }

  await screenshot(page, 'serve-compare.png');
  await screenshot(page.getByTestId('compare-serve-summary'), 'serve-summary.png');
  for (const [testId, name] of PANELS)
    await screenshot(panel(page, `compare-${testId}`), `serve-${name}.png`);
  await screenshot(panel(page, 'compare-batch-scaling-chart'), 'serve-batch-scaling.png');

  await page.setViewportSize(PHONE);
  await expect(page.getByTestId('compare-serve-timeline-chart').locator('svg').first()).toHaveAttribute(
    'width',
    /^3\d\d$/,
  );
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'serve-compare-390.png');
  await screenshot(page.getByTestId('compare-serve-summary'), 'serve-summary-390.png');
  for (const [testId, name] of PANELS) {
    await screenshot(panel(page, `compare-${testId}`), `serve-${name}-390.png`);
  }
  await screenshot(panel(page, 'compare-batch-scaling-chart'), 'serve-batch-scaling-390.png');
  expect(problems).toEqual([]);
});

test('a load test from history: its section in the run view, a differing output shown loudly', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const base = makeServeResult();
  const s = serveOf(base);
  // Request 7 of the static arm left its solo run's tokens at token 12.
  const result = makeServeResult(
    {},
    {
      serve: {
        ...s,
        runs: s.runs.map((run) =>
          run.label === 'static'
            ? {
                ...run,
                identical: { checked: 20, mismatches: 1, firstMismatches: ['request 7: token 12 differs'] },
              }
            : run,
        ),
      },
    },
  );
  await openPage(page);
  await saveToHistory(page, result);
  await page.reload();
  const history = page.getByTestId('history');
  await expect(history).toContainText('0 points · load test, 3 arms');
  await history.getByRole('button', { name: /^Open the run of/ }).click();
  await expect(page.getByTestId('tab-run')).toHaveAttribute('aria-selected', 'true');
  await expect(page.locator('.run-content')).toContainText('this run measured a load test');
  await expect(page.getByTestId('roofline')).toBeHidden();
  await expect(page.locator('.summary')).toContainText('load test: 3 arms, 60 requests');

  const alert = page.getByTestId('serve-mismatch');
  await expect(alert).toBeVisible();
  await expect(alert).toContainText('1 request produced tokens different from the same request run alone.');
  await expect(alert).toContainText('static: 1 of 20 differ: request 7: token 12 differs');
  await expect(page.getByTestId('serve-identical')).toHaveCount(0);
  await expect(page.getByTestId('serve-tile-identical')).toContainText('39 / 40');
  await expect(page.getByTestId('serve-tile-identical')).toHaveClass(/warn/);
  const row = page.getByTestId('serve-runs-table-2');
  await expect(row).toHaveClass(/serve-row-mismatch/);
  await expect(row.locator('td').last()).toHaveText('NO: 1 of 20 differ');
  // The charts still draw.
  await expect(page.getByTestId('serve-timeline-chart').locator('g.serve-stay > *').first()).toBeVisible();
  await screenshot(page, 'serve-run.png');
  await screenshot(page.getByTestId('serve-summary'), 'serve-run-mismatch.png');
  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'serve-run-390.png');
  expect(problems).toEqual([]);
});

test('a load test run over HTTP: the interface-against-inference table and the network segment of TTFT', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const result = makeServeResult({ http: true });
  const s = serveOf(result);
  const http = arm(s, 'continuous · HTTP, loopback');
  const inProcess = arm(s, 'continuous');
  await openFromHistory(page, result);
  const table = page.getByTestId('serve-http-table');
  await expect(table).toBeVisible();
  const cells = table.locator('tbody tr').first().locator('td');
  await expect(cells.first()).toHaveText('continuous · HTTP, loopback');
  // The fixture puts every token 2.5 ms later at the client: Δ TTFT p50 is +2.5 ms.
  expect((http.summary.ttftMs?.p50 ?? 0) - (inProcess.summary.ttftMs?.p50 ?? 0)).toBeCloseTo(2.5, 9);
  await expect(cells.nth(4)).toHaveText('+2.5');
  await expect(cells.nth(9)).toHaveText('2.5');
  await expect(cells.last()).toHaveText(`yes (${http.matchesInProcess?.checked})`);
  await expect(page.locator('.serve-body')).toContainText("from the server's /metrics over the arm");
  // The TTFT split gains the network segment, and the arm over HTTP has its own bars.
  const split = page.getByTestId('serve-split-chart');
  await expect(split).toContainText('network and HTTP (client ↔ server)');
  await expect(split).toContainText('continuous · HTTP, loopback');
  await screenshot(page.getByTestId('serve-http-table'), 'serve-http-table.png');
  await screenshot(split, 'serve-http-split.png');
  await page.setViewportSize(PHONE);
  await screenshot(page, 'serve-http-390.png');
  await expectNoHorizontalOverflow(page);
  expect(problems).toEqual([]);
});

test('the prefix-cache arms and the rate sweep', async ({ page }) => {
  const problems = watchConsole(page);
  const cached = makeServeResult({ prefixCache: true });
  const swept = makeServeResult({ sweep: true });
  const files = [
    await writeFixture('serve-cache.json', cached),
    await writeFixture('serve-sweep.json', swept),
  ];
  await openPage(page);
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles(files);
  await expect(page.getByTestId('compare-list').locator('li')).toHaveCount(2);

  // The prefix cache: the drop in prefill tokens and the mean TTFT, on against off.
  const runs = serveOf(cached).runs;
  const off = arm(serveOf(cached), 'continuous, prefix cache off');
  const on = arm(serveOf(cached), 'continuous, prefix cache on');
  const drop = 1 - on.summary.prefillTokensComputed / off.summary.prefillTokensComputed;
  const summaries = page.getByTestId('compare-serve-summary');
  await expect(summaries).toHaveCount(2);
  const first = summaries.first();
  await expect(first.getByTestId('compare-serve-tile-prefix')).toContainText(`−${(drop * 100).toFixed(1)}%`);
  await expect(first.getByTestId('compare-serve-ab')).toContainText(
    `prefix cache on against off (continuous): prefill tokens computed ${on.summary.prefillTokensComputed} against ${off.summary.prefillTokensComputed}`,
  );
  await expect(first.getByTestId('compare-serve-ab').locator('li')).toHaveCount(4);
  // Four A/B arms: four slot panels and a line per class and arm in the CDFs.
  const views = page.locator('.serve-view', { has: page.getByTestId('compare-serve-summary') });
  const cachedView = views.first();
  await expect(cachedView.getByTestId('compare-serve-timeline-chart')).toContainText(
    'static, prefix cache on: 8 slots',
  );
  await expect(cachedView.locator('g.serve-cdf-line > *')).toHaveCount(3 * 4);
  await expect(cachedView.getByTestId('compare-serve-runs-table').locator('tbody tr')).toHaveCount(
    runs.length,
  );

  // The sweep: a mark per swept run, the highest rate meeting the SLOs marked.
  const sweep = serveOf(swept).sweep;
  const sweptView = views.nth(1);
  const chart = sweptView.getByTestId('compare-serve-sweep-chart');
  await expect(chart).toBeVisible();
  await expect(chart.locator('g.serve-sweep-point > *')).toHaveCount(sweep?.points.length ?? 0);
  await expect(chart).toContainText(`max rate meeting SLOs: ${sweep?.maxRateMeetingSlo?.toFixed(2)} req/s`);
  await expect(chart).toContainText('TTFT SLO 500 ms');
  await expect(sweptView.getByTestId('compare-serve-tile-max-rate')).toContainText(
    `${sweep?.maxRateMeetingSlo?.toFixed(2)} req/s`,
  );
  // Without A/B arms the per-arm charts draw the swept runs.
  await expect(sweptView.getByTestId('compare-serve-timeline-chart')).toContainText('synchronous: 8 slots');

  await screenshot(page, 'serve-variants.png');
  const sweepPanel = sweptView.locator('figure.chart-panel', {
    has: page.getByTestId('compare-serve-sweep-chart'),
  });
  await screenshot(sweepPanel, 'serve-sweep.png');
  await screenshot(cachedView.getByTestId('compare-serve-summary'), 'serve-prefix-summary.png');
  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(sweepPanel, 'serve-sweep-390.png');
  expect(problems).toEqual([]);
});

test('the form: the serve suite shows its own fields and reports bad values at them', async ({ page }) => {
  const problems = watchConsole(page);
  await openPage(page);
  const fields = page.getByTestId('serve-fields');
  await expect(fields).toBeHidden();
  await page.getByLabel('Suite').selectOption('serve');
  await expect(fields).toBeVisible();
  for (const label of ['Prefill lengths L', 'Decode depths', 'Tokens to generate', 'Repetitions']) {
    await expect(page.getByLabel(label)).toBeHidden();
  }
  await expect(page.getByLabel('Request rate (req/s)')).toHaveValue('');
  await expect(page.getByLabel('Requests', { exact: true })).toHaveValue('40');
  await expect(page.getByLabel('Batching')).toHaveValue('both');
  await expect(page.getByLabel('Prefix cache')).toHaveValue('off');
  await expect(page.getByLabel('Shared prefix tokens')).toHaveValue('0');
  await expect(page.getByLabel('SLOs')).toHaveValue('');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // Values each refused at its own field, all at once.
  await page.getByLabel('Request rate (req/s)').fill('fast');
  await expect(page.locator('.field-rate .field-error')).toHaveText(
    'Enter req/s (e.g. 2.5), inf, or nothing',
  );
  await expect(page.getByLabel('Request rate (req/s)')).toHaveAttribute('aria-invalid', 'true');
  await page.getByLabel('SLOs').fill('ttft:500,latency:3');
  await expect(page.locator('.field-slo .field-error')).toHaveText(
    'SLO "latency:3": unknown metric "latency" (known: ttft, tpot, e2el)',
  );
  await page.getByLabel('Requests', { exact: true }).fill('0');
  await expect(page.locator('.field-requests .field-error')).toContainText('>=1');
  await expect(page.locator('.field-error:visible')).toHaveCount(3);
  // An invalid form does not start a run.
  await page.getByTestId('run').click();
  await expect(page.getByTestId('progress')).not.toHaveClass(/active/);
  await screenshot(page.locator('.run-card'), 'serve-form-errors.png');
  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(page.locator('.run-card'), 'serve-form-errors-390.png');
  await page.setViewportSize(DESKTOP);

  await page.getByLabel('Request rate (req/s)').fill('-1');
  await expect(page.locator('.field-rate .field-error')).toBeVisible();
  await page.getByLabel('SLOs').fill('ttft:0');
  await expect(page.locator('.field-slo .field-error')).toContainText(
    'ttft needs a number of milliseconds > 0',
  );
  await page.getByLabel('Shared prefix tokens').fill('5000');
  await expect(page.locator('.field-prefixTokens .field-error')).toHaveText(
    "a 5000-token prefix does not fit the model's maxSeqLen of 1024",
  );
  // Fixed, the form is valid again.
  await page.getByLabel('Request rate (req/s)').fill('2.5');
  await page.getByLabel('SLOs').fill('ttft:500,tpot:50');
  await page.getByLabel('Shared prefix tokens').fill('128');
  await page.getByLabel('Requests', { exact: true }).fill('20');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // B-scaling: its depth, tokens and repetitions, no prefill lengths; typing keeps the suite.
  await page.getByLabel('Suite').selectOption('batch');
  await expect(fields).toBeHidden();
  await expect(page.getByLabel('Prefill lengths L')).toBeHidden();
  await expect(page.getByLabel('Depth', { exact: true })).toHaveValue('8');
  await page.getByLabel('Depth', { exact: true }).fill('16');
  await expect(page.getByLabel('Suite')).toHaveValue('batch');
  await page.getByLabel('Depth', { exact: true }).fill('2000');
  await expect(page.locator('.field-depths .field-error')).toContainText(
    "exceeds the model's maxSeqLen of 1024",
  );
  await page.getByLabel('Depth', { exact: true }).fill('8');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // Back to a sweep: its fields come back as they were.
  await page.getByLabel('Suite').selectOption('quick');
  await expect(page.getByLabel('Prefill lengths L')).toHaveValue('16, 32, 64, 128, 256');
  await expect(page.getByLabel('Decode depths')).toHaveValue('16, 128, 512');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);
  expect(problems).toEqual([]);
});
