/**
 * HTTP headers for every server of the app (Vite dev and preview, the CLI's static server).
 * COOP/COEP make the page cross-origin isolated, which un-coarsens performance.now() in the
 * worker; the CSP allows only same-origin connections, so nothing leaves the machine.
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
} as const;

/** Production CSP. Dev mode (HMR) needs inline and websocket allowances, so it is served only by preview and the CLI. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; worker-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; form-action 'none'";
