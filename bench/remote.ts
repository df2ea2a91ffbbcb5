import { createRequire } from 'node:module';
import type { Browser } from '@playwright/test';
import { webgpuArgs } from './browser.ts';

/**
 * Browsers on other machines: a Playwright browser server (`npm run browser-server`, Playwright's
 * `launchServer`, or `npx playwright run-server --unsafe`) reached with `--connect ws://…`, or a
 * Chromium reached over the DevTools protocol with `--cdp http://…`, as device clouds offer them.
 */

export type RemoteKind = 'connect' | 'cdp';

export interface RemoteEndpoint {
  kind: RemoteKind;
  endpoint: string;
}

/** The Playwright this client runs; a browser server must share its major.minor. */
export const PLAYWRIGHT_VERSION: string = (() => {
  try {
    return (createRequire(import.meta.url)('@playwright/test/package.json') as { version: string }).version;
  } catch {
    // The air-gapped kit carries no Playwright (and drives no browser).
    return 'none';
  }
})();

/** How long a connection may take before the endpoint counts as unreachable. */
const CONNECT_TIMEOUT_MS = 30_000;

/** A remote browser could not be reached or used; the message says what to do. */
export class RemoteBrowserError extends Error {
  override readonly name = 'RemoteBrowserError';
}

/** `--connect a,b --connect c` as endpoints, in order; each must be a ws(s):// (connect) or http(s)/ws(s) (cdp) URL. */
export function parseEndpoints(kind: RemoteKind, values: readonly string[]): RemoteEndpoint[] {
  const out: RemoteEndpoint[] = [];
  for (const value of values.flatMap((v) => v.split(','))) {
    const endpoint = value.trim();
    if (!endpoint) continue;
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new RemoteBrowserError(`--${kind} ${endpoint}: not a URL`);
    }
    const schemes = kind === 'connect' ? ['ws:', 'wss:'] : ['http:', 'https:', 'ws:', 'wss:'];
    if (!schemes.includes(url.protocol))
      throw new RemoteBrowserError(
        `--${kind} ${endpoint}: expected ${kind === 'connect' ? 'ws://HOST:PORT/PATH (a Playwright browser server)' : 'http://HOST:PORT or ws://… (a DevTools endpoint)'}`,
      );
    out.push({ kind, endpoint });
  }
  return out;
}

/**
 * The versions in Playwright's refusal of a client whose major.minor differs from the server's
 * (an HTTP 428 whose body names both), or null when the error is something else.
 */
export function versionMismatch(message: string): { server: string; client: string } | null {
  const server = /server version:\s*v?(\d+\.\d+(?:\.\d+)?)/i.exec(message);
  const client = /client version:\s*v?(\d+\.\d+(?:\.\d+)?)/i.exec(message);
  if (!server || !/428|version mismatch/i.test(message)) return null;
  return { server: server[1], client: client?.[1] ?? PLAYWRIGHT_VERSION };
}

/** A connection failure, in words that say what to do. */
export function connectionMessage(remote: RemoteEndpoint, error: unknown): string {
  const shown = redactEndpoint(remote.endpoint);
  const message = (error as Error).message ?? String(error);
  const mismatch = versionMismatch(message);
  if (mismatch) {
    return (
      `${shown}: the browser server runs Playwright ${mismatch.server} and this client ${mismatch.client}; ` +
      'a client and a server must share major.minor. On the other machine run `npm run browser-server` from a checkout ' +
      `of this repository (its lockfile pins Playwright ${PLAYWRIGHT_VERSION}), or \`npx playwright@${PLAYWRIGHT_VERSION} run-server --unsafe\`.`
    );
  }
  if (
    /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|Timeout .* exceeded|socket hang up|ECONNRESET/i.test(
      message,
    )
  ) {
    const why = /ECONNREFUSED/.test(message)
      ? 'connection refused'
      : /ENOTFOUND/.test(message)
        ? 'no such host'
        : /Timeout/i.test(message)
          ? `no answer in ${CONNECT_TIMEOUT_MS / 1000} s`
          : (/(E[A-Z]+)/.exec(message)?.[1] ?? 'the connection failed');
    return `${shown}: cannot reach the ${remote.kind === 'connect' ? 'browser server' : 'DevTools endpoint'} (${why}). ${
      remote.kind === 'connect'
        ? 'Is `npm run browser-server -- --host 0.0.0.0` running there, and is its port open to this machine?'
        : 'Is Chrome running there with --remote-debugging-port, and is that port reachable from this machine?'
    }`;
  }
  return `${shown}: ${message.split('\n')[0]}`;
}

/**
 * Connects to a remote browser. `--connect` asks Playwright to expose this machine's loopback to
 * the remote browser through the connection (`exposeNetwork: '<loopback>'`), so the page this CLI
 * serves on 127.0.0.1 is what the remote browser opens: no port of this machine is opened to the
 * network, and a loopback origin is a secure context, which WebGPU needs. The WebGPU flags go in
 * the launch options, which a browser server started by `npm run browser-server` already has and
 * `npx playwright run-server` applies only with `--unsafe`. A CDP endpoint has no such tunnel: the
 * browser must reach the page itself (`--page-url`, or this machine's loopback when it runs here).
 */
export async function connectRemote(remote: RemoteEndpoint): Promise<Browser> {
  // Loaded on use, like browser.ts's launch, so the native CLIs run without Playwright.
  const { chromium } = await import('@playwright/test');
  try {
    if (remote.kind === 'cdp')
      return await chromium.connectOverCDP(remote.endpoint, { timeout: CONNECT_TIMEOUT_MS });
    return await chromium.connect(remote.endpoint, {
      timeout: CONNECT_TIMEOUT_MS,
      exposeNetwork: '<loopback>',
      headers: { 'x-playwright-launch-options': JSON.stringify({ args: webgpuArgs(), headless: true }) },
    });
  } catch (e) {
    throw new RemoteBrowserError(connectionMessage(remote, e));
  }
}

/**
 * An endpoint as results and messages show it: without a query, a fragment or credentials, where
 * device clouds put their access keys.
 */
export function redactEndpoint(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}${url.search || url.username ? ' (credentials hidden)' : ''}`;
  } catch {
    return endpoint;
  }
}

/** What a result records of the remote browser that ran it. */
export function remoteRecord(remote: RemoteEndpoint): {
  endpoint: string;
  kind: RemoteKind;
  playwright: string;
} {
  return { endpoint: redactEndpoint(remote.endpoint), kind: remote.kind, playwright: PLAYWRIGHT_VERSION };
}
