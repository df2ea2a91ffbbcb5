/**
 * Cross-origin isolation on any static host. This project's servers send COOP/COEP; a host that
 * does not (GitHub Pages, a plain static server) gets them from the isolation service worker
 * (sw.ts, built to `coi-sw.js` beside index.html): registered on the first visit, then the page
 * reloads once under it. Where service workers are unavailable (an insecure origin, a browser
 * setting, a private window that forbids them), or the reload did not isolate the page, the page
 * runs without isolation and says why; results record `crossOriginIsolated: false`.
 */

/** How the page came to be isolated, or why it is not. */
export type IsolationState =
  | { isolated: true; by: 'headers' | 'service-worker' }
  | { isolated: false; why: string };

const RELOADED = 'coi-sw-reloaded';
const INSTALL_TIMEOUT_MS = 10_000;

/** The file the build writes the service worker to, beside index.html (vite.config.ts). */
export const ISOLATION_SW = 'coi-sw.js';

/**
 * Returns how the page stands, or null when it is about to reload under the service worker (the
 * caller then starts nothing).
 */
export async function ensureIsolation(): Promise<IsolationState | null> {
  if (globalThis.crossOriginIsolated) {
    sessionStorage.removeItem(RELOADED);
    return { isolated: true, by: navigator.serviceWorker?.controller ? 'service-worker' : 'headers' };
  }
  if (!('serviceWorker' in navigator) || !window.isSecureContext) {
    return {
      isolated: false,
      why: 'this host sends no cross-origin isolation headers, and service workers are unavailable here, so none can add them',
    };
  }
  if (sessionStorage.getItem(RELOADED)) {
    sessionStorage.removeItem(RELOADED);
    return {
      isolated: false,
      why: 'the isolation service worker was installed and the page reloaded, but it is still not isolated (another service worker, or the host’s own headers, may be in the way)',
    };
  }
  try {
    // A browser that blocks service workers may leave these pending forever: give up after a while.
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer in ${INSTALL_TIMEOUT_MS / 1000} s`)), INSTALL_TIMEOUT_MS),
    );
    await Promise.race([
      navigator.serviceWorker
        .register(new URL(ISOLATION_SW, document.baseURI), { type: 'module' })
        .then(() => navigator.serviceWorker.ready),
      timeout,
    ]);
  } catch (e) {
    return {
      isolated: false,
      why: `the isolation service worker could not be installed: ${(e as Error).message}`,
    };
  }
  sessionStorage.setItem(RELOADED, '1');
  location.reload();
  return null;
}
