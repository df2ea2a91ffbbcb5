import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { BenchResultSchema } from '../src/results/schema.ts';
import { DESKTOP, watchConsole, withoutAutotune } from './page-helpers.ts';

/**
 * The built page on a host that sends no isolation headers, under a subpath, as GitHub Pages serves
 * a project site: a plain static server (files and a content type, nothing else).
 */
const DIST = resolve(import.meta.dirname, '..', 'dist');
const SUBPATH = '/some/project/';
const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
};

function plainStaticServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (!path.startsWith(SUBPATH)) {
      res.writeHead(404).end();
      return;
    }
    const file = normalize(join(DIST, path.slice(SUBPATH.length) || 'index.html'));
    if (!file.startsWith(DIST) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () =>
      done({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

test('on a plain static host under a subpath, the page isolates itself after one reload and runs the quick suite, requesting nothing from another host', async ({
  page,
}) => {
  test.setTimeout(150_000);
  const { server, origin } = await plainStaticServer();
  try {
    const problems = watchConsole(page);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const navigations: string[] = [];
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations.push(f.url());
    });
    await page.setViewportSize(DESKTOP);
    // ci-tiny: what this test is about is the host, not the model (the page's default is the trained one).
    const url = `${origin}${SUBPATH}index.html?preset=ci-tiny`;
    await page.goto(url);
    // The first visit installs the service worker and reloads; the second is isolated.
    await expect(page.getByTestId('device')).toContainText('Adapter:', { timeout: 30_000 });
    expect(navigations.length).toBe(2);
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
    await expect(page.getByTestId('isolation-note')).toContainText('isolated by this page’s service worker');

    // The quick suite, without the kernel search (nothing here is about tuning).
    await expect(page.getByLabel('Suite')).toHaveValue('quick');
    await withoutAutotune(page);
    await page.getByTestId('run').click();
    const progress = page.getByTestId('progress');
    await expect(progress).toContainText('Done: 12 points', { timeout: 120_000 });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('export-json').click(),
    ]);
    const result = BenchResultSchema.parse(
      JSON.parse(await (await import('node:fs/promises')).readFile(await download.path(), 'utf8')),
    );
    expect(result.status).toBe('complete');
    expect(result.env.crossOriginIsolated).toBe(true);
    expect(result.points.length).toBe(12);
    // Everything came from the static host, under its subpath (blob: URLs are the page's own).
    const foreign = requests.filter((r) => !r.startsWith(`${origin}${SUBPATH}`) && !r.startsWith('blob:'));
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  } finally {
    server.close();
  }
});

test('where service workers are unavailable, the page says so and runs without isolation', async ({
  browser,
}) => {
  const { server, origin } = await plainStaticServer();
  // A context that blocks service workers, as some browsers' private modes and policies do.
  const context = await browser.newContext({ serviceWorkers: 'block' });
  try {
    const page = await context.newPage();
    await page.setViewportSize(DESKTOP);
    await page.goto(`${origin}${SUBPATH}index.html`);
    await expect(page.getByTestId('device')).toContainText('Adapter:', { timeout: 30_000 });
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(false);
    await expect(page.getByTestId('isolation-note')).toContainText('Not cross-origin isolated');
  } finally {
    await context.close();
    server.close();
  }
});
