/**
 * The Capacity tab, driven as a user would: hand-entered Llama-2-70B dimensions must show the
 * figures worked out by hand in src/capacity/capacity.test.ts; bad input is shown at its field;
 * config.json and GGUF files are read in the page (files' strings as text); and the roofs of a run
 * that finishes while the tab is open are offered and used, exactly as roofsFromResult reads them.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { roofsFromResult } from '../src/capacity/roofs.ts';
import { BenchResultSchema } from '../src/results/schema.ts';
import { makeResult } from '../test-support/fixtures/base.ts';
import { DESKTOP, PHONE, watchConsole, withoutAutotune } from './page-helpers.ts';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');

async function openCapacity(page: Page): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.goto('/index.html?preset=ci-tiny');
  await expect(page.getByTestId('device')).toContainText('Adapter:', { timeout: 30_000 });
  await page.getByTestId('tab-capacity').click();
  await expect(page.getByTestId('tab-capacity')).toHaveAttribute('aria-selected', 'true');
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
}

/** The cells of one output row (`cap-out-<key>`): label, then the values. */
function row(page: Page, key: string) {
  return page.getByTestId(`cap-out-${key}`).locator('td');
}

async function fillAll(page: Page, values: Record<string, string>): Promise<void> {
  for (const [field, value] of Object.entries(values)) await page.getByTestId(`cap-${field}`).fill(value);
}

/** A GGUF v3 header written byte by byte: u32 and string metadata, and a tensor table. */
function ggufBytes(meta: [string, number | string][], tensors: [string, number[], number][]): Buffer {
  const out: number[] = [];
  const u32 = (v: number) => {
    for (let i = 0; i < 4; i++) out.push((v >>> (8 * i)) & 0xff);
  };
  const u64 = (v: number) => {
    u32(v % 2 ** 32);
    u32(Math.floor(v / 2 ** 32));
  };
  const str = (s: string) => {
    const b = new TextEncoder().encode(s);
    u64(b.length);
    out.push(...b);
  };
  u32(0x46554747); // "GGUF"
  u32(3);
  u64(tensors.length);
  u64(meta.length);
  for (const [key, value] of meta) {
    str(key);
    if (typeof value === 'number') {
      u32(4); // u32
      u32(value);
    } else {
      u32(8); // string
      str(value);
    }
  }
  for (const [name, dims, type] of tensors) {
    str(name);
    u32(dims.length);
    for (const d of dims) u64(d);
    u32(type);
    u64(0);
  }
  return Buffer.from(out);
}

