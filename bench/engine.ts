import type {
  BenchResult,
  GenerateEvent,
  GenerateRequest,
  GenerateResult,
  GpuInfo,
  ProbeOutcome,
  Progress,
  VerifyRequest,
  VerifyResult,
} from '../src/runtime/api.ts';
import type { BenchSpec } from '../src/spec/schema.ts';
import { findBrowser, launchBrowser } from './browser.ts';
import { NativeUnavailableError, openNative } from './native.ts';
import { connectRemote, type RemoteEndpoint } from './remote.ts';
import { DIST_DIR, MODEL_URL_PREFIX, serveApp } from './server.ts';
import { type AdapterChoice, VulkanNotFoundError } from './vulkan.ts';

export type RuntimeName = 'browser' | 'node';
export const RUNTIME_FLAGS = ['browser', 'node', 'both'] as const;

/**
 * The engine as the CLIs drive it, whichever runtime hosts it: headless Chromium's Web Worker
 * (through Playwright) or a Node process on Dawn. Both run the same engine code.
 */
export interface EngineSession {
  runtime: RuntimeName;
  gpu: GpuInfo;
  /** The browser and its version, or the Dawn build, with what was used to reach the adapter. */
  version: string;
  /** `probeTokens`: next-token logits to take from the run's own model, for `takeProbe(runId)`. */
  run(
    spec: BenchSpec,
    runId: string,
    onProgress: (p: Progress) => void,
    probeTokens?: number[],
  ): Promise<BenchResult>;
  takeProbe(runId: string): Promise<ProbeOutcome | null>;
  verify(request: VerifyRequest): Promise<VerifyResult>;
  /** Greedy generation from a text prompt, each token to `onEvent` as it is read back; `cancel(runId)` stops it. */
  generate(
    request: GenerateRequest,
    runId: string,
    onEvent: (e: GenerateEvent) => void,
  ): Promise<GenerateResult>;
  cancel(runId: string): Promise<void>;
  close(): Promise<void>;
}

/** The runtime started or reached nothing: no browser, no Vulkan loader, no adapter. Exit 3. */
export class RuntimeUnavailableError extends Error {
  override readonly name = 'RuntimeUnavailableError';
}

export interface OpenOptions {
  runtime: RuntimeName;
  browserPath?: string;
  headed?: boolean;
  adapter?: AdapterChoice;
  /** A Hugging Face folder, served to the engine at MODEL_URL_PREFIX. */
  modelDir?: string;
  /** A browser on another machine (--connect, --cdp) instead of one launched here. */
  remote?: RemoteEndpoint;
  /** Where the browser opens the app (--page-url), instead of this CLI's own server. */
  pageUrl?: string;
}

/** Browser where one is installed (not just Playwright's "chrome" channel guess), else Node on Dawn. */
export function defaultRuntime(browserPath?: string): RuntimeName {
  if (browserPath) return 'browser';
  try {
    return findBrowser().executablePath ? 'browser' : 'node';
  } catch {
    return 'node';
  }
}

export function openEngine(options: OpenOptions): Promise<EngineSession> {
  return options.runtime === 'node' ? openNodeEngine(options) : openBrowserEngine(options);
}

/**
 * Serves the built app, opens it in headless Chromium and waits for the engine worker to report
 * its adapter. A page without WebGPU fails here with the engine's own explanation.
 */
