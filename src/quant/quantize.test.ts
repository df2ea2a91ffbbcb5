import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROW, testRows } from '../../test-support/ggml-quants/cases.ts';
import { ggmlQuantize } from '../../test-support/ggml-quants/ggml-c.ts';
import { llamaQuantize } from '../../test-support/llama-quantize/quantize.ts';
import { bytesSource } from '../model/byte-source.ts';
import { parseGgufHeader } from '../model/gguf.ts';
import { loadGgufModel } from '../model/gguf-load.ts';
import { GGUF_TYPE_CODES, writeGguf } from '../model/gguf-writer.ts';
import { mulberry32 } from '../random.ts';
import { QUANT_TYPES } from './registry.ts';
import type { QuantType } from './types.ts';

/**
 * The quantizers this engine has (Q8_0, Q4_0, Q4_K: `--weights q8_0|q4_0|q4_k`) against ggml's own
 * machine code (ggml_quantize_chunk in the release's libggml-base.so, without an importance matrix:
 * what llama-quantize runs), byte for byte: the edge rows of the dequantization tests, and rows
 * shaped like a trained model's weights (normal, a different spread per row, a few outliers).
 */

/** Rows like a linear layer's: normal values at a per-row scale, one in ~500 an outlier at 8×. */
function weightLikeRows(rows: number, seed: number): Float32Array<ArrayBuffer> {
  const next = mulberry32(seed);
  const out = new Float32Array(rows * ROW);
  for (let r = 0; r < rows; r++) {
    const spread = 0.005 + 0.2 * next();
    for (let i = 0; i < ROW; i++) {
      const u = 1 - next();
      const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
      out[r * ROW + i] = spread * normal * (next() < 0.002 ? 8 : 1);
    }
  }
  return out;
}

/** The first few blocks whose bytes differ, as "block b (row r): byte i …", '' when none does. */
function blockMismatches(type: QuantType, got: Uint8Array, want: Uint8Array): string {
  if (got.length !== want.length) return `${got.length} bytes, expected ${want.length}`;
  const bad: string[] = [];
  let count = 0;
  for (let b = 0; b < got.length / type.blockBytes; b++) {
    const at = b * type.blockBytes;
    for (let i = 0; i < type.blockBytes; i++) {
      if (got[at + i] === want[at + i]) continue;
      count++;
      if (bad.length < 6)
        bad.push(
          `block ${b} (row ${Math.floor((b * type.blockElems) / ROW)}): byte ${i} is ${got[at + i]}, ggml's ${want[at + i]}`,
        );
      break;
    }
  }
  return count === 0 ? '' : `${count} of ${got.length / type.blockBytes} blocks differ: ${bad.join('; ')}`;
}

const quantizers = QUANT_TYPES.filter((t) => t.quantize);

describe("quantization, byte for byte against ggml's C (libggml-base.so)", () => {
  it('covers the types a run can quantize to', () => {
    expect(quantizers.map((t) => t.name)).toEqual(['Q4_0', 'Q8_0', 'Q4_K']);
  });

  const edges = testRows();
  const cases: [string, Float32Array<ArrayBuffer>, number][] = [
    ['the edge rows', edges.rows, edges.names.length],
    ['rows shaped like trained weights', weightLikeRows(96, 11), 96],
  ];
  for (const type of quantizers) {
    for (const [name, rows, nrows] of cases) {
      it(`${type.name}: ${name}`, () => {
        const want = ggmlQuantize(type.ggml, rows, nrows, ROW).blocks;
        const blocks = (nrows * ROW) / type.blockElems;
        const got = new Uint8Array(blocks * type.blockBytes);
        type.quantize?.(rows, 0, blocks, got, 0);
        // The check compares something: ggml's bytes are not all zeros.
        expect(want.some((b) => b !== 0)).toBe(true);
        expect(blockMismatches(type, got, want)).toBe('');
      });
    }
  }
});

describe("the trained model's files against llama-quantize's", () => {
  // The shipped F16 file, quantized by this project's writer (src/model/gguf-writer.ts, through the
  // quantizers above) and by llama.cpp's own llama_model_quantize as `llama-quantize --pure` runs it:
  // every tensor's bytes, name by name.
  const source = join(import.meta.dirname, '..', '..', 'models', 'trained-4m.gguf');
  const loaded = loadGgufModel(
    bytesSource(new Uint8Array(readFileSync(source)), 'trained-4m.gguf'),
    'trained-4m',
  );
  const dir = mkdtempSync(join(tmpdir(), 'quantize-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Each tensor's type and bytes, by name (a tensor's bytes run to the next one's offset, or the file's end). */
  function tensorBytes(bytes: Uint8Array): Map<string, { type: number; bytes: Uint8Array }> {
    const h = parseGgufHeader(bytes);
    const sorted = [...h.tensors].sort((a, b) => a.offset - b.offset);
    return new Map(
      sorted.map((t, i) => {
        const end = i + 1 < sorted.length ? h.dataOffset + sorted[i + 1].offset : bytes.length;
        // The padding to the next tensor's alignment is zeros in both writers.
        return [t.name, { type: t.type, bytes: bytes.subarray(h.dataOffset + t.offset, end) }];
      }),
    );
  }

  for (const [type, ftype] of [
    ['Q8_0', 'Q8_0'],
    ['Q4_0', 'Q4_0'],
    ['Q4_K', 'Q4_K_S'],
  ] as const) {
    it(`${type}: every tensor byte-identical`, () => {
      const theirsPath = join(dir, `${type}.gguf`);
      llamaQuantize(source, theirsPath, ftype, true);
      const theirs = tensorBytes(new Uint8Array(readFileSync(theirsPath)));
      const ours = tensorBytes(writeGguf(loaded.weights, { type, tokenizer: true, name: 'trained-4m' }));
      expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
      const differ = [...theirs].filter(([name, t]) => {
        const o = ours.get(name);
        return (
          !o ||
          o.type !== t.type ||
          o.bytes.length !== t.bytes.length ||
          o.bytes.some((b, i) => b !== t.bytes[i])
        );
      });
      expect(differ.map(([name]) => name)).toEqual([]);
      // The linear layers are in the type (the 1-D norms stay F32 in both).
      expect(
        [...theirs.values()].filter((t) => t.type === GGUF_TYPE_CODES[type]).length,
      ).toBeGreaterThanOrEqual(29);
      // llama-quantize runs as a process and both files are read whole: 2-3 s alone, 7.4 s once
      // beside a corpus build, past vitest's 5 s default; the bound here is on correctness only.
    }, 30_000);
  }
});
