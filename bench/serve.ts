// Serves the built app on 127.0.0.1 (for Playwright's webServer and for opening it by hand).
import { parseArgs } from 'node:util';
import { npmAncestors, stopWhenLauncherGone } from './launcher-watch.ts';
import { DIST_DIR, serveApp } from './server.ts';

// Read before serving, while the launcher is surely alive (bench/launcher-watch.ts).
const launcher = npmAncestors();
const { values } = parseArgs({ options: { port: { type: 'string', default: '4173' } } });
const server = await serveApp({ distDir: DIST_DIR, port: Number(values.port) });
console.log(`Serving dist/ at ${server.url}`);
// Killing the npm/npx that started this must not leave the port held (bench/launcher-watch.ts).
const stop = () => {
  void server.close().then(() => process.exit(0));
};
stopWhenLauncherGone(stop, launcher);
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
