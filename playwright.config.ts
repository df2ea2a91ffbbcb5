import { defineConfig } from '@playwright/test';
import { findBrowser, launchOptions } from './bench/browser.ts';

/** Port of the test server (E2E_PORT to run two suites side by side); Playwright starts it from the built dist/. */
const PORT = Number(process.env.E2E_PORT ?? 4179);

export default defineConfig({
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
  webServer: {
    command: `npx tsx bench/serve.ts --port ${PORT}`,
    url: `http://127.0.0.1:${PORT}/index.html`,
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
