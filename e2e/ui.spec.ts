/**
 * The page, driven as a user would, on the test server (built dist/, production CSP) with the
 * SwiftShader adapter. Runs are kept small (two prompt lengths, one depth, four tokens) so the
 * suite stays within a few minutes on two cores; ?autorun=quick is covered by starting it and
 * cancelling after the first point.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Locator, type Page, test } from '@playwright/test';
import { presetConfig } from '../src/model/config.ts';
import { saveHfModel } from '../src/model/hf.ts';
import { randomWeights } from '../src/model/weights.ts';
import { MARKDOWN_POINTS_HEADER, toMarkdown } from '../src/results/export.ts';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { makeResult, scaleTimes } from '../test-support/fixtures/base.ts';
import { makeSustainedResult } from '../test-support/fixtures/sustained.ts';
import { DESKTOP, PHONE, watchConsole, withoutAutotune } from './page-helpers.ts';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
/** The report's column headers, in order. */
const HEADERS = MARKDOWN_POINTS_HEADER.split('|')
  .map((c) => c.trim())
  .filter(Boolean);

async function openPage(page: Page, query = '?preset=ci-tiny'): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.goto(`/index.html${query}`);
  await expect(page.getByTestId('device')).toContainText('Adapter:', { timeout: 30_000 });
}

async function downloadText(page: Page, trigger: Locator): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent('download'), trigger.click()]);
  const path = await download.path();
  return { name: download.suggestedFilename(), text: readFileSync(path, 'utf8') };
}

async function exportedResult(page: Page): Promise<BenchResult> {
  const { name, text } = await downloadText(page, page.getByTestId('export-json'));
  expect(name).toMatch(/\.json$/);
  return BenchResultSchema.parse(JSON.parse(text));
}

/** The Markdown report's points rows, e.g. `| prefill | 16 | 104.6 ⚠ | … |`. */
function markdownPointRows(r: BenchResult): string[] {
  const lines = toMarkdown(r).split('\n');
  const start = lines.indexOf(MARKDOWN_POINTS_HEADER) + 2;
  const end = lines.indexOf('', start);
  return lines.slice(start, end);
}

async function tableRows(table: Locator): Promise<string[]> {
  return table
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((tr) => `| ${[...tr.querySelectorAll('td')].map((td) => td.textContent).join(' | ')} |`),
    );
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
}

/** Nothing may stick out sideways at phone width (tables scroll inside their own box). */
async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

test('without WebGPU the page says what to do instead of going blank', async ({ page }) => {
  await page.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });
  });
  await page.goto('/index.html');
  const device = page.getByTestId('device');
  await expect(device).toContainText('WebGPU is not available');
  await expect(device).toContainText('How to get WebGPU');
  await expect(device).toContainText('secure context', { ignoreCase: true });
  await expect(page.getByTestId('error')).toBeVisible();
  await expect(page.getByTestId('run')).toBeDisabled();
  await screenshot(page, 'no-webgpu.png');
});

test('the form validates with the bench schema and shows each error at its field', async ({ page }) => {
  const problems = watchConsole(page);
  await openPage(page);
  const reps = page.getByLabel('Repetitions');
  await reps.fill('2');
  const repsField = page.locator('.field-reps');
  await expect(repsField.locator('.field-error')).toContainText('>=3');
  await expect(reps).toHaveAttribute('aria-invalid', 'true');
  await reps.fill('3');
  await expect(repsField.locator('.field-error')).toBeHidden();

  await page.getByLabel('Prefill lengths L').fill('16, abc');
  await expect(page.locator('.field-prefill .field-error')).toContainText('“abc” is not a whole number');
  await page.getByLabel('Prefill lengths L').fill('16, 4096');
  await expect(page.locator('.field-prefill .field-error')).toContainText(
    "prompt length 4096 exceeds the model's maxSeqLen of 1024",
  );
  await expect(page.getByLabel('Suite')).toHaveValue('custom');

  await page.getByLabel('Prefill lengths L').fill('');
  await page.getByLabel('Decode depths').fill('');
  await expect(page.locator('.form-error')).toContainText('Nothing to measure');
  await page.getByLabel('Tokens to generate').fill('1');
  await expect(page.locator('.field-gen .field-error')).toContainText('>=2');
  await screenshot(page, 'form-errors.png');
  await page.getByLabel('Tokens to generate').fill('16');
  // An invalid form does not start a run.
  await page.getByTestId('run').click();
  await expect(page.getByTestId('progress')).not.toHaveClass(/active/);

  await page.getByLabel('Suite').selectOption('quick');
  await expect(page.getByLabel('Prefill lengths L')).toHaveValue('16, 32, 64, 128, 256');
  await expect(page.locator('.field-error:visible')).toHaveCount(0);
  expect(problems).toEqual([]);
});

