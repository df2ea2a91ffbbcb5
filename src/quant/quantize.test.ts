import { describe, expect, it } from 'vitest';
import { ROW, testRows } from '../../test-support/ggml-quants/cases.ts';
import { ggmlQuantize } from '../../test-support/ggml-quants/ggml-c.ts';
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