async function openBrowserEngine(options: OpenOptions): Promise<EngineSession> {
  const server = options.pageUrl
    ? undefined
    : await serveApp({ distDir: DIST_DIR, modelDir: options.modelDir });
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
  try {
    try {
      browser = options.remote
        ? await connectRemote(options.remote)
        : await launchBrowser(options.browserPath, options.headed);
    } catch (e) {
      throw new RuntimeUnavailableError((e as Error).message);
    }
    // A CDP browser already has its default context (where a device cloud's settings live).
    const context =
      options.remote?.kind === 'cdp' ? (browser.contexts()[0] ?? (await browser.newContext())) : browser;
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error(`[page] ${e.message}`));
    await page.goto(options.pageUrl ?? `${server?.url}/index.html`);
    await page.waitForFunction(() => 'engine' in window, null, { timeout: 30_000 });
    const gpu = await page.evaluate(() => window.engine.gpuInfo());
    const b = browser;
    let progress: (p: Progress) => void = () => undefined;
    await page.exposeFunction('benchProgress', (p: Progress) => progress(p));
    let generated: (e: GenerateEvent) => void = () => undefined;
    await page.exposeFunction('benchGenerateEvent', (e: GenerateEvent) => generated(e));
    return {
      runtime: 'browser',
      gpu,
      version: `Chromium ${browser.version()}`,
      run: (spec, runId, onProgress, probeTokens) => {
        progress = onProgress;
        return inPage(() =>
          page.evaluate(([s, id, p]) => window.benchRun(s, id, p), [spec, runId, probeTokens] as const),
        );
      },
      takeProbe: (runId) =>
        page.evaluate((id): Promise<ProbeOutcome | null> => window.engine.takeProbe(id), runId),
      verify: (request) => inPage(() => page.evaluate((req) => window.engine.verify(req), request)),
      generate: (request, runId, onEvent) => {
        generated = onEvent;
        return inPage(() =>
          page.evaluate(([req, id]) => window.benchGenerate(req, id), [request, runId] as const),
        );
      },
      cancel: (runId) => page.evaluate((id) => window.engine.cancel(id), runId),
      close: async () => {
        // A remote browser belongs to whoever started it: close this run's page, then disconnect
        // (Playwright's close() of a connected browser disconnects; of a launched one, ends it).
        if (options.remote) await page.close().catch(() => undefined);
        await b.close().catch(() => undefined);
        await server?.close();
      },
    };
  } catch (e) {
    await browser?.close().catch(() => undefined);
    await server?.close();
    throw e;
  }
}

/** Runs a page call and gives its error back with the engine's own class name and words. */
async function inPage<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (e) {
    throw new Error(engineMessage(e));
  }
}

/**
 * Starts the engine on Dawn in a Node process. A model folder is served over HTTP as for the
 * browser, so the engine loads it the same way, from an absolute URL.
 */
async function openNodeEngine(options: OpenOptions): Promise<EngineSession> {
  const server = options.modelDir
    ? await serveApp({ distDir: DIST_DIR, modelDir: options.modelDir })
    : undefined;
  try {
    const native = await openNative({ adapter: options.adapter ?? 'default' }).catch((e: unknown) => {
      throw e instanceof VulkanNotFoundError || e instanceof NativeUnavailableError
        ? new RuntimeUnavailableError(e.message)
        : e;
    });
    const absolute = <T extends { model: BenchSpec['model'] }>(x: T): T =>
      x.model.kind === 'url' && x.model.baseUrl.startsWith(MODEL_URL_PREFIX) && server
        ? { ...x, model: { ...x.model, baseUrl: `${server.url}${x.model.baseUrl}` } }
        : x;
    return {
      runtime: 'node',
      gpu: native.gpu,
      version: `${native.dawn} (${native.vulkan})`,
      run: (spec, runId, onProgress, probeTokens) =>
        native.api.run(absolute(spec), onProgress, runId, probeTokens),
      takeProbe: (runId) => native.api.takeProbe(runId),
      verify: (request) => native.api.verify(absolute(request)),
      generate: (request, runId, onEvent) => native.api.generate(absolute(request), onEvent, runId),
      cancel: (runId) => native.api.cancel(runId),
      close: async () => {
        await native.close();
        await server?.close();
      },
    };
  } catch (e) {
    await server?.close();
    throw e;
  }
}

/** Playwright prefixes errors thrown in the page with "page.evaluate: "; keep the engine's own words. */
export function engineMessage(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const text = message.replace(/^page\.evaluate: /, '').split('\n    at ')[0];
  // An engine error from the Node runtime arrives as its own class: name it as the page does.
  return e instanceof Error && e.name !== 'Error' && !text.startsWith(`${e.name}:`)
    ? `${e.name}: ${text}`
    : text;
}

export function describeAdapter(gpu: GpuInfo): string {
  const a = gpu.adapter;
  const name = [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ');
  return `${name}${a.isFallbackAdapter ? ' [FALLBACK / software adapter]' : ''}`;
}
