import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { llamaPath } from '../llama-bundle.ts';

/**
 * gguf-py's numpy quants module (the llama.cpp release's gguf-py/gguf/quants.py), the second
 * reference for src/quant: a Python port written separately from ggml's C. It runs under Debian's
 * python3, whose numpy is Debian's python3-numpy (`.ci/run` installs it where it is missing); the
 * python3 first on PATH may be another interpreter without numpy.
 */

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'gguf_py.py');

function python(args: string[]): string {
  return execFileSync(PYTHON, [SCRIPT, llamaPath('gguf-py'), ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    // Keep the shared checkout of the bundle free of __pycache__ folders.
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
}

/** One tensor for gguf-py to dequantize: `rows` rows of blocks of ggml type `type`. */
export interface GgufPyJob {
  readonly type: number;
  readonly rows: number;
  readonly blocks: Uint8Array;
}

/** gguf-py's dequantization of each job, in one Python process (its start-up is most of the cost). */
export function ggufPyDequantize(jobs: readonly GgufPyJob[]): Float32Array<ArrayBuffer>[] {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-py-'));
  try {
    const manifest = jobs.map((job, i) => {
      writeFileSync(join(dir, `${i}.bin`), job.blocks);
      return { type: job.type, rows: job.rows, input: `${i}.bin`, output: `${i}.f32` };
    });
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    python(['dequantize', dir]);
    return manifest.map((m) => {
      const bytes = readFileSync(join(dir, m.output));
      const out = new Float32Array(bytes.length / 4);
      new Uint8Array(out.buffer).set(bytes);
      return out;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** gguf-py's GGMLQuantizationType and GGML_QUANT_SIZES: name → [code, block elements, block bytes]. */
export function ggufPyTypes(): Record<string, [number, number, number]> {
  return JSON.parse(python(['types'])) as Record<string, [number, number, number]>;
}
