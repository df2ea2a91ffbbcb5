import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * llama.cpp's release source, as node-llama-cpp ships it: `node_modules/node-llama-cpp/llama/
 * gitRelease.bundle` is a git bundle of the very release its prebuilt binaries were built from.
 * The build copies the vocabularies the presets use from it (models/ggml-vocab-*.gguf, into
 * dist/vocab/), and the tests read llama.cpp's own references from it (those vocab GGUFs and their
 * .inp/.out token vectors, gguf-py's numpy dequantization, ggml's headers) instead of copying tens
 * of MB into the repository.
 */

const ROOT = resolve(import.meta.dirname, '..');

/** The bundle file inside the installed node-llama-cpp. */
export const LLAMA_BUNDLE = join(ROOT, 'node_modules/node-llama-cpp/llama/gitRelease.bundle');

/** The release tag node-llama-cpp names for its bundled llama.cpp (llama.cpp.info.json). */
export function llamaReleaseTag(): string {
  const info = join(dirname(LLAMA_BUNDLE), 'llama.cpp.info.json');
  return (JSON.parse(execFileSync('cat', [info], { encoding: 'utf8' })) as { tag: string }).tag;
}

/**
 * A checkout of the bundle, made once per bundle commit under node_modules/.cache (about 3 s) and
 * reused after. Test files run in parallel workers, so each clones into a folder of its own and
 * renames it into place; a worker that loses the race drops its copy and uses the winner's. Needs
 * git on PATH.
 */
export function llamaSource(): string {
  if (!existsSync(LLAMA_BUNDLE)) {
    throw new Error(`${LLAMA_BUNDLE} is missing: run npm ci (node-llama-cpp ships llama.cpp's source there)`);
  }
  const heads = execFileSync('git', ['bundle', 'list-heads', LLAMA_BUNDLE], { encoding: 'utf8' });
  const commit = heads.trim().split(/\s+/)[0];
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new Error(`${LLAMA_BUNDLE}: no commit in its heads (${heads})`);
  const cache = join(ROOT, 'node_modules/.cache/llama-bundle');
  const target = join(cache, commit);
  if (existsSync(join(target, '.complete'))) return target;
  mkdirSync(cache, { recursive: true });
  const scratch = mkdtempSync(join(cache, 'clone-'));
  const work = join(scratch, 'src');
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', LLAMA_BUNDLE, work], { stdio: 'pipe' });
  execFileSync('git', ['-C', work, 'checkout', '--quiet', '--detach', commit], { stdio: 'pipe' });
  execFileSync('touch', [join(work, '.complete')]);
  try {
    renameSync(work, target);
  } catch (e) {
    if (!existsSync(join(target, '.complete'))) throw e;
  }
  rmSync(scratch, { recursive: true, force: true });
  return target;
}

/** A path inside the checkout (`models/ggml-vocab-qwen2.gguf`, `gguf-py`, …). */
export function llamaPath(relative: string): string {
  return join(llamaSource(), relative);
}
