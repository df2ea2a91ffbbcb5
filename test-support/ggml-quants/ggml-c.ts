import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildC, llamaLibDir } from '../c-build.ts';
import { llamaPath } from '../llama-bundle.ts';

/**
 * ggml's C, as the reference for src/quant: harness.c built with Debian's gcc against the release's
 * ggml.h (from the bundle) and linked to the release's prebuilt libggml-base.so (from
 * node-llama-cpp's linux-x64 binaries), so the quantizer and dequantizer that run are llama.cpp's
 * own machine code, not a copy of its source.
 */

const HARNESS_SOURCE = join(import.meta.dirname, 'harness.c');

let built: string | undefined;

/** The harness binary (test-support/c-build.ts builds and caches it). */
export function ggmlHarness(): string {
  if (built) return built;
  const include = llamaPath('ggml/include');
  const lib = llamaLibDir(/^libggml-base\.so$/);
  built = buildC({
    name: 'ggml-quants',
    source: HARNESS_SOURCE,
    includes: [include],
    headers: [join(include, 'ggml.h')],
    libDir: lib.dir,
    library: lib.file,
  });
  return built;
}

function run(args: string[], input: Uint8Array): Buffer {
  return execFileSync(ggmlHarness(), args, { input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] });
}

function floats(buf: Buffer, at: number, count: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(count);
  new Uint8Array(out.buffer).set(buf.subarray(at, at + count * 4));
  return out;
}

/** What ggml_quantize_chunk makes of `rows` in `type`, and what ggml's to_float makes of that. */
export interface GgmlQuantized {
  readonly blocks: Uint8Array<ArrayBuffer>;
  readonly dequantized: Float32Array<ArrayBuffer>;
}

/** Quantizes nrows rows of nPerRow f32 with ggml's own quantizer (with importance weights if given). */
export function ggmlQuantize(
  type: number,
  rows: Float32Array,
  nrows: number,
  nPerRow: number,
  imatrix?: Float32Array,
): GgmlQuantized {
  const input = new Uint8Array(rows.byteLength + (imatrix?.byteLength ?? 0));
  input.set(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength));
  if (imatrix)
    input.set(new Uint8Array(imatrix.buffer, imatrix.byteOffset, imatrix.byteLength), rows.byteLength);
  const out = run(['quantize', `${type}`, `${nrows}`, `${nPerRow}`, imatrix ? '1' : '0'], input);
  const blockBytes = out.length - nrows * nPerRow * 4;
  const blocks = new Uint8Array(blockBytes);
  blocks.set(out.subarray(0, blockBytes));
  return { blocks, dequantized: floats(out, blockBytes, nrows * nPerRow) };
}

/** ggml's to_float of nrows rows of nPerRow elements in `type`, row by row. */
export function ggmlDequantize(
  type: number,
  blocks: Uint8Array,
  nrows: number,
  nPerRow: number,
): Float32Array<ArrayBuffer> {
  return floats(run(['dequantize', `${type}`, `${nrows}`, `${nPerRow}`], blocks), 0, nrows * nPerRow);
}

/** One entry of ggml.c's type_traits, as ggml_get_type_traits returns it. */
export interface GgmlTraits {
  readonly code: number;
  readonly typeName: string;
  readonly blockElems: number;
  readonly blockBytes: number;
  readonly hasToFloat: boolean;
}

/** type_traits for every code of enum ggml_type, 0 … GGML_TYPE_COUNT − 1. */
export function ggmlTraits(): GgmlTraits[] {
  const text = run(['traits'], new Uint8Array(0)).toString('utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [code, typeName, blockElems, blockBytes, hasToFloat] = line.split('\t');
      return {
        code: Number(code),
        typeName,
        blockElems: Number(blockElems),
        blockBytes: Number(blockBytes),
        hasToFloat: hasToFloat === '1',
      };
    });
}
