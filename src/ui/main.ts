import { proxy, type Remote } from 'comlink';
import type { BenchResult, EngineApi, Progress } from '../worker/api.ts';
import { startEngine } from '../worker/client.ts';

declare global {
  interface Window {
    /** The engine worker's API; the CLI drives it through Playwright. */
    engine: Remote<EngineApi>;
    /** Runs a spec and forwards progress to `window.benchProgress` when the CLI has exposed one. */
    benchRun: (spec: unknown) => Promise<BenchResult>;
    benchProgress?: (p: Progress) => void;
  }
}

const engine = startEngine();
window.engine = engine;
window.benchRun = (spec) =>
  engine.run(
    spec,
    proxy((p: Progress) => window.benchProgress?.(p)),
  );

const app = document.querySelector<HTMLElement>('#app');
if (app) {
  app.replaceChildren();
  const h1 = document.createElement('h1');
  h1.textContent = 'WebGPU inference benchmark';
  const device = document.createElement('p');
  device.dataset.testid = 'device';
  device.textContent = 'Looking for a WebGPU adapter…';
  app.append(h1, device);
  engine.gpuInfo().then(
    (info) => {
      const a = info.adapter;
      device.textContent = `Adapter: ${[a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ')}${a.isFallbackAdapter ? ' (fallback/software adapter: numbers are not a GPU measurement)' : ''}`;
    },
    (e: Error) => {
      device.dataset.testid = 'error';
      device.textContent = `${e.name}: ${e.message}`;
    },
  );
}