test('a run from the page: live progress, roofline, table, exports, history', async ({ page }) => {
  test.setTimeout(150_000);
  const problems = watchConsole(page);
  await openPage(page);
  await withoutAutotune(page);
  await page.getByLabel('Prefill lengths L').fill('16, 64');
  await page.getByLabel('Decode depths').fill('16');
  await page.getByLabel('Tokens to generate').fill('4');

  // Record every value the progress counter shows, to see it advance point by point.
  await page.evaluate(() => {
    const el = document.querySelector('[data-testid=progress]') as HTMLElement;
    const seen: string[] = [];
    (window as unknown as { doneSeen: string[] }).doneSeen = seen;
    new MutationObserver(() => {
      const done = el.dataset.done ?? '';
      if (seen[seen.length - 1] !== done) seen.push(done);
    }).observe(el, { attributes: true, attributeFilter: ['data-done'] });
  });
  await page.getByTestId('run').click();
  const progress = page.getByTestId('progress');
  await expect(page.getByTestId('cancel')).toBeEnabled();
  await expect(progress).toHaveAttribute('data-total', '3', { timeout: 30_000 });
  // Charts fill in live: the first point is on the roofline before the run ends.
  await expect(page.locator('[data-testid=roofline] [data-mark=point]').first()).toBeVisible({
    timeout: 90_000,
  });
  await expect(progress).toContainText('Done: 3 points', { timeout: 90_000 });
  const seen = await page.evaluate(() => (window as unknown as { doneSeen: string[] }).doneSeen);
  expect(seen).toEqual(expect.arrayContaining(['0', '1', '2', '3']));
  await expect(progress).toContainText('3/3');

  // One roofline mark per measured point, roofs and the overhead ceiling drawn.
  await expect(page.locator('[data-testid=roofline] [data-mark=point]')).toHaveCount(3);
  await expect(page.locator('[data-testid=roofline] g.roofline-roof > *')).toHaveCount(2);
  await expect(page.locator('[data-testid=roofline] g.roofline-overhead > *')).toHaveCount(1);
  await expect(page.getByTestId('roofline')).toContainText('ridge');
  for (const id of ['prefill-chart', 'ttft-chart', 'tpot-chart', 'itl-chart', 'kernels-chart']) {
    await expect(page.locator(`[data-testid=${id}] svg`).first(), id).toBeVisible();
  }
  await expect(page.getByTestId('device')).toContainText('Measured peaks');

  // The exported JSON validates, and the table reads exactly like the CLI's Markdown.
  const result = await exportedResult(page);
  expect(result.status).toBe('complete');
  expect(result.points.map((p) => `${p.pass} ${p.tokens}/${p.depth}`)).toEqual([
    'prefill 16/0',
    'prefill 64/0',
    'decode 1/16',
  ]);
  const table = page.getByTestId('results-table');
  expect(await tableRows(table)).toEqual(markdownPointRows(result));
  const headers = await table.locator('thead th').allTextContents();
  expect(`| ${headers.join(' | ')} |`).toBe(MARKDOWN_POINTS_HEADER);
  // Sorting by a column orders the rows by its value, then reverses.
  await table.getByRole('button', { name: 'tok/s' }).click();
  await expect(table.locator('th[aria-sort=ascending]')).toHaveText('tok/s');
  const sorted = [...result.points].sort((a, b) => a.tokensPerSec - b.tokensPerSec);
  const tokPerSec = HEADERS.indexOf('tok/s') + 1;
  await expect(table.locator(`tbody tr td:nth-child(${tokPerSec})`)).toHaveText(
    sorted.map((p) => p.tokensPerSec.toFixed(1)),
  );
  await table.getByRole('button', { name: 'tok/s' }).click();
  await expect(table.locator('th[aria-sort=descending]')).toHaveText('tok/s');
  await table.getByRole('button', { name: 'tok/s' }).click();
  await expect(table.locator('th[aria-sort]')).toHaveCount(0);
  expect(await tableRows(table)).toEqual(markdownPointRows(result));

  for (const [id, ext] of [
    ['export-jsonl', 'jsonl'],
    ['export-csv', 'csv'],
    ['export-md', 'md'],
  ] as const) {
    const file = await downloadText(page, page.getByTestId(id));
    expect(file.name.endsWith(`.${ext}`)).toBe(true);
    expect(file.text.length).toBeGreaterThan(100);
  }
  const svg = await downloadText(page, page.getByTestId('roofline-svg'));
  expect(svg.name).toMatch(/-roofline\.svg$/);
  expect(svg.text).toContain('<svg');
  expect(svg.text.match(/data-mark="point"/g)).toHaveLength(3);
  expect(svg.text).toContain('prefill'); // the legend travels with the chart
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, 'roofline.svg'), svg.text);

  // Per-kernel marks are optional and sit in their own group, so the point count is unchanged.
  await page.getByTestId('roofline-kernels').check();
  await expect(page.locator('[data-testid=roofline] g.roofline-kernel > *').first()).toBeVisible();
  await expect(page.locator('[data-testid=roofline] [data-mark=point]')).toHaveCount(3);
  await page.getByTestId('roofline-kernels').uncheck();

  // The run is kept in history (IndexedDB).
  await expect(page.getByTestId('history').locator('li')).toHaveCount(1);

  await screenshot(page, 'main.png');
  await page.setViewportSize(PHONE);
  await expect(page.locator('[data-testid=roofline] svg.bench-plot')).toHaveAttribute('width', /^3\d\d$/);
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'main-390.png');
  // At 1024 px the table's box is about 600 px wide: the columns that explain a point (its time,
  // speed, bound and % of roof) are in view before any scrolling; the rest scroll, with a shade.
  await page.setViewportSize({ width: 1024, height: 800 });
  const box = await table.locator('xpath=ancestor::div[contains(@class, "table-scroll")][1]').boundingBox();
  for (const name of ['ms', 'tok/s', 'bound', '% roof']) {
    const th = await table
      .locator('thead th', { hasText: new RegExp(`^${name.replace('/', '\\/')}$`) })
      .boundingBox();
    expect(th && box && th.x + th.width <= box.x + box.width + 0.5, `${name} in view at 1024 px`).toBe(true);
  }
  await screenshot(page, 'main-1024.png');
  await page.setViewportSize(DESKTOP);

  // A run from history joins the comparison.
  await page
    .getByTestId('history')
    .getByRole('button', { name: /Add the run .* to the comparison/ })
    .click();
  await expect(page.getByTestId('tab-compare')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('compare-list').locator('li')).toHaveCount(1);
  await expect(page.locator('.compare-view')).toContainText('Add one more run to compare');
  expect(problems).toEqual([]);
});

