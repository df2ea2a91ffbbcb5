/**
 * The speculative-decoding views, driven as a user would. A `--suite spec` result (makeSpecResult:
 * ci-tiny on SwiftShader) imported into the compare view, or opened from history into the run
 * view, must show the verify-K curve with its knee, the verify passes on the roofline, speed-up
 * against acceptance rate, acceptance by draft position and the table of runs, with the fixture's
 * own figures; an output that differs from greedy decode must be shown loudly. The form offers the
 * spec suite with its own fields and reports bad values at them. Screenshots of every view at
 * desktop and phone width go to e2e/artifacts/spec-*.png.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import type { BenchResult } from '../src/results/schema.ts';
import type { SpecResult } from '../src/spec/workloads/speculative-result.ts';
import { SPEEDUP_FORMULA } from '../src/speculative/predict.ts';
import { makeSpecResult } from '../test-support/fixtures/speculative.ts';
import {
  DESKTOP,
  expectNoHorizontalOverflow,
  openPage,
  PHONE,
  panel,
  saveToHistory,
  screenshot,
  watchConsole,
} from './page-helpers.ts';

/** The panels of the speculative section, by test id (without the view's prefix) and screenshot name. */
const PANELS = [
  ['spec-curve-chart', 'curve'],
  ['spec-roofline', 'roofline'],
  ['spec-speedup-chart', 'speedup'],
  ['spec-position-chart', 'positions'],
] as const;

function speculative(r: BenchResult): SpecResult {
  if (!r.speculative) throw new Error('the fixture has no speculative section');
  return r.speculative;
}

/** The figures every view of the fixture must show, read off the fixture itself. */
async function expectFixtureShown(page: Page, prefix: string, r: BenchResult): Promise<void> {
  const s = speculative(r);
  const id = (name: string) => (prefix ? `${prefix}-${name}` : name);
  const summary = page.getByTestId(id('spec-summary'));
  await expect(summary).toBeVisible();
  await expect(page.getByTestId(id('spec-tile-knee'))).toContainText('k = 4');
  const best = s.runs.filter((x) => !x.synthetic).sort((a, b) => b.speedup - a.speedup)[0];
  expect(best.label).toBe('ngram(1-4)');
  await expect(page.getByTestId(id('spec-tile-best'))).toContainText(`${best.speedup.toFixed(2)}×`);
  await expect(page.getByTestId(id('spec-tile-best'))).toContainText('ngram(1-4) · repetitive');
  await expect(page.getByTestId(id('spec-knees')).locator('li')).toHaveText([
    'depth 64: knee k = 4 (1.30× a decode step; k = 8 costs 1.60×)',
    'depth 256: knee k = 8 (1.45× a decode step; k = 16 costs 2.90×)',
  ]);

  // The table: one row per run, the synthetic drafter marked, the figures as the fixture has them.
  const table = page.getByTestId(id('spec-runs-table'));
  await expect(table.locator('tbody tr')).toHaveCount(s.runs.length);
  await expect(table.locator('tbody tr', { hasText: 'synthetic — calibration only' })).toHaveCount(
    s.runs.filter((x) => x.synthetic).length,
  );
  const first = s.runs[0];
  await expect(table.locator('tbody tr').first().locator('th, td')).toHaveText([
    'ngram(1-4)',
    'repetitive',
    '4',
    `${(first.acceptanceRate * 100).toFixed(1)}%`,
    first.meanAcceptanceLength.toFixed(2),
    '0.060',
    '11.80',
    first.tpotMs.toFixed(3),
    '8.310',
    `${first.speedup.toFixed(2)}×`,
    `${first.predictedSpeedup.toFixed(2)}×`,
    'yes',
  ]);
  await expect(page.getByTestId(id('spec-formula'))).toHaveText(`Predicted speed-up: ${SPEEDUP_FORMULA}`);
  await expect(page.getByTestId(id('spec-clock'))).toHaveText(`Clock: ${s.clock}`);

  // The verify-K curve: a line per depth, the knee rule labelled, each depth's knee marked.
  const curve = page.getByTestId(id('spec-curve-chart'));
  await expect(curve.locator('svg').last()).toBeVisible();
  for (const text of [
    'depth 64',
    'depth 256',
    'knee rule: 1.5× a decode step',
    'knee k=4 (depth 64)',
    'knee k=8 (depth 256)',
  ]) {
    await expect(curve).toContainText(text);
  }
  // The verify passes on the roofline: one mark per curve point, under the run's own roofs.
  const roofline = page.getByTestId(id('spec-roofline'));
  await expect(roofline.locator('[data-mark=verify]')).toHaveCount(s.verifyCurve.length);
  for (const text of ['verify k, d=64', 'verify k, d=256', 'k=1', 'k=16', 'ridge', 'FMA peak 15.9 GFLOP/s']) {
    await expect(roofline).toContainText(text);
  }
  // Speed-up against acceptance: one mark per run, the free-drafter line and the rule at 1×.
  const speedup = page.getByTestId(id('spec-speedup-chart'));
  await expect(speedup.locator('g.spec-speedup-point > *')).toHaveCount(s.runs.length);
  for (const text of ['predicted, free drafter, K = 4', '1× = plain decode', 'ngram(1-4) · repetitive']) {
    await expect(speedup).toContainText(text);
  }
  // Acceptance by position: a bar per draft position of every run, each run named.
  const positions = page.getByTestId(id('spec-position-chart'));
  await expect(positions.locator('g.spec-position-bar > *')).toHaveCount(
    s.runs.reduce((n, x) => n + x.perPosition.length, 0),
  );
  await expect(positions).toContainText('oracle(p=0.8, synthetic) · repetitive');
  await expect(positions).toContainText('89%');
}