test('hand-entered Llama-2-70B dims show the hand-worked figures; bad input is shown at its field', async ({
  page,
}) => {
  const problems = watchConsole(page);
  await openCapacity(page);
  // The tab opens with an example already answered.
  await expect(page.getByTestId('cap-results')).toHaveAttribute('data-state', 'fresh');

  await page.getByTestId('cap-source-dims').check();
  await fillAll(page, {
    layers: '80',
    heads: '64',
    kvHeads: '8',
    headDim: '128',
    hidden: '8192',
    intermediate: '28672',
    vocab: '32000',
    contextLength: '4096',
    gpuMem: '80GB',
    gpus: '4',
    input: '3000',
    output: '400',
    sessions: '50',
    longShare: '0.2',
  });
  await page.getByTestId('cap-tied').uncheck();
  await expect(page.getByTestId('cap-model-summary')).toContainText('68.98B parameters; 80 layers');

  // The numbers of capacity.test.ts, worked by hand there.
  await expect(row(page, 'kvBytesPerToken').first()).toHaveText('327,680');
  await expect(row(page, 'kvBytesPerRequest')).toHaveText(['1,114,112,000', '1.11 GB', '1.04 GiB']);
  await expect(row(page, 'weightsBytes')).toHaveText(['137,953,296,384', '137.95 GB', '128.48 GiB']);
  await expect(row(page, 'kv-mean').first()).toHaveText('44,564,480,000');
  await expect(row(page, 'kv-long').first()).toHaveText('44,564,480,000');
  await expect(row(page, 'totalBytes').first()).toHaveText('227,082,256,384');
  await expect(row(page, 'kvBudgetBytes').first()).toHaveText('134,046,703,616');
  await expect(row(page, 'gpusNeeded')).toHaveText('4');
  await expect(row(page, 'maxPaged')).toHaveText('75');
  await expect(row(page, 'maxContiguous')).toHaveText('30');
  await expect(row(page, 'concurrencyRatio')).toHaveText('2.50×');
  await expect(page.getByTestId('cap-tile-paged')).toContainText('75');
  // MHA would cache all 64 heads: 8× the GQA figure.
  await expect(row(page, 'kvBytesPerRequestMha').first()).toHaveText('8,912,896,000');
  // Without roofs there are no times, and the page says why.
  await expect(row(page, 'tpotMs')).toHaveText('–');
  await expect(page.getByTestId('cap-notes')).toContainText(
    "13600 tokens, past the model's context length of 4096",
  );

  // The chart: both lines, both memory rules labelled, the sessions and the fit counts marked.
  const chart = page.getByTestId('capacity-chart');
  await expect(chart.locator('svg').first()).toBeVisible();
  for (const text of [
    'paged: 16-token pages',
    'contiguous: 13,600 tokens each',
    'raw 320.00 GB',
    'usable 272.00 GB',
    '50 sessions',
    '75 fit',
    '30 fit',
    'weights 137.95 GB',
  ]) {
    await expect(chart).toContainText(text);
  }
  await expect(chart.locator('figcaption').first()).toHaveText(
    'Raw memory 4 × 80.00 GB = 320.00 GB; usable × headroom 0.85 = 272.00 GB; weights 137.95 GB; 50 sessions need 227.08 GB.',
  );
  await screenshot(page, 'capacity.png');
  await page
    .locator('.capacity-view .chart-panel')
    .screenshot({ path: join(ARTIFACTS, 'capacity-chart.png') });
  await page.getByTestId('cap-results').screenshot({ path: join(ARTIFACTS, 'capacity-results.png') });

  // Headroom past 1: the schema's message at the field, the results kept but marked stale.
  const headroom = page.getByTestId('cap-headroom');
  await headroom.fill('1.5');
  await expect(page.getByTestId('cap-headroom-error')).toHaveText('must be in (0, 1]');
  await expect(headroom).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('cap-results')).toHaveAttribute('data-state', 'stale');
  await expect(page.getByTestId('cap-status')).toContainText('last valid inputs');
  // A memory size that does not parse, and heads that GQA cannot group.
  await page.getByTestId('cap-gpuMem').fill('lots');
  await expect(page.getByTestId('cap-gpuMem-error')).toContainText('"lots" is not a size');
  await page.getByTestId('cap-kvHeads').fill('5');
  await expect(page.getByTestId('cap-model-error')).toContainText(
    'heads (64) must be a multiple of kvHeads (5)',
  );
  await page.getByTestId('cap-layers').fill('0');
  await expect(page.getByTestId('cap-layers-error')).toHaveText('must be positive');
  await screenshot(page, 'capacity-errors.png');

  await fillAll(page, { headroom: '0.85', gpuMem: '80GB', kvHeads: '8', layers: '80' });
  await expect(page.locator('.capacity-view .field-error:visible')).toHaveCount(0);
  await expect(page.getByTestId('cap-results')).toHaveAttribute('data-state', 'fresh');
  await expect(row(page, 'maxPaged')).toHaveText('75');
  // A binary size is read as one: 74.5 GiB is 79,993,765,888 bytes, not 74.5e9.
  await page.getByTestId('cap-gpuMem').fill('74.5GiB');
  await expect(row(page, 'usableBytesPerGpu').first()).toHaveText(
    Math.round(74.5 * 2 ** 30 * 0.85).toLocaleString('en-US'),
  );

  await page.setViewportSize(PHONE);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await screenshot(page, 'capacity-390.png');
  expect(problems).toEqual([]);
});

