import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { makeGenerateFixture } from '../test-support/llama-generate/fixture.ts';
import { type LlamaGreedy, llamaGreedy } from '../test-support/llama-generate/generate.ts';
import {
  DESKTOP,
  expectNoHorizontalOverflow,
  openPage,
  PHONE,
  screenshot,
  watchConsole,
  withoutAutotune,
} from './page-helpers.ts';

/**
 * The page's door to text in, text out: a Qwen3-shaped Q4_K_M file made by llama.cpp's quantizer
 * (test-support/llama-generate/fixture.ts; llama.cpp's SentencePiece test vocabulary, whose head is
 * five times smaller than Qwen's), picked in the page, a small sweep run with a prompt in the
 * Prompt box, and the text it generates after the workloads compared with llama.cpp's greedy
 * generation on the same file.
 */

test.describe.configure({ mode: 'serial' });

let dir: string;
let model: string;
let llama: LlamaGreedy;

test.beforeAll(async () => {
  test.setTimeout(60_000);
  dir = mkdtempSync(join(tmpdir(), 'generate-ui-'));
  model = makeGenerateFixture(dir, 'llama-spm');
  // The page does not ignore end-of-generation tokens; neither does this.
  llama = await llamaGreedy(model, 'Hello', 32, false);
});

test.afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('page: the Prompt box says why a preset cannot take it; a GGUF file runs a sweep and shows llama.cpp’s greedy text', async ({
  page,
}) => {
  test.setTimeout(420_000);
  const problems = watchConsole(page);
  await openPage(page);
  const prompt = page.getByTestId('prompt');
  await expect(prompt).toBeDisabled();
  await expect(page.getByTestId('generate')).toBeDisabled();
  await expect(page.getByTestId('prompt-note')).toHaveText(
    /^Unavailable: this preset has seeded random weights and no vocabulary, so there is no text to read or write\./,
  );

  await screenshot(page.locator('.field-prompt'), 'prompt-unavailable.png');

  await page.locator('#local-model').setInputFiles(model);
  await expect(prompt).toBeEnabled();
  await expect(page.getByTestId('prompt-note')).toContainText('Greedy, with the file’s own tokenizer');
  await withoutAutotune(page);
  // A small sweep of its own: the quick suite (ui.spec.ts runs it) with its lengths up to 256 and
  // its fused/unfused arms costs a minute more here, and the text is what this test is about.
  await page.getByLabel('Prefill lengths L').fill('16');
  await page.getByLabel('Decode depths').fill('16');
  await page.getByLabel('Tokens to generate').fill('4');
  await page.getByLabel('Repetitions').fill('3');
  await expect(page.getByLabel('Suite')).toHaveValue('custom');
  await prompt.fill('Hello');
  await expect(page.getByTestId('prompt-tokens')).toHaveValue('32');
  await page.getByTestId('run').click();

  const stats = page.getByTestId('generation-stats');
  await expect(stats).toContainText('TTFT', { timeout: 280_000 });
  await expect(page.getByTestId('progress')).toContainText('Done', { timeout: 30_000 });
  expect(llama.prompt).toEqual([1, 15043]);
  await expect(stats).toContainText(
    `${llama.tokens.length} tokens after a 2-token prompt, ${llama.tokens.length < 32 ? 'stopped at an end-of-generation token' : 'stopped at the token limit'}`,
  );
  await expect(stats).toContainText(
    /TPOT [\d.]+ ms · [\d.]+ tokens\/s \(decode, 1000 ÷ TPOT\) · wall clock: performance\.now\(\)/,
  );
  const text = page.getByTestId('generated-text');
  await expect(text).toHaveText(llama.text, { useInnerText: false });
  // Text only: whatever the model wrote, nothing of it became markup.
  expect(await text.evaluate((el) => el.childElementCount)).toBe(0);
  await expect(page.getByTestId('generated-prompt')).toHaveText('Hello');
  expect((await page.getByTestId('generated-ids').textContent())?.split(', ').map(Number)).toEqual(
    llama.tokens,
  );
  // The run itself: its points and its validation, on the file's model.
  await expect(page.getByTestId('results-table')).toBeVisible();
  await screenshot(page, 'generate.png');

  await page.setViewportSize(PHONE);
  await expectNoHorizontalOverflow(page);
  await screenshot(page, 'generate-390.png');
  await page.setViewportSize(DESKTOP);

  // Generate without a run is e2e/trained.spec.ts's (on the trained model: a rebuild of this
  // file's Q4_K/Q6_K model costs half a minute more of SwiftShader here for the same button).
  expect(problems).toEqual([]);
});
