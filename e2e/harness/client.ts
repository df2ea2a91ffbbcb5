import { type Browser, test as base, expect, type Page } from '@playwright/test';
import { forkIpc } from '../../bench/ipc.ts';
import { findVulkan } from '../../bench/vulkan.ts';
import type { AdapterRecord } from '../../src/gpu/device.ts';
import { E2E_ORIGIN } from '../port.ts';
import type { Checks } from './checks.ts';
import type { HarnessReply, HarnessRequest } from './protocol.ts';

type Target = 'kernels' | 'model' | 'serve';
type Method<T extends Target> = {
  [M in keyof Checks[T]]: Checks[T][M] extends (...a: never[]) => unknown ? M : never;
}[keyof Checks[T]];
type Fn<T extends Target, M extends Method<T>> = Checks[T][M] extends (...a: infer A) => infer R
  ? (...a: A) => R
  : never;

/**
 * The shared checks (e2e/harness/checks.ts), reached the same way whichever runtime holds them:
 * the browser's harness page, or the Node harness process on Dawn. The kernel and model tests are
 * written once against this; each file runs in one of the two (the `browser` and `native`
 * Playwright projects, playwright.config.ts).
 */
export interface Harness {
  runtime: 'browser' | 'node';
  adapter: AdapterRecord;
  call<T extends Target, M extends Method<T>>(
    target: T,
    method: M,
    ...args: Parameters<Fn<T, M>>
  ): Promise<Awaited<ReturnType<Fn<T, M>>>>;
}

function browserHarness(page: Page, adapter: AdapterRecord): Harness {
  return {
    runtime: 'browser',
    adapter,
    call: (target, method, ...args) =>
      page.evaluate(
        async ([t, m, a]) => {
          const owner = (await window.harness)[t] as unknown as Record<string, (...x: unknown[]) => unknown>;
          return owner[m](...a);
        },
        [target, method as string, args as unknown[]] as const,
      ) as never,
  };
}

/**
 * The browser's harness page, kept for a whole Playwright worker as the Node harness process is:
 * its device, pipeline cache and autotuned families are reused across tests, so a test pays for
 * compiling only the pipelines no earlier test built (no harness test is about cold start). A test
 * that fails may leave the page busy or its device broken, so the page is opened afresh after one.
 */
class BrowserHarnessPage {
  private current: Promise<{ page: Page; harness: Harness }> | undefined;

  constructor(private readonly browser: Browser) {}

  get(): Promise<Harness> {
    this.current ??= (async () => {
      const page = await this.browser.newPage();
      await page.goto(`${E2E_ORIGIN}/e2e/harness/index.html`);
      const adapter = await page.evaluate(async () => (await window.harness).adapter);
      return { page, harness: browserHarness(page, adapter) };
    })();
    return this.current.then((c) => c.harness);
  }

  async reset(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await (await current)?.page.close();
  }
}

/** The Node harness as `npm run build` writes it (vite.node.config.ts). */
const NODE_HARNESS = 'dist-node/harness.mjs';

async function nodeHarness(): Promise<{ harness: Harness; stop(): Promise<void> }> {
  const process_ = forkIpc(
    NODE_HARNESS,
    findVulkan('default').env,
    (why) => new Error(`the Node harness exited (${why})`),
  );
  const adapter = await new Promise<AdapterRecord>((resolve, reject) => {
    process_.child.once('exit', (code) =>
      reject(new Error(`the Node harness exited (code ${code}) before it was ready`)),
    );
    process_.child.on('message', (reply: HarnessReply) => {
      if (reply.type === 'ready') resolve(reply.adapter);
    });
  });
  return {
    harness: {
      runtime: 'node',
      adapter,
      call: (target, method, ...args) =>
        process_.call({ type: 'call', target, method: method as string, args } satisfies Omit<
          HarnessRequest & { type: 'call' },
          'id'
        >),
    },
    stop: () => process_.stop(),
  };
}

/**
 * `test` with a `harness` fixture. The Node harness process, and the browser's harness page, live
 * as long as the Playwright worker (their device and pipeline cache are reused across tests).
 */
export const test = base.extend<
  { harness: Harness },
  { runtime: 'browser' | 'node'; nodeHarness: Harness | null; browserHarness: BrowserHarnessPage | null }
>({
  runtime: ['browser', { option: true, scope: 'worker' }],
  nodeHarness: [
    async ({ runtime }, use) => {
      if (runtime !== 'node') return use(null);
      const { harness, stop } = await nodeHarness();
      await use(harness);
      await stop();
    },
    { scope: 'worker' },
  ],
  browserHarness: [
    async ({ runtime, browser }, use) => {
      if (runtime !== 'browser') return use(null);
      const holder = new BrowserHarnessPage(browser);
      await use(holder);
      await holder.reset();
    },
    { scope: 'worker' },
  ],
  harness: async ({ runtime, nodeHarness, browserHarness }, use, testInfo) => {
    const harness = runtime === 'node' ? nodeHarness : await browserHarness?.get();
    if (!harness) throw new Error('no harness');
    // A real adapter, or the suite fails: it is never skipped.
    expect(harness.adapter.vendor.length + harness.adapter.architecture.length).toBeGreaterThan(0);
    await use(harness);
    if (testInfo.status !== testInfo.expectedStatus) await browserHarness?.reset();
  },
});

export { expect };
