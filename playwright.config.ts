import { defineConfig } from '@playwright/test';
import { findBrowser, launchOptions } from './bench/browser.ts';
import type { Harness } from './e2e/harness/client.ts';
import { E2E_ORIGIN, E2E_PORT } from './e2e/port.ts';

/** The files the native project runs; the browser project runs every other one (see projects below). */
const NATIVE_FILES =
  /(kernels|kernels-formats|kernels-long|model|model-defaults|serve|gguf-models|gguf-kernels)\.spec\.ts$/;

export default defineConfig<{ runtime: Harness['runtime'] }>({
  testDir: 'e2e',
  globalSetup: './e2e/global-setup.ts',
  // SwiftShader runs shaders on the CPU, but a test leaves a core idle much of the time (one
  // pipeline compiles at a time; a CLI starts a process, a browser and a page): two workers took
  // the suite from 36.6 to 25.5 minutes on the 2-core CI machine. No test asserts a speed, so
  // sharing the cores changes no outcome. A third worker gained nothing measurable (14.7 minutes
  // against two workers' 14.5 here) and starved the case study's HTTP replay: a request went
  // 302 ms late against its schedule (e2e/case.spec.ts allows 250).
  workers: 2,
  timeout: 120_000,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: E2E_ORIGIN,
    launchOptions: launchOptions(findBrowser()),
  },
  // The native project first: its files are the longest (model.spec.ts alone runs about 5 minutes),
  // and a long file that starts last keeps one worker busy after the other has run out of tests.
  projects: [
    // The kernel and model checks, run natively on Dawn by the Node harness process. Each runs once:
    // the browser's harness page runs the same checks object on the same SwiftShader adapter (the
    // fused kernels run there, fused.spec.ts), and the page's own tests drive the engine in the
    // browser's worker. The kernels in their other number formats (kernels-formats.spec.ts) took
    // 93 s in the page against 52 s natively (alone, idle, 2026-12-07); fused.spec.ts 46 s
    // against 28 s, kept in the page so that its harness runs real checks.
    {
      name: 'native',
      use: { runtime: 'node' },
      testMatch: NATIVE_FILES,
    },
    // Everything else in headless Chromium: the page, the CLIs, the engine's failure paths, and
    // the fused kernels' checks through the browser's harness page.
    {
      name: 'browser',
      use: { runtime: 'browser' },
      testIgnore: NATIVE_FILES,
    },
  ],
  webServer: {
    command: `npx tsx bench/serve.ts --port ${E2E_PORT}`,
    url: `${E2E_ORIGIN}/index.html`,
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