test('compare: imported files give a ratio table and overlaid charts; a bad file changes nothing', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const dir = mkdtempSync(join(tmpdir(), 'ui-compare-'));
  const base = makeResult();
  const laptopA = join(dir, 'laptop-a.json');
  const laptopB = join(dir, 'laptop-b.json');
  const bad = join(dir, 'bad.json');
  writeFileSync(laptopA, JSON.stringify(base));
  // Twice as fast, on another GPU, with markup in a string: it must show as text, never as HTML.
  const other = scaleTimes(
    {
      ...base,
      env: {
        ...base.env,
        browser: 'Chrome 131 <img src=x onerror="window.pwned=1">',
        adapter: { ...base.env.adapter, vendor: 'nvidia', description: 'NVIDIA GeForce RTX 4060 Laptop GPU' },
      },
    },
    0.5,
  );
  writeFileSync(laptopB, JSON.stringify(other));
  writeFileSync(bad, JSON.stringify({ ...base, points: [{ ...base.points[0], medianMs: 'fast' }] }));

  await openPage(page);
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles([laptopA, laptopB]);
  const table = page.getByTestId('compare-table');
  await expect(table).toBeVisible();
  const headers = await table.locator('thead th').allTextContents();
  expect(headers).toEqual([
    'pass',
    'L/depth',
    'B',
    'clock',
    '#1 ms',
    '#2 ms',
    '#1 tok/s',
    '#2 tok/s',
    '#2 vs #1',
  ]);
  await expect(table.locator('tbody tr')).toHaveCount(base.points.length);
  await expect(table.locator('tbody td.ratio')).toHaveText(Array(base.points.length).fill('2.00×'));
  await expect(page.locator('[data-testid=compare-roofline] [data-mark=point]')).toHaveCount(
    2 * base.points.length,
  );
  // The legend names the devices.
  await expect(page.getByTestId('compare-roofline')).toContainText('#2 NVIDIA GeForce RTX 4060 Laptop GPU');
  const list = page.getByTestId('compare-list');
  await expect(list).toContainText('<img src=x onerror="window.pwned=1">');
  await expect(list.locator('img')).toHaveCount(0);
  expect(await page.evaluate(() => 'pwned' in window)).toBe(false);

  await screenshot(page, 'compare.png');
  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'compare-390.png');
  await page.setViewportSize(DESKTOP);

  // Drag and drop works too; a third run adds its own columns.
  const third = JSON.stringify(scaleTimes(base, 0.25));
  await page.locator('.drop-zone').evaluate((zone, text) => {
    const data = new DataTransfer();
    data.items.add(new File([text], 'laptop-c.json', { type: 'application/json' }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, third);
  await expect(page.getByTestId('compare-list').locator('li')).toHaveCount(3);
  await expect(table.locator('thead th').last()).toHaveText('#3 vs #1');
  await expect(table.locator('tbody tr').first().locator('td').last()).toHaveText('4.00×');

  // A malformed file: a clear message naming it and the first problem; the comparison is untouched.
  const compareView = page.locator('.compare-view');
  const snapshot = () => compareView.evaluate((el) => el.outerHTML);
  const before = await snapshot();
  await page.getByTestId('import').setInputFiles([bad]);
  const error = page.getByTestId('error');
  await expect(error).toBeVisible();
  await expect(error).toContainText('bad.json: points.0.medianMs');
  await expect(error).toContainText('nothing was imported');
  expect(await snapshot()).toBe(before);
  // Not JSON at all.
  writeFileSync(bad, '{"schemaVersion": 1,');
  await page.getByTestId('import').setInputFiles([bad]);
  await expect(error).toContainText('bad.json: not valid JSON');
  expect(await snapshot()).toBe(before);

  // A folder (a fleet's --out-dir) ranks its devices; a file that does not validate is listed with
  // its error and left out, while the others are kept.
  await page.getByRole('button', { name: 'Clear', exact: true }).click();
  const fleet = join(dir, 'fleet');
  mkdirSync(fleet);
  writeFileSync(join(fleet, 'a.json'), JSON.stringify(base));
  writeFileSync(join(fleet, 'b.json'), JSON.stringify(other));
  writeFileSync(join(fleet, 'broken.json'), '{"schemaVersion": 1,');
  await page.getByTestId('import-folder').setInputFiles(fleet);
  await expect(page.getByTestId('compare-list').locator('li')).toHaveCount(2);
  const board = page.getByTestId('leaderboard');
  await expect(board.getByTestId('leaderboard-table')).toHaveCount(2);
  // The run at half the time ranks first in both passes.
  await expect(
    board.locator('[data-testid=leaderboard-table] tbody tr:first-child td:nth-child(2)'),
  ).toHaveText(['NVIDIA GeForce RTX 4060 Laptop GPU', 'NVIDIA GeForce RTX 4060 Laptop GPU']);
  await expect(page.getByTestId('leaderboard-skipped')).toContainText('broken.json: not valid JSON');
  await page.getByTestId('leaderboard-pass').selectOption('decode');
  await expect(board.getByTestId('leaderboard-table')).toHaveCount(1);
  await expect(board.locator('h3')).toHaveText(/decode \(decode at depth 512, batch 1\)/);
  await board.scrollIntoViewIfNeeded();
  await board.screenshot({ path: join(ARTIFACTS, 'leaderboard.png') });

  // A sustained-load result from the CLI shows its verdict, windows and chart of tok/s and roofs.
  const sustainedFile = join(dir, 'sustained.json');
  writeFileSync(sustainedFile, JSON.stringify(makeSustainedResult()));
  await page.getByTestId('import').setInputFiles([sustainedFile]);
  const verdict = page.getByTestId('compare-3-sustained-verdict');
  await expect(verdict).toHaveText(
    'Throttling: decode tok/s fell 30.0 % below the first minute from 120 s on.',
  );
  const chart = page.getByTestId('compare-3-sustained-chart');
  await expect(chart.locator('.sustained-decode circle, .sustained-decode *')).not.toHaveCount(0);
  await chart.scrollIntoViewIfNeeded();
  await page
    .getByTestId('compare-3-sustained-summary')
    .screenshot({ path: join(ARTIFACTS, 'sustained-summary.png') });
  await chart.screenshot({ path: join(ARTIFACTS, 'sustained-chart.png') });
  expect(problems).toEqual([]);
});

test('?autorun=quick starts the quick suite; cancel stops it and keeps the finished points', async ({
  page,
}) => {
  test.setTimeout(150_000);
  const problems = watchConsole(page);
  await openPage(page, '?preset=ci-tiny&autorun=quick');
  await expect(page.getByLabel('Suite')).toHaveValue('quick');
  const progress = page.getByTestId('progress');
  // 5 prefill lengths, 3 decode depths, and the fusion workload's 4 (prefill and decode per graph).
  await expect(progress).toHaveAttribute('data-total', '12', { timeout: 30_000 });
  await expect
    .poll(async () => Number(await progress.getAttribute('data-done')), { timeout: 90_000 })
    .toBeGreaterThanOrEqual(1);
  const cancelledAt = Date.now();
  await page.getByTestId('cancel').click();
  await expect(progress).toContainText('Cancelled', { timeout: 30_000 });
  // "Promptly": the engine stops after the repetition in flight.
  expect(Date.now() - cancelledAt).toBeLessThan(20_000);
  const result = await exportedResult(page);
  expect(result.status).toBe('cancelled');
  expect(result.points.length).toBeGreaterThanOrEqual(1);
  expect(result.points.length).toBeLessThan(12);
  await expect(page.getByTestId('results-table').locator('tbody tr')).toHaveCount(result.points.length);
  await expect(page.locator('[data-testid=roofline] [data-mark=point]')).toHaveCount(result.points.length);
  await expect(page.getByTestId('run')).toBeEnabled();
  expect(problems).toEqual([]);
});

test('a local safetensors model picked in the page is benchmarked and validated', async ({ page }) => {
  test.setTimeout(120_000);
  const problems = watchConsole(page);
  // A Hugging Face folder made the way `npm run verify -- --save-model` makes it.
  const dir = mkdtempSync(join(tmpdir(), 'local-model-'));
  const { configJson, safetensors } = saveHfModel(randomWeights(presetConfig('ci-tiny'), 5));
  writeFileSync(join(dir, 'config.json'), configJson);
  writeFileSync(join(dir, 'model.safetensors'), safetensors);

  await openPage(page);
  await page
    .locator('#local-model')
    .setInputFiles([join(dir, 'config.json'), join(dir, 'model.safetensors')]);
  await expect(page.getByText('Using model.safetensors')).toBeVisible();
  await withoutAutotune(page);
  await page.getByLabel('Prefill lengths L').fill('16');
  await page.getByLabel('Decode depths').fill('');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('progress')).toContainText('Done: 1 point', { timeout: 100_000 });
  const result = await exportedResult(page);
  expect(result.model.preset).toBe('model.safetensors');
  expect(result.model.config.hiddenSize).toBe(128);
  expect(result.validation.passed).toBe(true);
  expect(result.points).toHaveLength(1);

  // A folder without config.json is refused at the field.
  await page.locator('#local-model').setInputFiles([join(dir, 'model.safetensors')]);
  await expect(page.getByText('Need config.json and a .safetensors file')).toBeVisible();
  expect(problems).toEqual([]);
});
