/**
 * The weight-format views, driven as a user would, in one test (the page loads once): the form's
 * weights field and the format sweep's list, with bad values reported at the field; a `--suite
 * formats` result (makeFormatsResult) opened from history into the run view and imported as a file
 * into the compare view, each showing the formats in the run header, the format comparison chart
 * with its two labelled lines, the roofline's formats joined per pass, and the error table by slice
 * with its caveat above and its definitions below. Screenshots at desktop and phone width go to
 * e2e/artifacts/formats-*.png.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import type { BenchResult } from '../src/results/schema.ts';
import { QUALITY_CAVEAT, QUALITY_DEFINITIONS } from '../src/spec/workloads/formats.ts';
import { makeFormatsResult } from '../test-support/fixtures/formats.ts';
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

/** The format sweep's figures every view must show, read off the fixture itself. */
async function expectFormatsShown(page: Page, prefix: string, r: BenchResult): Promise<void> {
  const id = (name: string) => (prefix ? `${prefix}-${name}` : name);
  const formats = r.formats ?? [];
  const quality = r.quality ?? [];
  expect(formats.map((f) => f.format)).toEqual(['f32', 'f16', 'int8', 'int4']);
  expect(quality).toHaveLength(15);

  const table = page.getByTestId(id('formats-table'));
  await expect(table.locator('tbody th')).toHaveText(['f32', 'f16', 'int8', 'int4']);
  const int4 = formats[3];
  await expect(table.locator('tbody tr').last().locator('th, td')).toHaveText([
    'int4',
    (int4.linearBytes / 2 ** 20).toFixed(2),
    `${(int4.decodeBytesPerToken / 2 ** 20).toFixed(2)} MiB`,
    int4.tpotMs.toFixed(3),
    int4.tokensPerSec.toFixed(1),
    `${int4.tpotRatio?.toFixed(2)}×`,
    int4.prefillMs.toFixed(2),
    `${int4.prefillRatio?.toFixed(2)}×`,
  ]);

  // Every format on every slice, never an average; the caveat above, the definitions below.
  const errors = page.getByTestId(id('quality-table'));
  await expect(errors.locator('tbody tr')).toHaveCount(quality.length);
  await expect(errors.locator('tbody th')).toHaveText(quality.map((q) => q.format));
  await expect(errors.locator('tbody td:nth-of-type(1)')).toHaveText(quality.map((q) => q.slice));
  const diverged = quality.find((q) => q.divergenceStep !== null);
  if (!diverged) throw new Error('the fixture has no diverging slice');
  const at = quality.indexOf(diverged);
  await expect(errors.locator('tbody tr').nth(at).locator('th, td')).toHaveText([
    diverged.format,
    diverged.slice,
    `${diverged.prompts} × ${diverged.steps}`,
    diverged.promptTokens.join(', '),
    diverged.relErr.toExponential(2),
    `${(diverged.top1Agreement * 100).toFixed(1)}%`,
    diverged.klDiv.toExponential(2),
    String(diverged.divergenceStep),
  ]);
  const caveat = page.getByTestId(id('quality-caveat'));
  await expect(caveat).toHaveText(`Error against f32 (this run: seeded random weights). ${QUALITY_CAVEAT}`);
  const definitions = page.getByTestId(id('quality-definitions'));
  await expect(definitions).toHaveText(QUALITY_DEFINITIONS);
  const top = async (el: typeof caveat) => (await el.boundingBox())?.y ?? Number.NaN;
  expect(await top(caveat)).toBeLessThan(await top(errors));
  expect(await top(errors)).toBeLessThan(await top(definitions));

  // The comparison chart: one mark per format, each named, and both lines labelled with their GB/s.
  const chart = page.getByTestId(id('formats-chart'));
  await expect(chart.locator('g.format-point > *')).toHaveCount(formats.length);
  const f32 = formats[0];
  // f32's bandwidth is between 10 and 100 GB/s here, which the chart writes with one decimal.
  const f32GBps = (f32.decodeBytesPerToken / f32.tpotMs / 1e6).toFixed(1);
  for (const text of [`f32’s bandwidth, ${f32GBps} GB/s`, 'copy roof: bytes ÷ 200 GB/s measured', 'int4']) {
    await expect(chart).toContainText(text);
  }

  // The roofline: every point, labelled with its format, each pass's formats one joined series.
  const roofline = page.getByTestId(id('roofline'));
  await expect(roofline.locator('[data-mark=point]')).toHaveCount(r.points.length);
  await expect(roofline.locator('g.roofline-format-line > *')).toHaveCount(2);
  for (const text of ['d=64 f32', 'L=64 f32', 'int4', 'Formats f32, f16, int8, int4, joined per pass.']) {
    await expect(roofline).toContainText(text);
  }
  // The time charts draw one series per format, so their legends name the formats.
  await expect(page.getByTestId(id('tpot-chart'))).toContainText('int8');
}

