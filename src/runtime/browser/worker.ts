/// <reference lib="webworker" />
import { expose } from 'comlink';
import { acquireGpu } from '../../gpu/device.ts';
import { type BrandVersion, browserFromHints } from '../../measure/env.ts';
import { installAssetReader } from '../../model/assets.ts';
import { installErrorTransfer } from '../api.ts';
import { createEngine } from '../engine.ts';
import { indexedDbTuningStore } from './tuning-store.ts';

/** The browser runtime: the engine in a dedicated Web Worker, on navigator.gpu, exposed through comlink. */
installErrorTransfer();

// The shipped files (vocab/, models/) sit beside the built page; the worker's chunk is in assets/.
// The URL is built in two steps because Vite rewrites `new URL(template, import.meta.url)` into a
// glob over the source tree, which holds none of them.
const distBase = new URL(/* @vite-ignore */ '../', import.meta.url).href;
installAssetReader(async (path) => {
  const res = await fetch(new URL(path, distBase)).catch(() => undefined);
  return res?.ok ? new Uint8Array(await res.arrayBuffer()) : undefined;
});

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

expose(
  createEngine({
    acquireGpu: () => acquireGpu(),
    userAgent: navigator.userAgent,
    browser: browserVersion,
    crossOriginIsolated: self.crossOriginIsolated,
    runtime: { name: 'browser', dawn: null, backend: null },
    tuningStore: indexedDbTuningStore,
  }),
);
