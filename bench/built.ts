// npm run bench|verify|generate|serve-api: builds the app unless the build is newer than every
// source (build-fresh.ts), then runs the CLI named first, with the rest of the arguments: the
// built one (dist-node/cli-<name>.mjs, plain JavaScript, built with the engine host), so it starts
// without compiling TypeScript. --help (-h) needs nothing built, so it skips the build (issue 37:
// Vite's output and a few seconds before a help text) and runs the CLI's source.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildIsFresh } from './build-fresh.ts';
import { builtCliOf } from './built-clis.ts';

const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error('usage: tsx bench/built.ts bench/CLI.ts [arguments]');
  process.exit(2);
}
const built = builtCliOf(script);
const help = args.includes('--help') || args.includes('-h');
if (!help && !buildIsFresh(process.cwd())) {
  const build = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// The CLI reads its arguments from process.argv as if it had been started itself.
const path = resolve(built && !help ? built : script);
process.argv = [process.argv[0], path, ...args];
await import(pathToFileURL(path).href);
