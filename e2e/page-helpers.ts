import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';

/** Where the page tests write their screenshots. */
const ARTIFACTS = join(import.meta.dirname, 'artifacts');

/** Viewports the page tests and their screenshots use. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Fails the test on any page error or CSP violation, which would otherwise only show in the console. */
export function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  return problems;
}

/**
 * Opens the page at desktop width and waits for the device card. The page's own default is the
 * trained model (its own test opens the page bare); the tests of everything else pin ci-tiny, the
 * preset they were written against, in the URL as a user's link would.
 */
export async function openPage(page: Page, query = '?preset=ci-tiny'): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await page.goto(`/index.html${query}`);
  await expect(page.getByTestId('device')).toContainText('Adapter:', { timeout: 30_000 });
}

/**
 * Unticks Autotune (under Advanced): a page run in a test that asserts nothing about tuning runs
 * without the search, on the adapter's default kernel families, as the CLI tests do with
 * --no-autotune.
 */
export async function withoutAutotune(page: Page): Promise<void> {
  await page.locator('details.advanced > summary').click();
  await page.getByRole('checkbox', { name: /^Autotune/ }).uncheck();
}

/** A screenshot into e2e/artifacts/: the whole page, or one element. */
export async function screenshot(target: Page | Locator, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  if ('goto' in target) await target.screenshot({ path, fullPage: true });
  else await target.screenshot({ path });
}

/** The chart card holding the chart of test id `testId`. */
export function panel(page: Page, testId: string): Locator {
  return page.locator('figure.chart-panel', { has: page.getByTestId(testId) });
}

/** Nothing may stick out sideways at phone width (tables scroll inside their own box). */
export async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

/** Stores a result in the page's history (IndexedDB), as a finished run would be; reload to list it. */
export async function saveToHistory(page: Page, result: unknown): Promise<void> {
  await page.evaluate(
    (r) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('webgpu-inference-bench-history', 1);
        open.onupgradeneeded = () =>
          open.result.createObjectStore('runs', { keyPath: 'id', autoIncrement: true });
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('runs', 'readwrite');
          tx.objectStore('runs').add({ savedAt: new Date().toISOString(), result: r });
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error);
        };
      }),
    result,
  );
}

/** The page, a result saved to its history and opened from there into the run view, as a user reopens a run. */
export async function openFromHistory(page: Page, result: unknown): Promise<void> {
  await openPage(page);
  await saveToHistory(page, result);
  await page.reload();
  await page
    .getByTestId('history')
    .getByRole('button', { name: /^Open the run of/ })
    .click();
}
