/**
 * The fusion workload's views, driven as a user would, in one test (the page loads once): the
 * form's fused-graph checkbox (on by default); a quick-suite result with the fused-against-
 * unfused table (makeFusionResult) opened from history, showing the graph in the run header, the
 * table with each graph's dispatches per layer, times and ratios, the graph named on its points'
 * rows, and the time charts' legends. Screenshots go to e2e/artifacts/fusion-*.png.
 */
import { expect, test } from '@playwright/test';
import { makeFusionResult } from '../test-support/fixtures/fusion.ts';
import {
  DESKTOP,
  expectNoHorizontalOverflow,
  openPage,
  PHONE,
  saveToHistory,
  screenshot,
  watchConsole,
} from './page-helpers.ts';

test('fused against unfused graph: the form’s checkbox, the table, the graph on points and legends', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const result = makeFusionResult();
  const [fused, unfused] = result.fusion ?? [];
  await openPage(page);
  await saveToHistory(page, result);
  await page.reload();

  // The form: the fused graph by default; unticked, the spec asks for the unfused one.
  await page.locator('details.advanced summary').click();
  const fuse = page.getByRole('checkbox', { name: /^Fused graph/ });
  await expect(fuse).toBeChecked();
  await fuse.uncheck();
  await expect(page.locator('.field-error:visible')).toHaveCount(0);

  // The run view, from history.
  await page
    .getByTestId('history')
    .getByRole('button', { name: /^Open the run of/ })
    .click();
  await expect(page.locator('.summary')).toContainText('· fused graph ·');
  const summary = page.getByTestId('fusion-summary');
  await expect(summary.locator('h2')).toHaveText('Fused against unfused graph');
  await expect(page.getByTestId('fusion-headline')).toHaveText(
    `The fused graph runs 6 dispatches per layer in a decode step against 16 unfused, and takes ${fused.tpotRatio?.toFixed(2)}× its time per token (${fused.tpotMs.toFixed(3)} against ${unfused.tpotMs.toFixed(3)} ms).`,
  );
  const table = page.getByTestId('fusion-table');
  await expect(table.locator('tbody th')).toHaveText(['fused', 'unfused']);
  await expect(table.locator('tbody tr').first().locator('td')).toHaveText([
    '6',
    '6',
    '183, 183',
    `${fused.prefillMs.toFixed(2)} (L=256)`,
    `${fused.tpotMs.toFixed(3)} (depth 128)`,
    `${fused.prefillRatio?.toFixed(2)}×`,
    `${fused.tpotRatio?.toFixed(2)}×`,
  ]);
  await expect(table.locator('tbody tr').last().locator('td').nth(1)).toHaveText('16');
  // The fusion workload's points are named by graph in the points and latency tables.
  const passes = page.getByTestId('results-table').locator('tbody tr td:first-child');
  await expect(passes).toHaveText([...result.points.map((p) => (p.graph ? `${p.pass} ${p.graph}` : p.pass))]);
  await expect(page.getByTestId('latency-table').locator('tbody th').last()).toHaveText('decode unfused');
  // The time charts draw the sweeps and each arm of the fusion workload as their own series, named
  // as such in the legend; the roofline names each arm's points by graph.
  await expect(page.getByTestId('tpot-chart')).toContainText('sweeps');
  await expect(page.getByTestId('tpot-chart')).toContainText('fusion workload: fused graph');
  await expect(page.getByTestId('tpot-chart')).toContainText('fusion workload: unfused graph');
  await expect(page.getByTestId('roofline')).toContainText('unfused');
  await screenshot(page, 'fusion-run.png');
  await screenshot(summary, 'fusion-summary.png');

  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(summary, 'fusion-summary-390.png');
  await page.setViewportSize(DESKTOP);
  expect(problems).toEqual([]);
});
