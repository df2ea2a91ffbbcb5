import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { blockQuantBytes, QUANT_TYPES, quantLayout, quantTypeByCode, quantTypeByName } from './registry.ts';

/**
 * The GPU layout as decided, one row per type: ggml code, weights and bytes per block,
 * quants ranges, header ranges [from, to) → at, header words. Written out here from the decision
 * (and checked against ggml-common.h's block structs), not read from the modules.
 */
const DECIDED = [
  ['Q4_0', 2, 32, 18, [[2, 18]], [[0, 2, 0]], 1],
  ['Q4_1', 3, 32, 20, [[4, 20]], [[0, 4, 0]], 1],
  [
    'Q5_0',
    6,
    32,
    22,
    [[6, 22]],
    [
      [0, 2, 0],
      [2, 6, 4],
    ],
    2,
  ],
  ['Q5_1', 7, 32, 24, [[8, 24]], [[0, 8, 0]], 2],
  ['Q8_0', 8, 32, 34, [[2, 34]], [[0, 2, 0]], 1],
  [
    'Q2_K',
    10,
    256,
    84,
    [[16, 80]],
    [
      [0, 16, 0],
      [80, 84, 16],
    ],
    5,
  ],
  ['Q3_K', 11, 256, 110, [[0, 96]], [[96, 110, 0]], 4],
  ['Q4_K', 12, 256, 144, [[16, 144]], [[0, 16, 0]], 4],
  ['Q5_K', 13, 256, 176, [[16, 176]], [[0, 16, 0]], 4],
  ['Q6_K', 14, 256, 210, [[0, 192]], [[192, 210, 0]], 5],
] as const;

describe('the quant registry', () => {
  it('lists every decided type with the decided layout', () => {
    expect(QUANT_TYPES.map((t) => t.name)).toEqual(DECIDED.map(([name]) => name));
    for (const [name, ggml, blockElems, blockBytes, quants, header, headerWords] of DECIDED) {
      const t = quantTypeByName(name);
      expect(t, name).toBeDefined();
      expect({ ...t, dequantize: undefined, quantize: undefined }).toEqual({
        name,
        ggml,
        blockElems,
        blockBytes,
        quants,
        header,
        headerWords,
        dequantize: undefined,
        quantize: undefined,
      });
      expect(quantTypeByCode(ggml)).toBe(t);
    }
  });

  it('finds nothing for a type it does not read', () => {
    expect(quantTypeByCode(20)).toBeUndefined(); // IQ4_NL
    expect(quantTypeByCode(0)).toBeUndefined(); // F32 is read elsewhere
    expect(quantTypeByName('q4_k')).toBeUndefined();
  });

  for (const t of QUANT_TYPES) {
    it(`${t.name}: every byte of a block is a quant or a header byte, once, and fits its place`, () => {
      const owner = new Array<number>(t.blockBytes).fill(0);
      for (const [from, to] of [...t.quants, ...t.header]) for (let i = from; i < to; i++) owner[i]++;
      expect(owner.every((n) => n === 1)).toBe(true);
      // Quants: whole 16-byte vectors. Headers: inside the header words, not overlapping.
      expect(blockQuantBytes(t) % 16).toBe(0);
      const words = new Array<number>(t.headerWords * 4).fill(0);
      for (const [from, to, at] of t.header) for (let i = 0; i < to - from; i++) words[at + i]++;
      expect(words.length).toBe(t.headerWords * 4);
      expect(words.every((n) => n <= 1)).toBe(true);
      // Each header range starts on a 2-byte boundary, so a kernel reads its halves without a shift
      // across words.
      for (const [, , at] of t.header) expect(at % 2).toBe(0);
    });

    it(`${t.name}: sizes a weight, at most 12% above the file's bytes`, () => {
      const N = 3;
      const K = 4 * t.blockElems;
      const layout = quantLayout(t, N, K);
      expect(layout.blocksPerRow).toBe(4);
      expect(layout.fileBytes).toBe(12 * t.blockBytes);
      expect(layout.quantBytes).toBe(12 * blockQuantBytes(t));
      expect(layout.headerBytes).toBe(12 * 4 * t.headerWords);
      expect(layout.gpuBytes).toBe(layout.quantBytes + layout.headerBytes);
      expect(layout.gpuBytes / layout.fileBytes).toBeLessThanOrEqual(1.12);
    });
  }

  it('refuses a row that is not a whole number of blocks, naming the tensor', () => {
    const q4k = quantTypeByName('Q4_K');
    if (!q4k) throw new Error('Q4_K is missing');
    expect(() => quantLayout(q4k, 8, 96, 'blk.0.ffn_down.weight')).toThrow(InputError);
    expect(() => quantLayout(q4k, 8, 96, 'blk.0.ffn_down.weight')).toThrow(/blk\.0\.ffn_down\.weight.*256/);
    expect(() => quantLayout(q4k, 1.5, 256)).toThrow(InputError);
  });
});
