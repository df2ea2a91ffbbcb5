/**
 * The KV matrix on the page, in one test: the form's KV type and window fields (a window the model
 * cannot take is refused at the field), a `--suite kv` result (makeKvResult) opened from history
 * into the run view (its cell table, error by position, targets and three charts) and imported
 * into Compare (every cell of every run in one table). Screenshots go to e2e/artifacts/kv-*.png.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { makeKvResult } from '../test-support/fixtures/kv.ts';
import {
  expectNoHorizontalOverflow,
  openPage,
  PHONE,
  panel,
  saveToHistory,
  screenshot,
  watchConsole,
} from './page-helpers.ts';

test('KV cache: the type and window fields, the cell table, targets and charts, and the cells joined in Compare', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const result = makeKvResult();
  const kv = result.kv;
  if (!kv) throw new Error('the fixture has no kv section');
  const errorPoints = kv.cells.reduce((n, c) => n + c.error.length, 0);
  await openPage(page);
  await saveToHistory(page, result);
  await page.reload();

  // The form: f32 and full attention by default; a window within one page is refused at the field.
  const form = page.locator('form.config-form');
  await form.locator('details.advanced > summary').click();
  const dtype = form.getByLabel('KV type');
  await expect(dtype).toHaveValue('f32');
  const window = form.getByLabel('Window (tokens)');
  await expect(window).toHaveValue('');
  await window.fill('8');
  await expect(form.locator('.field-window .field-error')).toHaveText(
    'a window of 8 is shorter than one KV page of 16 tokens',
  );
  await dtype.selectOption('int8');
  await window.fill('256');
  await expect(form.locator('.field-error:visible')).toHaveCount(0);
  await screenshot(form.locator('details.advanced'), 'kv-form.png');

  // The run view, from history.
  await page
    .getByTestId('history')
    .getByRole('button', { name: /^Open the run of/ })
    .click();
  await expect(page.locator('.summary')).toContainText(`KV matrix: ${kv.cells.length} cells`);
  const cells = page.getByTestId('kv-cells-table');
  await expect(cells.locator('tbody tr')).toHaveCount(kv.cells.length);
  // MHA int8 with full attention: 36720 bytes a token, 0.266× f32's, 1536 its longest depth.
  await expect(cells.locator('thead th').last()).toHaveText('TPOT ms @ 1536');
  await expect(cells.locator('tbody tr').nth(2).locator('th, td').first()).toHaveText('9 (MHA)');
  await expect(cells.locator('tbody tr').nth(2).locator('td').nth(0)).toHaveText('int8');
  await expect(cells.locator('tbody tr').nth(2).locator('td').nth(4)).toHaveText('0.266×');
  await expect(page.getByTestId('kv-error-table').locator('tbody tr')).toHaveCount(errorPoints);
  await expect(page.getByTestId('kv-targets-table').locator('tbody tr .tag-ok')).toHaveCount(8);
  // One dot per cell and depth (memory, TPOT), and per measured part of the context (error).
  const depths = kv.cells[0].pagesAt.length;
  await expect(page.locator('[data-testid=kv-memory-chart] g.kv-memory-point > *')).toHaveCount(
    kv.cells.length * depths,
  );
  await expect(page.locator('[data-testid=kv-tpot-chart] g.kv-tpot-point > *')).toHaveCount(
    kv.cells.length * depths,
  );
  await expect(page.locator('[data-testid=kv-error-chart] g.kv-error-point > *')).toHaveCount(errorPoints);
  await expect(page.getByTestId('kv-memory-chart')).toContainText('GQA: 3 KV heads');
  await expect(page.getByTestId('kv-memory-chart')).toContainText('window of 256 tokens');
  await screenshot(page, 'kv-run.png');
  await screenshot(page.getByTestId('kv-summary'), 'kv-summary.png');
  for (const name of ['memory', 'tpot', 'error'])
    await screenshot(panel(page, `kv-${name}-chart`), `kv-${name}-chart.png`);

  // Compare: the imported file's cells, one row per device × cell.
  const file = join(mkdtempSync(join(tmpdir(), 'kv-ui-')), 'smollm2-kv.json');
  writeFileSync(file, JSON.stringify(result));
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles(file);
  const joined = page.getByTestId('compare-kv-table');
  await expect(joined.locator('tbody tr')).toHaveCount(kv.cells.length);
  await expect(joined.locator('tbody tr').first().locator('td').nth(2)).toHaveText('MHA 9 · f32 · full');
  await screenshot(page.getByTestId('compare-kv'), 'kv-compare.png');

  // At phone width the panels stack and nothing sticks out sideways.
  await page.getByTestId('tab-run').click();
  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(panel(page, 'kv-memory-chart'), 'kv-memory-chart-390.png');
  expect(problems).toEqual([]);
});
