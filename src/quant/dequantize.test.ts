import { beforeAll, describe, expect, it } from 'vitest';
import { bitMismatches } from '../../test-support/ggml-quants/bits.ts';
import { importance, ROW, randomBlocks, testRows } from '../../test-support/ggml-quants/cases.ts';
import { type GgmlQuantized, ggmlDequantize, ggmlQuantize } from '../../test-support/ggml-quants/ggml-c.ts';
import { ggufPyDequantize } from '../../test-support/ggml-quants/gguf-py.ts';
import { QUANT_TYPES } from './registry.ts';
import { dequantizeTensor } from './repack.ts';
import type { QuantType } from './types.ts';

/**
 * Each type's dequantization against the two independent references in llama.cpp's release: ggml's
 * C (its prebuilt libggml-base.so, through test-support/ggml-quants/harness.c) and gguf-py's numpy
 * port, bit for bit. The blocks are ggml's own quantizer's output for seeded rows that reach the
 * edges (with and without importance weights, which take different quantizer paths), and blocks of
 * random bytes.
 */

const RANDOM_BLOCKS = 512;

interface Fixture {
  /** ggml_quantize_chunk's rows, plain and with importance weights, and ggml's to_float of them. */
  readonly quantized: readonly GgmlQuantized[];
  /** Random-byte blocks (one block per row) and ggml's to_float of them. */
  readonly random: GgmlQuantized;
}

const { names, rows } = testRows();
const nrows = names.length;
const fixtures = new Map<QuantType, Fixture>();

beforeAll(() => {
  const weights = importance();
  for (const type of QUANT_TYPES) {
    const blocks = randomBlocks(type.ggml, type.blockBytes, RANDOM_BLOCKS);
    fixtures.set(type, {
      quantized: [
        ggmlQuantize(type.ggml, rows, nrows, ROW),
        ggmlQuantize(type.ggml, rows, nrows, ROW, weights),
      ],
      random: {
        blocks,
        dequantized: ggmlDequantize(type.ggml, blocks, RANDOM_BLOCKS, type.blockElems),
      },
    });
  }
});

function fixture(type: QuantType): Fixture {
  const f = fixtures.get(type);
  if (!f) throw new Error(`no fixture for ${type.name}`);
  return f;
}

/** Quantized blocks per type: two runs of the test rows. */
const quantizedBlocks = (type: QuantType) => (2 * nrows * ROW) / type.blockElems;

describe("dequantization, bit for bit against ggml's C (libggml-base.so)", () => {
  it('has fixtures that reach the edges they are named for', () => {
    // Guards on the fixture itself, so the comparisons below compare something: ggml's output for
    // a normal row is not all zeros, and the tiny rows do give Q8_0 subnormal and zero f16 scales.
    for (const type of QUANT_TYPES) {
      const [plain] = fixture(type).quantized;
      const normalRow = names.indexOf('normal');
      expect(plain.dequantized.subarray(normalRow * ROW, (normalRow + 1) * ROW).some((v) => v !== 0)).toBe(
        true,
      );
    }
    const q8 = QUANT_TYPES.find((t) => t.name === 'Q8_0');
    if (!q8) throw new Error('Q8_0 is missing');
    const scalesOfRow = (name: string) => {
      const { blocks } = fixture(q8).quantized[0];
      const first = (names.indexOf(name) * ROW) / 32;
      return Array.from(
        { length: ROW / 32 },
        (_, b) => blocks[(first + b) * 34] | (blocks[(first + b) * 34 + 1] << 8),
      );
    };
    const subnormal = (h: number) => (h & 0x7c00) === 0 && (h & 0x3ff) !== 0;
    expect(scalesOfRow('tiny (f16-subnormal scales)').some(subnormal)).toBe(true);
    expect(scalesOfRow('tinier (scales that flush to zero)').every((h) => (h & 0x7fff) === 0)).toBe(true);
  });

  for (const type of QUANT_TYPES) {
    it(`${type.name}: ${quantizedBlocks(type)} blocks from ggml's quantizer`, () => {
      for (const [run, q] of fixture(type).quantized.entries()) {
        const ours = dequantizeTensor(type, q.blocks, 0, nrows, ROW);
        const diff = bitMismatches(ours, q.dequantized, type.blockElems);
        expect(diff, `${type.name} ${run ? 'with importance weights' : 'plain'}: ${diff}`).toBe('');
      }
    });

    it(`${type.name}: ${RANDOM_BLOCKS} blocks of random bytes`, () => {
      const { blocks, dequantized } = fixture(type).random;
      const ours = dequantizeTensor(type, blocks, 0, RANDOM_BLOCKS, type.blockElems);
      const diff = bitMismatches(ours, dequantized, type.blockElems);
      expect(diff, `${type.name}: ${diff}`).toBe('');
    });
  }
});

describe("dequantization, bit for bit against gguf-py's numpy (gguf/quants.py)", () => {
  /** gguf-py's output for each type: the two quantized runs, then the random blocks. */
  const numpy = new Map<QuantType, Float32Array[]>();

  beforeAll(() => {
    const jobs = QUANT_TYPES.flatMap((type) => {
      const f = fixture(type);
      return [
        ...f.quantized.map((q) => ({ type: type.ggml, rows: nrows, blocks: q.blocks })),
        { type: type.ggml, rows: RANDOM_BLOCKS, blocks: f.random.blocks },
      ];
    });
    const outs = ggufPyDequantize(jobs);
    for (const [i, type] of QUANT_TYPES.entries()) numpy.set(type, outs.slice(3 * i, 3 * i + 3));
  });

  for (const type of QUANT_TYPES) {
    it(`${type.name}: ${quantizedBlocks(type) + RANDOM_BLOCKS} blocks (quantized and random)`, () => {
      const f = fixture(type);
      const [plain, weighted, random] = numpy.get(type) ?? [];
      const cases = [
        ['plain', f.quantized[0], nrows, ROW, plain],
        ['with importance weights', f.quantized[1], nrows, ROW, weighted],
        ['random bytes', f.random, RANDOM_BLOCKS, type.blockElems, random],
      ] as const;
      for (const [label, q, n, k, expected] of cases) {
        const ours = dequantizeTensor(type, q.blocks, 0, n, k);
        const diff = bitMismatches(ours, expected, type.blockElems);
        expect(diff, `${type.name} ${label}: ${diff}`).toBe('');
        // And the two references agree with each other, which the C comparison above does not show.
        const refs = bitMismatches(expected, q.dequantized, type.blockElems);
        expect(refs, `${type.name} ${label}, gguf-py against ggml's C: ${refs}`).toBe('');
      }
    });
  }
});
