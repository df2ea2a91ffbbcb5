import { acquireGpu } from '../../src/gpu/device.ts';
import { createChecks } from './checks.ts';
import { EngineChecks } from './engine-checks.ts';

/** What Playwright reaches through `window.harness`: the shared checks, and the browser-only engine checks. */
async function createHarness() {
  const gpu = await acquireGpu();
  return { ...createChecks(gpu), engine: new EngineChecks() };
}

declare global {
  interface Window {
    harness: Promise<Awaited<ReturnType<typeof createHarness>>>;
  }
}

window.harness = createHarness();
