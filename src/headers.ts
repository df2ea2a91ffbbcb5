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

/**
 * Production CSP. Dev mode (HMR) needs inline and websocket allowances, so it is served only by
 * preview and the CLI. wllama (the llama.cpp peer in the page) starts its worker from a blob of
 * its bundled code and compiles its WebAssembly there: hence `blob:` workers and
 * 'wasm-unsafe-eval' (WebAssembly compilation only, not JavaScript eval). Both stay same-origin.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; form-action 'none'";