test('model files: a config.json, a GGUF header, and files that are neither', async ({ page }) => {
  const problems = watchConsole(page);
  const dir = mkdtempSync(join(tmpdir(), 'capacity-ui-'));
  // Llama-2-7B's shape (MHA), with markup in its name: it must show as text, never as HTML.
  const config = {
    _name_or_path: 'llama-7b <img src=x onerror="window.pwned=1">',
    num_hidden_layers: 32,
    num_attention_heads: 32,
    hidden_size: 4096,
    intermediate_size: 11008,
    vocab_size: 32000,
    max_position_embeddings: 4096,
  };
  const good = join(dir, 'config.json');
  writeFileSync(good, JSON.stringify(config));
  await openCapacity(page);
  await page.getByTestId('cap-file').setInputFiles(good);
  await expect(page.getByTestId('cap-source-file')).toBeChecked();
  // 2 · 32 layers · 32 KV heads · 128 · 2 bytes; weights 6,738,415,616 parameters × 2 (capacity.test.ts).
  await expect(row(page, 'kvBytesPerToken').first()).toHaveText('524,288');
  await expect(row(page, 'weightsBytes').first()).toHaveText('13,476,831,232');
  const summary = page.getByTestId('cap-model-summary');
  await expect(summary).toContainText('llama-7b <img src=x onerror="window.pwned=1">: 6.74B parameters');
  await expect(page.locator('.capacity-view img')).toHaveCount(0);
  expect(await page.evaluate(() => 'pwned' in window)).toBe(false);

  // Heads that do not group: named by the config.json key, at the model field.
  const bad = join(dir, 'bad', 'config.json');
  mkdirSync(join(dir, 'bad'));
  writeFileSync(bad, JSON.stringify({ ...config, num_key_value_heads: 5 }));
  await page.getByTestId('cap-file').setInputFiles(bad);
  const modelError = page.getByTestId('cap-model-error');
  await expect(modelError).toContainText('num_key_value_heads: heads (32) must be a multiple of kvHeads (5)');
  await expect(page.getByTestId('cap-file')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('cap-results')).toHaveAttribute('data-state', 'stale');

  const notJson = join(dir, 'broken.json');
  writeFileSync(notJson, '{"num_hidden_layers": 32,');
  await page.getByTestId('cap-file').setInputFiles(notJson);
  await expect(modelError).toContainText('broken.json is not valid JSON');

  const notGguf = join(dir, 'model.gguf');
  writeFileSync(notGguf, 'PK\u0003\u0004 a zip, not a model');
  await page.getByTestId('cap-file').setInputFiles(notGguf);
  await expect(modelError).toContainText('model.gguf is not a GGUF file');

  // A tiny llama GGUF: 2 layers, hidden 64, 4 heads of 16, 2 KV heads, no output.weight (tied).
  const gguf = join(dir, 'tiny.gguf');
  writeFileSync(
    gguf,
    ggufBytes(
      [
        ['general.architecture', 'llama'],
        ['general.name', 'tiny <b>gguf</b>'],
        ['llama.block_count', 2],
        ['llama.embedding_length', 64],
        ['llama.feed_forward_length', 128],
        ['llama.attention.head_count', 4],
        ['llama.attention.head_count_kv', 2],
        ['llama.context_length', 2048],
        ['llama.vocab_size', 1500],
      ],
      [
        ['token_embd.weight', [64, 1500], 1], // F16: 96,000 × 2 = 192,000 bytes
        ['blk.0.attn_q.weight', [64, 64], 8], // Q8_0: 4096 / 32 blocks × 34 = 4,352 bytes
      ],
    ),
  );
  await page.getByTestId('cap-file').setInputFiles(gguf);
  await expect(modelError).toBeHidden();
  await expect(summary).toContainText('tiny <b>gguf</b>: ');
  await expect(summary).toContainText('weights 196.35 kB, exact from the file');
  // 2 (K, V) · 2 layers · 2 KV heads · 16 · 2 bytes = 256; weights are the tensor table's sum.
  await expect(row(page, 'kvBytesPerToken').first()).toHaveText('256');
  await expect(row(page, 'weightsBytes').first()).toHaveText('196,352');
  await expect(page.getByTestId('cap-notes')).toContainText('Weight bytes are exact');
  await expect(page.getByTestId('cap-weights-hint')).toContainText('Ignored');
  await expect(page.locator('.capacity-view b')).toHaveCount(0);
  expect(problems).toEqual([]);
});