test('weight formats: the form’s weights field, the comparison chart, the roofline and the error by slice', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const result = makeFormatsResult();
  await openPage(page);
  await saveToHistory(page, result);
  await page.reload();

  // The form: one format normally; a list of them, checked at the field, with the format sweep.
  const weights = page.getByLabel('Weights', { exact: true });
  await expect(weights).toHaveValue('f32');
  await weights.selectOption('int4');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);
  await page.getByLabel('Suite').selectOption('formats');
  await expect(weights).toBeHidden();
  const list = page.getByLabel('Formats to sweep');
  // Every format by default, the GGUF types among them (a model whose rows cannot hold one skips it).
  await expect(list).toHaveValue('f32, f16, int8, int4, q8_0, q4_0, q4_k');
  await expect(page.getByLabel('Prompt length L')).toHaveValue('64');
  await expect(page.getByLabel('Decode depth')).toHaveValue('64');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);
  await list.fill('f32, int3');
  await expect(page.locator('.field-weightsList .field-error')).toHaveText(
    'value 2: Invalid option: expected one of "f32"|"f16"|"int8"|"int4"|"q8_0"|"q4_0"|"q4_k"',
  );
  await list.fill('int8, int8');
  await expect(page.locator('.field-weightsList .field-error')).toHaveText('a format is listed twice');
  await expect(list).toHaveAttribute('aria-invalid', 'true');
  await page.getByLabel('Prompt length L').fill('64, 128');
  await expect(page.locator('.field-prefill .field-error')).toHaveText(
    'the format sweep times one prompt length; give one',
  );
  await expect(page.getByLabel('Suite')).toHaveValue('formats');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('progress')).not.toHaveClass(/active/);
  await screenshot(page.locator('.run-card'), 'formats-form-errors.png');
  await list.fill('f16 int4');
  await page.getByLabel('Prompt length L').fill('64');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // The run view, from history: the header names the formats, the points table has a format column.
  const history = page.getByTestId('history');
  await expect(history).toContainText('f32, f16, int8, int4 (format sweep)');
  await history.getByRole('button', { name: /^Open the run of/ }).click();
  await expect(page.locator('.summary')).toContainText('weights f32, f16, int8, int4 (format sweep)');
  await expect(page.getByTestId('results-table').locator('thead th').first()).toHaveText('format');
  await expectFormatsShown(page, '', result);
  await screenshot(page, 'formats-run.png');
  await screenshot(page.getByTestId('formats-summary'), 'formats-summary.png');
  await screenshot(panel(page, 'formats-chart'), 'formats-chart.png');
  await screenshot(panel(page, 'roofline'), 'formats-roofline.png');

  // The compare view, from the file: validated as any import, its format in its entry.
  const file = join(mkdtempSync(join(tmpdir(), 'formats-ui-')), 'smollm2-formats.json');
  writeFileSync(file, JSON.stringify(result));
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles(file);
  await expect(page.getByTestId('compare-list')).toContainText('weights f32, f16, int8, int4 (format sweep)');
  await expect(page.getByTestId('compare-formats-summary').locator('h2')).toHaveText(
    '#1 Apple M2 Pro: weight formats',
  );
  await expectFormatsShown(page, 'compare', result);
  await screenshot(page, 'formats-compare.png');

  await page.setViewportSize(PHONE);
  await expect(page.getByTestId('compare-formats-chart').locator('svg').last()).toHaveAttribute(
    'width',
    /^3\d\d$/,
  );
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'formats-compare-390.png');
  await screenshot(page.getByTestId('compare-formats-summary'), 'formats-summary-390.png');
  await screenshot(panel(page, 'compare-formats-chart'), 'formats-chart-390.png');
  await screenshot(panel(page, 'compare-roofline'), 'formats-roofline-390.png');
  await page.getByTestId('tab-run').click();
  await expectNoHorizontalOverflow(page);
  await screenshot(page.locator('.run-card'), 'formats-form-390.png');
  await page.setViewportSize(DESKTOP);
  expect(problems).toEqual([]);
});

