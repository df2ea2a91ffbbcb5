// npm run browser-server [-- --port N --host H --browser PATH --headed]
// A Playwright browser server for remote runs (`npm run bench -- --connect ws://HOST:PORT/webgpu-bench`):
// this machine's Chrome or Chromium, started with the WebGPU flags, since Playwright's own browser
// download is often unavailable on a lab machine.
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';
import { findBrowser, launchOptions } from './browser.ts';
import { PLAYWRIGHT_VERSION } from './remote.ts';

const HELP = `Usage: npm run browser-server [-- --port N --host H --browser PATH --headed]

Starts this machine's Chrome or Chromium with the WebGPU flags behind a Playwright browser server,
for a benchmark driven from another machine:

  npm run bench -- --connect ws://THIS-HOST:PORT/webgpu-bench

  --port N        port to listen on (default 3999; 0: any free one)
  --host H        address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every
                  interface. Whoever reaches the port drives the browser: open it only on a network
                  you trust, or tunnel it, e.g. ssh -L)
  --browser PATH  the browser (default: $CHROMIUM_PATH, Playwright's, or a system Chrome/Chromium)
  --headed        show the window (a laptop's real GPU is also used headless)

The client must run the same Playwright major.minor (${PLAYWRIGHT_VERSION} here): both sides from this
repository's lockfile. A plain \`npx playwright run-server\` works too, but it passes the client's
browser flags and executable only with --unsafe.`;

function fail(message: string): never {
  console.error(`browser-server: ${message}\n\n${HELP}`);
  process.exit(2);
}

let args: { port?: string; host?: string; browser?: string; headed: boolean; help: boolean };
try {
  args = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      browser: { type: 'string' },
      headed: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values;
} catch (e) {
  fail((e as Error).message);
}
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
const port = Number(args.port ?? 3999);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port takes 0…65535, got "${args.port}"`);
const host = args.host ?? '127.0.0.1';

let choice: ReturnType<typeof findBrowser>;
try {
  choice = findBrowser(args.browser);
} catch (e) {
  fail((e as Error).message);
}
let server: Awaited<ReturnType<typeof chromium.launchServer>>;
try {
  server = await chromium.launchServer({
    ...launchOptions(choice, args.headed),
    port,
    host,
    wsPath: '/webgpu-bench',
  });
} catch (e) {
  console.error(
    `browser-server: could not start the browser (${choice.source}): ${(e as Error).message.split('\n')[0]}\n` +
      'Install Chromium (Debian: apt-get install chromium) or Chrome, or point CHROMIUM_PATH / --browser at one.',
  );
  process.exit(3);
}
// The one line a script waits for.
console.log(`browser server: ${server.wsEndpoint()} (${choice.source}, Playwright ${PLAYWRIGHT_VERSION})`);
const stop = async () => {
  await server.close().catch(() => undefined);
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