test('the roofs of a run that finishes while the tab is open are offered and used', async ({ page }) => {
  test.setTimeout(180_000);
  const problems = watchConsole(page);
  await openCapacity(page);
  const useRoofs = page.getByTestId('cap-useRoofs');
  await expect(useRoofs).toBeDisabled();
  await page.getByTestId('cap-gpuMem').fill('8GB');
  // The Run card stays beside every tab; starting a run shows the run tab, so come back after.
  await withoutAutotune(page);
  await page.getByLabel('Prefill lengths L').fill('16');
  await page.getByLabel('Decode depths').fill('');
  await page.getByTestId('run').click();
  await page.getByTestId('tab-capacity').click();
  await expect(useRoofs).toBeEnabled({ timeout: 150_000 });
  await expect(page.getByTestId('cap-useRoofs-hint')).toContainText('TFLOP/s (f32 FMA)');
  await useRoofs.check();
  const peak = page.getByTestId('cap-peakTflops');
  const bandwidth = page.getByTestId('cap-bandwidthGBs');
  await expect(peak).not.toHaveValue('');
  await expect(peak).toHaveAttribute('readonly', '');
  await expect(page.getByTestId('cap-roofs-source')).toContainText('measured by this tool');
  await expect(page.getByTestId('cap-notes')).toContainText('Roofs: ');
  await expect(row(page, 'tpotMs')).toHaveText(/^\d+(\.\d+)? ms$/);
  await expect(row(page, 'bottleneck')).not.toHaveText('–');

  // The boxes hold exactly what roofsFromResult reads from the exported result.
  await page.getByTestId('tab-run').click();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('export-json').click(),
  ]);
  const result = BenchResultSchema.parse(JSON.parse(readFileSync(await download.path(), 'utf8')));
  const roofs = roofsFromResult(result, 'run');
  await page.getByTestId('tab-capacity').click();
  await expect(peak).toHaveValue(String(roofs.peakTflops));
  await expect(bandwidth).toHaveValue(String(roofs.bandwidthGBs));

  // Back to typed roofs: the boxes are the user's again, and one roof alone is refused.
  await useRoofs.uncheck();
  await expect(peak).toHaveValue('');
  await expect(row(page, 'tpotMs')).toHaveText('–');
  await peak.fill('10');
  await expect(page.getByTestId('cap-bandwidthGBs-error')).toHaveText(
    'give both peak compute and bandwidth, or neither',
  );
  await bandwidth.fill('100');
  await expect(page.getByTestId('cap-roofs-source')).toHaveText('Roofs used: typed in.');
  expect(problems).toEqual([]);
});

test('a run without measured roofs says so at the roof fields', async ({ page }) => {
  const problems = watchConsole(page);
  await page.setViewportSize(DESKTOP);
  await page.goto('/index.html?preset=ci-tiny');
  await expect(page.getByTestId('device')).toContainText('Adapter:', { timeout: 30_000 });
  // A failed run that never measured its roofs, kept in history (the page's own IndexedDB store).
  const base = makeResult();
  const failed = {
    ...base,
    status: 'failed',
    error: { name: 'DeviceLostError', message: 'The GPU device was lost before the roofs were measured.' },
    points: [],
    peaks: { ...base.peaks, fmaGflops: 0, copyGBps: 0 },
  };
  await page.evaluate(
    (result) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('webgpu-inference-bench-history', 1);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('runs', 'readwrite');
          tx.objectStore('runs').add({ savedAt: new Date().toISOString(), result });
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error);
        };
      }),
    failed,
  );
  await page.reload();
  await page
    .getByTestId('history')
    .getByRole('button', { name: /^Open the run of/ })
    .click();
  await page.getByTestId('tab-capacity').click();
  await expect(page.getByTestId('cap-useRoofs-hint')).toContainText('it has no measured roofs');
  await page.getByTestId('cap-useRoofs').check();
  await expect(page.getByTestId('cap-useRoofs-error')).toContainText('has no measured roofs');
  for (const id of ['cap-peakTflops', 'cap-bandwidthGBs']) {
    await expect(page.getByTestId(id)).toHaveAttribute('aria-invalid', 'true');
  }
  await expect(page.getByTestId('cap-results')).toHaveAttribute('data-state', 'stale');
  await screenshot(page, 'capacity-no-roofs.png');
  await page.getByTestId('cap-useRoofs').uncheck();
  await expect(page.getByTestId('cap-results')).toHaveAttribute('data-state', 'fresh');
  expect(problems).toEqual([]);
});
