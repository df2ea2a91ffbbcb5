/// <reference lib="webworker" />
import { expose } from 'comlink';
import { version } from '../../package.json';
import { CancelledError } from '../errors.ts';
import { acquireGpu, type Gpu } from '../gpu/device.ts';
import { type BrandVersion, browserFromHints } from '../measure/env.ts';
import { runBench } from '../measure/run.ts';
import { parseBenchSpec } from '../measure/spec.ts';
import { loadModel } from '../model/source.ts';
import { verifyModel } from '../model/verify.ts';
import { type EngineApi, type GpuInfo, installErrorTransfer } from './api.ts';

installErrorTransfer();

let gpuPromise: Promise<Gpu> | undefined;
/** Running runs by id, and ids cancelled before their run started. */
const running = new Map<string, AbortController>();
const cancelledEarly = new Set<string>();
let anonymousRuns = 0;

/** One device per worker, acquired on first use; a lost device is replaced on the next call. */
async function gpu(): Promise<Gpu> {
  const current = gpuPromise && (await gpuPromise.catch(() => undefined));
  if (!current || current.lostError) gpuPromise = acquireGpu();
  return gpuPromise as Promise<Gpu>;
}

function gpuInfoOf(g: Gpu): GpuInfo {
  return { adapter: g.adapter, features: g.features, limits: g.limits, userAgent: navigator.userAgent };
}

/** The browser and its full version; client hints where available, else the user-agent string. */
async function browserVersion(): Promise<string> {
  const hints = (
    navigator as Navigator & {
      userAgentData?: { getHighEntropyValues(h: string[]): Promise<{ fullVersionList?: BrandVersion[] }> };
    }
  ).userAgentData;
  try {
    const values = await hints?.getHighEntropyValues(['fullVersionList']);
    return browserFromHints(values?.fullVersionList ?? [], navigator.userAgent);
  } catch {
    return browserFromHints([], navigator.userAgent);
  }
}

const api: EngineApi = {
  async gpuInfo() {
    return gpuInfoOf(await gpu());
  },

  async verify(request) {
    const g = await gpu();
    const loaded = await loadModel(request.model);
    const outcome = await verifyModel(g, loaded, request.tokens);
    return { ...outcome, gpu: gpuInfoOf(g), modelName: loaded.name, warnings: loaded.warnings };
  },

  async run(input, onProgress, runId) {
    const id = runId ?? `run-${++anonymousRuns}`;
    const controller = new AbortController();
    running.set(id, controller);
    if (cancelledEarly.delete(id)) controller.abort(new CancelledError('Cancelled before the run started.'));
    try {
      const spec = parseBenchSpec(input);
      const env = {
        userAgent: navigator.userAgent,
        browser: await browserVersion(),
        crossOriginIsolated: self.crossOriginIsolated,
        toolVersion: version,
      };
      return await runBench(await gpu(), spec, env, {
        // Progress is advisory: a caller that went away must not fail the run.
        onProgress: (p) => void Promise.resolve(onProgress?.(p)).catch(() => undefined),
        signal: controller.signal,
      });
    } finally {
      running.delete(id);
    }
  },

  async cancel(runId) {
    const reason = () => new CancelledError('Cancelled by the user; the finished points are kept.');
    if (runId === undefined) {
      for (const c of running.values()) c.abort(reason());
      return;
    }
    const controller = running.get(runId);
    if (controller) controller.abort(reason());
    else cancelledEarly.add(runId);
  },
};

expose(api);