/** A trained model's task rows for two slices and two formats, their intervals Wilson's by hand. */
function taskRows(): NonNullable<BenchResult['taskQuality']> {
  const row = (
    format: 'f32' | 'int4',
    slice: string,
    kind: 'json' | 'text',
    cases: number,
    score: number,
    score95: [number, number],
    delta: number | null,
  ) => ({
    format,
    slice,
    kind,
    metric: kind === 'json' ? ('valid JSON' as const) : ('next-token accuracy' as const),
    cases,
    score,
    score95,
    deltaPoints: delta,
    verdict: delta === null ? null : delta < -5 ? ('degraded' as const) : ('acceptable' as const),
    kld:
      delta === null
        ? null
        : { positions: 96, mean: 7e-3, median: 5e-3, p99: 3e-2, max: 4e-2, sameTop: 0.94 },
  });
  // 8 of 10 valid: Wilson 95% 49.0–94.3%; 5 of 10: 23.7–76.3%; 50 and 49 of 96 tokens.
  return [
    row('f32', 'json', 'json', 10, 0.8, [0.49, 0.943], null),
    row('int4', 'json', 'json', 10, 0.5, [0.237, 0.763], -30),
    row('f32', 'prose', 'text', 96, 50 / 96, [0.422, 0.619], null),
    row('int4', 'prose', 'text', 96, 49 / 96, [0.412, 0.608], -1.04),
  ];
}

test('a trained model’s format sweep: the task table by slice and its chart, in the run view and across runs in Compare', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const result = makeFormatsResult(['f32', 'int4'], { quality: [], taskQuality: taskRows() });
  await openFromHistory(page, result);
  const table = page.getByTestId('task-quality-table');
  await expect(table.locator('tbody tr')).toHaveCount(4);
  await expect(table.locator('tbody tr').nth(1)).toContainText('degraded');
  // The chart: one mark per slice and format, the formats in its legend, a slice per row.
  const chart = page.getByTestId('task-quality-chart');
  await expect(chart.locator('g.task-point circle')).toHaveCount(4);
  await expect(chart).toContainText('f32');
  await expect(chart).toContainText('int4');
  await expect(chart).toContainText('prose');
  // Hovering a mark tips its figures.
  await chart.locator('g.task-point circle').first().hover();
  await expect(chart).toContainText('95% interval');
  await screenshot(panel(page, 'task-quality-chart'), 'task-quality-chart.png');

  // Two runs in Compare: each file's table and chart, side by side.
  const dir = mkdtempSync(join(tmpdir(), 'task-ui-'));
  const files = ['a', 'b'].map((n) => join(dir, `trained-${n}.json`));
  for (const f of files) writeFileSync(f, JSON.stringify(result));
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles(files);
  await expect(page.getByTestId('compare-list').locator('li')).toHaveCount(2);
  const compared = page.getByTestId('compare-task-quality-chart');
  await expect(compared).toHaveCount(2);
  await expect(compared.locator('g.task-point circle')).toHaveCount(8);
  await screenshot(page, 'task-quality-compare.png');
  expect(problems).toEqual([]);
});
