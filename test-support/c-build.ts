import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Small C programs the tests build with Debian's gcc against llama.cpp's own prebuilt libraries
 * (node-llama-cpp's linux-x64 binaries: the very release its bundled source is), so what runs is
 * llama.cpp's machine code, not a copy of its source. Each is built once per (source, headers,
 * library) under node_modules/.cache (about 0.2 s) and reused after.
 */

const ROOT = resolve(import.meta.dirname, '..');
const BINS = join(ROOT, 'node_modules/@node-llama-cpp/linux-x64/bins');

/** The folder holding node-llama-cpp's prebuilt `library` (libggml-base.so, libllama.v*.so …) for linux-x64 (CPU). */
export function llamaLibDir(library: RegExp): { dir: string; file: string } {
  if (!existsSync(BINS)) {
    throw new Error(`${BINS} is missing: run npm ci (node-llama-cpp's optional linux-x64 binaries)`);
  }
  const found = readdirSync(BINS, { recursive: true, encoding: 'utf8' })
    .filter((p) => library.test(p.split('/').pop() ?? ''))
    .sort();
  if (found.length === 0) throw new Error(`no library matching ${library} under ${BINS}`);
  const path = join(BINS, found[0]);
  return { dir: dirname(path), file: path.split('/').pop() ?? '' };
}

/**
 * The binary of C `source`, compiled with `includes` and linked to `library` in `libDir`, cached
 * under node_modules/.cache/<name>. Parallel test workers each build into a folder of their own and
 * rename it into place; a loser of the race keeps the winner's.
 */
export function buildC(opts: {
  name: string;
  source: string;
  includes: string[];
  /** Header files whose text keys the cache besides the source. */
  headers: string[];
  libDir: string;
  library: string;
}): string {
  const key = createHash('sha256')
    .update(readFileSync(opts.source))
    .update(opts.headers.map((h) => readFileSync(h, 'utf8')).join('\n'))
    .update(`${opts.libDir}/${opts.library}`)
    .digest('hex')
    .slice(0, 16);
  const cache = join(ROOT, 'node_modules/.cache', opts.name);
  const target = join(cache, key);
  const binary = join(target, opts.name);
  if (existsSync(binary)) return binary;
  mkdirSync(cache, { recursive: true });
  const scratch = mkdtempSync(join(cache, 'build-'));
  execFileSync(
    'gcc',
    [
      '-O1',
      '-std=c11',
      '-Wall',
      '-Werror',
      ...opts.includes.map((i) => `-I${i}`),
      opts.source,
      `-L${opts.libDir}`,
      `-l:${opts.library}`,
      `-Wl,-rpath,${opts.libDir}`,
      '-o',
      join(scratch, opts.name),
    ],
    { stdio: 'pipe' },
  );
  try {
    renameSync(scratch, target);
  } catch (e) {
    if (!existsSync(binary)) throw e;
    rmSync(scratch, { recursive: true, force: true });
  }
  return binary;
}
