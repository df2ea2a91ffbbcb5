import type { Browser, Page } from '@playwright/test';
import type { GpuInfo } from '../src/worker/api.ts';
import { launchBrowser } from './browser.ts';
import { DIST_DIR, type StaticServer, serveApp } from './server.ts';

export interface EngineSession {
  page: Page;
  gpu: GpuInfo;
  browserVersion: string;
  server: StaticServer;
  close(): Promise<void>;
}

/**
 * Serves the built app, opens it in headless Chromium and waits for the engine worker to report
 * its adapter. A page without WebGPU fails here with the engine's own explanation.
 */
export async function openEngine(options: {
  browserPath?: string;
  headed?: boolean;
  modelDir?: string;
}): Promise<EngineSession> {
  const server = await serveApp({ distDir: DIST_DIR, modelDir: options.modelDir });
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser(options.browserPath, options.headed);
    const page = await browser.newPage();
    page.on('pageerror', (e) => console.error(`[page] ${e.message}`));
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => 'engine' in window, null, { timeout: 30_000 });
    const gpu = await page.evaluate(() => window.engine.gpuInfo());
    const b = browser;
    return {
      page,
      gpu,
      browserVersion: browser.version(),
      server,
      close: async () => {
        await b.close();
        await server.close();
      },
    };
  } catch (e) {
    await browser?.close();
    await server.close();
    throw e;
  }
}

/** Playwright prefixes errors thrown in the page with "page.evaluate: "; keep the engine's own words. */
export function engineMessage(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/^page\.evaluate: /, '').split('\n    at ')[0];
}

export function describeAdapter(gpu: GpuInfo): string {
  const a = gpu.adapter;
  const name = [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ');
  return `${name}${a.isFallbackAdapter ? ' [FALLBACK / software adapter]' : ''}`;
}
