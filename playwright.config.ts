import { defineConfig } from '@playwright/test';
import { findBrowser, launchOptions } from './bench/browser.ts';
import type { Harness } from './e2e/harness/client.ts';

/** Port of the test server (E2E_PORT to run two suites side by side); Playwright starts it from the built dist/. */
const PORT = Number(process.env.E2E_PORT ?? 4179);

export default defineConfig<{ runtime: Harness['runtime'] }>({
  testDir: 'e2e',
  // SwiftShader runs shaders on the CPU: one worker, so two suites do not fight over two cores.
  workers: 1,
  timeout: 120_000,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    launchOptions: launchOptions(findBrowser()),
  },
  projects: [
    // Everything in headless Chromium (the page, the CLIs, the engine's failure paths, and the
    // kernel and model checks in the browser's harness page).
    { name: 'browser', use: { runtime: 'browser' } },
    // The same kernel and model checks, run natively on Dawn by the Node harness process.
    { name: 'native', use: { runtime: 'node' }, testMatch: /(kernels|model|serve)\.spec\.ts$/ },
  ],
  webServer: {
    command: `npx tsx bench/serve.ts --port ${PORT}`,
    url: `http://127.0.0.1:${PORT}/index.html`,
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