test('an imported spec result shows the curve, the roofline, speed-ups, acceptance and the runs', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const result = makeSpecResult();
  const file = join(mkdtempSync(join(tmpdir(), 'spec-ui-')), 'ci-tiny-spec.json');
  writeFileSync(file, JSON.stringify(result));
  await openPage(page);
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles(file);
  await expect(page.getByTestId('compare-list').locator('li')).toHaveCount(1);
  await expect(page.getByTestId('compare-spec-summary').locator('h2')).toHaveText(
    '#1 google/swiftshader: speculative decoding',
  );
  await expectFixtureShown(page, 'compare', result);
  await expect(page.getByTestId('compare-spec-mismatch')).toHaveCount(0);

  await screenshot(page, 'spec-compare.png');
  await screenshot(page.getByTestId('compare-spec-summary'), 'spec-summary.png');
  for (const [testId, name] of PANELS) await screenshot(panel(page, `compare-${testId}`), `spec-${name}.png`);

  await page.setViewportSize(PHONE);
  await expect(page.getByTestId('compare-spec-roofline').locator('svg').last()).toHaveAttribute(
    'width',
    /^3\d\d$/,
  );
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'spec-compare-390.png');
  await screenshot(page.getByTestId('compare-spec-summary'), 'spec-summary-390.png');
  for (const [testId, name] of PANELS) {
    await screenshot(panel(page, `compare-${testId}`), `spec-${name}-390.png`);
  }
  expect(problems).toEqual([]);
});

test('a spec run from history: its section in the run view, a differing output shown loudly', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const base = makeSpecResult();
  const s = speculative(base);
  // The last run's output left greedy decode's at token 17 of its first prompt.
  const result = makeSpecResult({
    speculative: {
      ...s,
      runs: s.runs.map((run, i) =>
        i === s.runs.length - 1 ? { ...run, identical: false, firstMismatch: { prompt: 0, index: 17 } } : run,
      ),
    },
  });
  await openPage(page);
  await saveToHistory(page, result);
  await page.reload();
  const history = page.getByTestId('history');
  await expect(history).toContainText('0 points · 6 speculative runs');
  await history.getByRole('button', { name: /^Open the run of/ }).click();
  await expect(page.getByTestId('tab-run')).toHaveAttribute('aria-selected', 'true');
  await expectFixtureShown(page, '', result);
  // A run of speculative decoding alone: its section stands in for the empty point charts.
  await expect(page.locator('.run-content')).toContainText('this run measured speculative decoding');
  await expect(page.getByTestId('roofline')).toBeHidden();
  await expect(page.locator('.summary')).toContainText(
    'speculative decoding: 6 runs, 10 verify-curve points',
  );

  const alert = page.getByTestId('spec-mismatch');
  await expect(alert).toBeVisible();
  await expect(alert).toContainText('1 of 6 speculative outputs differ from plain greedy decode.');
  await expect(alert).toContainText('truncated:1 · random: first differs at prompt 0, token 17 (from 0)');
  const bad = page.getByTestId('spec-run-5');
  await expect(bad).toHaveClass(/spec-row-mismatch/);
  await expect(bad.locator('td').last()).toHaveText('NO: prompt 0, token 17 (from 0)');
  await expect(page.getByTestId('spec-tile-identical')).toContainText('5 / 6');
  await expect(page.getByTestId('spec-tile-identical')).toHaveClass(/warn/);
  await screenshot(page, 'spec-run.png');
  await screenshot(page.getByTestId('spec-summary'), 'spec-run-mismatch.png');
  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'spec-run-390.png');
  expect(problems).toEqual([]);
});

