import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BUILT_CLIS, builtCliPath } from './built-clis.ts';

/**
 * Whether the built app (dist/ for the page, dist-node/ for the Node hosts) is older than anything
 * it is built from, so `npm run bench` and the other CLIs rebuild only when a source changed:
 * a rebuild costs seconds, and Vite empties its output folders first, so an unneeded one also pulls
 * the files from under another CLI running beside it (the e2e suite runs two at a time).
 */

/**
 * What the two Vite builds read: the sources (the CLIs' among them), the shaders, the page, the
 * shipped models, the configs.
 */
const INPUTS = [
  'src',
  'bench',
  'shaders',
  'models',
  'index.html',
  'vite.config.ts',
  'vite.node.config.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];

/** Files of each build's output (a build rewrites every file of its folder), every built CLI among them. */
const OUTPUTS = ['dist/index.html', 'dist-node/host.mjs', ...BUILT_CLIS.map(builtCliPath)];

function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

/** True when every output exists and is newer than every input below `root`. */
export function buildIsFresh(root: string): boolean {
  const outputs = OUTPUTS.map((p) => join(root, p));
  if (!outputs.every((p) => existsSync(p))) return false;
  const built = Math.min(...outputs.map((p) => statSync(p).mtimeMs));
  return INPUTS.every((p) => newest(join(root, p)) < built);
}
