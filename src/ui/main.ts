import './style.css';
import { proxy, type Remote } from 'comlink';
import { ensureIsolation, type IsolationState } from '../isolation/page.ts';
import type { WllamaJob, WllamaJobResult } from '../peers/job.ts';
import type {
  BenchResult,
  EngineApi,
  GenerateEvent,
  GenerateRequest,
  GenerateResult,
  Progress,
} from '../runtime/api.ts';
import { startEngine } from '../runtime/browser/client.ts';
import { App } from './app.ts';

declare global {
  interface Window {
    /** The engine worker's API; the CLI drives it through Playwright. */
    engine: Remote<EngineApi>;
    /**
     * Runs a spec under `runId` and forwards progress to `window.benchProgress` when the CLI has
     * exposed one; `engine.cancel(runId)` cancels it, even before it has started.
     */
    benchRun: (spec: unknown, runId: string, probeTokens?: number[]) => Promise<BenchResult>;
    benchProgress?: (p: Progress) => void;
    /**
     * Greedy generation under `runId`, each event forwarded to `window.benchGenerateEvent` when the
     * CLI has exposed one (npm run generate in the browser runtime).
     */
    benchGenerate: (request: GenerateRequest, runId: string) => Promise<GenerateResult>;
    benchGenerateEvent?: (e: GenerateEvent) => void;
    /** llama.cpp in this page (wllama), as `--peer wllama` runs it; loaded on first use. */
    wllamaPeer: (modelUrl: string, job: WllamaJob) => Promise<WllamaJobResult>;
    /** How the page is cross-origin isolated, or why not (src/isolation/page.ts). */
    pageIsolation: IsolationState;
  }
}

/** Starts the engine and the page once the page is as isolated as this host allows. */
function boot(isolation: IsolationState): void {
  window.pageIsolation = isolation;
  const engine = startEngine();
  window.engine = engine;
  window.benchRun = (spec, runId, probeTokens) =>
    engine.run(
      spec,
      proxy((p: Progress) => window.benchProgress?.(p)),
      runId,
      probeTokens,
    );

  window.benchGenerate = (request, runId) =>
    engine.generate(
      request,
      proxy((e: GenerateEvent) => window.benchGenerateEvent?.(e)),
      runId,
    );

  // wllama and its 8.8 MB of WebAssembly come only when a peer is asked for.
  window.wllamaPeer = async (modelUrl, job) => {
    const response = await fetch(modelUrl);
    if (!response.ok) throw new Error(`${modelUrl}: HTTP ${response.status}`);
    return (await import('../peers/wllama.ts')).runWllama(job, await response.blob());
  };

  const root = document.querySelector<HTMLElement>('#app');
  if (root) {
    const app = new App(engine);
    root.replaceChildren(app.element);
    void app.start(new URLSearchParams(location.search));
  }
}

// On a host without isolation headers the first visit installs the isolation service worker and
// reloads; nothing starts before that (ensureIsolation gives null).
void ensureIsolation().then((isolation) => {
  if (isolation) boot(isolation);
});