test('the form: the spec suite shows its own fields and reports bad values at them', async ({ page }) => {
  const problems = watchConsole(page);
  await openPage(page);
  const fields = page.getByTestId('spec-fields');
  await expect(fields).toBeHidden();
  await page.getByLabel('Suite').selectOption('spec');
  await expect(fields).toBeVisible();
  await expect(page.getByLabel('Prefill lengths L')).toBeHidden();
  await expect(page.getByRole('checkbox', { name: /Profile every repetition/ })).toBeHidden();
  // In the spec suite the depths and tokens are the curve's depths and the tokens per prompt.
  await expect(page.getByLabel('Verify-curve depths')).toHaveValue('64');
  await expect(page.getByLabel('Tokens per prompt')).toHaveValue('64');
  await expect(page.getByLabel('Drafters')).toHaveValue('ngram, oracle:0.8, truncated:1');
  await expect(page.getByLabel('Draft length K')).toHaveValue('4');
  await expect(page.getByLabel('Verify sizes k')).toHaveValue('1, 2, 4, 8, 16');
  await expect(page.getByRole('checkbox', { name: /Adaptive K/ })).not.toBeChecked();
  await expect(page.locator('.field-error:visible')).toHaveCount(0);
  // Typing the curve's depths keeps the suite: they are the spec suite's own.
  await page.getByLabel('Verify-curve depths').fill('64, 256');
  await expect(page.getByLabel('Suite')).toHaveValue('spec');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // A depth the model cannot hold with the largest verify after it, at the depths field.
  await page.getByLabel('Verify-curve depths').fill('64, 2000');
  await expect(page.locator('.field-depths .field-error')).toHaveText(
    "depth 2000 + a verify of 16 tokens exceeds the model's maxSeqLen of 1024",
  );
  await page.getByLabel('Verify-curve depths').fill('64');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // Values the spec schema refuses, each at its own field, all at once.
  const drafters = page.getByLabel('Drafters');
  await drafters.fill('ngram, foo');
  await expect(page.locator('.field-drafters .field-error')).toHaveText(
    'value 2: "foo" is not a drafter: use ngram, ngram:MIN-MAX, model:PRESET, truncated:N or oracle:P',
  );
  await expect(drafters).toHaveAttribute('aria-invalid', 'true');
  const k = page.getByLabel('Draft length K');
  await k.fill('17');
  await expect(page.locator('.field-k .field-error')).toContainText('<=16');
  await expect(k).toHaveAttribute('aria-invalid', 'true');
  await page.getByLabel('Verify sizes k').fill('1, 18');
  await expect(page.locator('.field-verifyKs .field-error')).toContainText('value 2: ');
  await expect(page.locator('.field-verifyKs .field-error')).toContainText('<=17');
  // A temperature: empty is greedy; a word, or 0 (the schema's T > 0), is refused at its field.
  const temperature = page.getByLabel('Temperature');
  await expect(temperature).toHaveValue('');
  await temperature.fill('warm');
  await expect(page.locator('.field-temperature .field-error')).toHaveText(
    'Enter a temperature (e.g. 0.8), or nothing for greedy',
  );
  await temperature.fill('0');
  await expect(page.locator('.field-temperature .field-error')).toContainText('>0');
  // All four at once, each at its field.
  await expect(page.locator('.field-drafters .field-error')).toBeVisible();
  await expect(page.locator('.field-error:visible')).toHaveCount(4);
  // An invalid form does not start a run.
  await page.getByTestId('run').click();
  await expect(page.getByTestId('progress')).not.toHaveClass(/active/);
  await screenshot(page.locator('.run-card'), 'spec-form-errors.png');
  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(page.locator('.run-card'), 'spec-form-errors-390.png');
  await page.setViewportSize(DESKTOP);

  await temperature.fill('0.8');
  await expect(page.locator('.field-temperature .field-error:visible')).toHaveCount(0);
  await temperature.fill('');
  // A truncation as deep as ci-tiny (2 layers) is refused before the engine sees it.
  await drafters.fill('ngram, truncated:2');
  await k.fill('16');
  await page.getByLabel('Verify sizes k').fill('1, 4, 17');
  await expect(page.locator('.field-drafters .field-error')).toContainText(
    'truncated:2 keeps 2 layers of a 2-layer target',
  );
  await drafters.fill('ngram, oracle:0.5');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // Back to a sweep: the spec fields go, the prefill lengths and the sweep labels come back.
  await page.getByLabel('Suite').selectOption('quick');
  await expect(fields).toBeHidden();
  await expect(page.getByLabel('Prefill lengths L')).toHaveValue('16, 32, 64, 128, 256');
  await expect(page.getByRole('checkbox', { name: /Profile every repetition/ })).toBeVisible();
  await expect(page.getByLabel('Decode depths')).toHaveValue('16, 128, 512');
  await expect(page.getByLabel('Tokens to generate')).toHaveValue('16');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);
  expect(problems).toEqual([]);
});
