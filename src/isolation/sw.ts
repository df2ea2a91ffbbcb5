/// <reference lib="webworker" />
/**
 * The isolation service worker, for hosts that send no COOP/COEP headers (GitHub Pages, a plain
 * static server). It re-serves every same-origin response of its scope with the headers this
 * project's own servers send (src/headers.ts: isolation and the CSP), so after one reload the page
 * is cross-origin isolated and performance.now() is not coarsened. Requests to other origins pass
 * through untouched; the CSP then keeps the page from making any.
 */
import { CONTENT_SECURITY_POLICY, ISOLATION_HEADERS } from '../headers.ts';

declare const self: ServiceWorkerGlobalScope;

self.addEventListener('install', () => {
  void self.skipWaiting();
});
self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

async function withIsolation(request: Request): Promise<Response> {
  const response = await fetch(request);
  // Opaque and error responses cannot be rebuilt; a redirect is followed by the browser itself.
  if (response.status === 0 || response.type === 'opaqueredirect') return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION_HEADERS)) headers.set(name, value);
  if (request.mode === 'navigate') headers.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  // A request Chrome may make with only-if-cached outside same-origin mode would throw in fetch().
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  if (new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(withIsolation(request));
});
