import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildC, llamaLibDir } from '../c-build.ts';
import { llamaPath } from '../llama-bundle.ts';

/**
 * llama.cpp's quantizer on the tests' F32 files (quantize.c: llama_model_quantize, what the
 * llama-quantize tool runs). LLAMA_QUANTIZE names a llama-quantize binary to use instead, for the
 * check that both make the same bytes (README.md beside this file).
 */

/** llama.h's enum llama_ftype, for the file types the tests make. */
export const LLAMA_FTYPES = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q8_0: 7,
  Q5_0: 8,
  Q5_1: 9,
  Q2_K: 10,
  Q3_K_S: 11,
  Q3_K_M: 12,
  Q4_K_S: 14,
  Q4_K_M: 15,
  Q5_K_S: 16,
  Q5_K_M: 17,
  Q6_K: 18,
  IQ4_NL: 25,
} as const;
export type LlamaFtype = keyof typeof LLAMA_FTYPES;

let built: string | undefined;

function quantizer(): string {
  if (built) return built;
  const include = llamaPath('include');
  const ggmlInclude = llamaPath('ggml/include');
  const lib = llamaLibDir(/^libllama\.v[\d.]+\.so$/);
  built = buildC({
    name: 'llama-quantize-shim',
    source: join(import.meta.dirname, 'quantize.c'),
    includes: [include, ggmlInclude],
    headers: [join(include, 'llama.h'), join(ggmlInclude, 'ggml.h')],
    libDir: lib.dir,
    library: lib.file,
  });
  return built;
}

/**
 * `llama-quantize [--pure] IN OUT FTYPE`: the ftype's mix (Q4_K_M: Q4_K with Q6_K for some
 * tensors, and the fallbacks for rows that are not whole K blocks), or with `pure` every 2-D tensor
 * in the ftype's base type. Throws with llama.cpp's log when it fails.
 */
export function llamaQuantize(input: string, output: string, ftype: LlamaFtype, pure = false): void {
  const tool = process.env.LLAMA_QUANTIZE;
  const args = tool
    ? [...(pure ? ['--pure'] : []), input, output, ftype]
    : [input, output, String(LLAMA_FTYPES[ftype]), ...(pure ? ['pure'] : [])];
  try {
    execFileSync(tool ?? quantizer(), args, { stdio: 'pipe', maxBuffer: 1 << 26 });
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(
      `llama quantize ${ftype}${pure ? ' (pure)' : ''} failed: ${err.stderr?.toString().slice(-2000) ?? err.message}`,
    );
  }
}
