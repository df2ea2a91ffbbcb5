import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildC, llamaLibDir } from '../c-build.ts';
import { llamaPath } from '../llama-bundle.ts';

/**
 * llama.cpp's greedy generation on the CPU (generate.c: llama-simple's loop on node-llama-cpp's
 * prebuilt libllama and CPU backends), in a child process of its own, so llama.cpp's native code
 * never loads in a test's process. What the engine's greedy ids are checked against.
 */

export interface LlamaGreedy {
  /** The prompt's ids, as llama_tokenize(add_special, parse_special) gave them. */
  prompt: number[];
  /** The generated ids; an end-of-generation id, when one ended it, is the last. */
  tokens: number[];
  /** The generated text: every token's piece (llama_token_to_piece, special = false), joined. */
  text: string;
}

let built: string | undefined;

function generator(): { binary: string; backends: string } {
  const include = llamaPath('include');
  const ggmlInclude = llamaPath('ggml/include');
  const lib = llamaLibDir(/^libllama\.v[\d.]+\.so$/);
  built ??= buildC({
    name: 'llama-generate-shim',
    source: join(import.meta.dirname, 'generate.c'),
    includes: [include, ggmlInclude],
    headers: [join(include, 'llama.h'), join(ggmlInclude, 'ggml.h')],
    libDir: lib.dir,
    library: lib.file,
  });
  return { binary: built, backends: lib.dir };
}

/** `maxTokens` greedy tokens after `prompt` (fewer when an end-of-generation token comes first, unless `ignoreEos`). */
export async function llamaGreedy(
  model: string,
  prompt: string,
  maxTokens: number,
  ignoreEos = false,
): Promise<LlamaGreedy> {
  const { binary, backends } = generator();
  const args = [backends, model, String(maxTokens), ignoreEos ? '1' : '0', prompt];
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(binary, args, { maxBuffer: 1 << 24, timeout: 120_000 }));
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`llama.cpp's greedy generation failed: ${err.stderr?.slice(-2000) ?? err.message}`);
  }
  const out = JSON.parse(stdout) as { prompt: number[]; tokens: number[]; pieces: string[] };
  const bytes = Buffer.concat(out.pieces.map((hex) => Buffer.from(hex, 'hex')));
  return { prompt: out.prompt, tokens: out.tokens, text: new TextDecoder().decode(bytes) };
}
