import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { blockQuantBytes, QUANT_TYPES, quantLayout } from './registry.ts';
import { dequantizeRows, dequantizeTensor, repackTensor, unpackBlocks } from './repack.ts';

/** Byte i of block b: distinct within a block (blocks are ≤ 255 bytes), never 0, different per block. */
const byteOf = (b: number, i: number) => ((i + 5 * b) % 255) + 1;

/** N × blocksPerRow blocks of distinct bytes after `offset` bytes of 0xee that must not be read. */
function distinctBlocks(blockBytes: number, blocks: number, offset: number): Uint8Array {
  const bytes = new Uint8Array(offset + blocks * blockBytes + 7).fill(0xee);
  for (let b = 0; b < blocks; b++)
    for (let i = 0; i < blockBytes; i++) bytes[offset + b * blockBytes + i] = byteOf(b, i);
  return bytes;
}

const asBytes = (w: Uint32Array) => new Uint8Array(w.buffer, w.byteOffset, w.byteLength);

describe('repackTensor', () => {
  for (const t of QUANT_TYPES) {
    it(`${t.name}: puts every byte of every block at its documented place, once`, () => {
      const N = 3;
      const blocksPerRow = 2;
      const K = blocksPerRow * t.blockElems;
      const offset = 5;
      const blocks = N * blocksPerRow;
      const src = distinctBlocks(t.blockBytes, blocks, offset);
      const { quants, headers } = repackTensor(t, src, offset, N, K, 'w');
      const layout = quantLayout(t, N, K);
      expect(quants.byteLength).toBe(layout.quantBytes);
      expect(headers.byteLength).toBe(layout.headerBytes);
      const q = asBytes(quants);
      const h = asBytes(headers);
      const qPer = blockQuantBytes(t);
      const hPer = 4 * t.headerWords;
      for (let n = 0; n < N; n++) {
        for (let b = 0; b < blocksPerRow; b++) {
          const index = n * blocksPerRow + b;
          const expectQ: number[] = [];
          for (const [from, to] of t.quants) for (let i = from; i < to; i++) expectQ.push(byteOf(index, i));
          const expectH = new Array<number>(hPer).fill(0);
          for (const [from, to, at] of t.header)
            for (let i = from; i < to; i++) expectH[at + i - from] = byteOf(index, i);
          const gotQ = [...q.subarray(index * qPer, (index + 1) * qPer)];
          const gotH = [...h.subarray(index * hPer, (index + 1) * hPer)];
          expect(gotQ).toEqual(expectQ);
          expect(gotH).toEqual(expectH);
          // Every byte of the block exactly once across both buffers (padding is the only zero).
          const seen = [...gotQ, ...gotH].filter((v) => v !== 0).sort((a, c) => a - c);
          const all = Array.from({ length: t.blockBytes }, (_, i) => byteOf(index, i)).sort((a, c) => a - c);
          expect(seen).toEqual(all);
        }
      }
      // And back: unpackBlocks gives the file's blocks, byte for byte.
      expect([...unpackBlocks(t, { quants, headers }, blocks)]).toEqual([
        ...src.subarray(offset, offset + blocks * t.blockBytes),
      ]);
    });
  }

  it('refuses data that ends before the tensor does, and a row that is not whole blocks', () => {
    const [q40] = QUANT_TYPES;
    const bytes = new Uint8Array(2 * 18);
    expect(() => repackTensor(q40, bytes, 0, 2, 64, 'token_embd.weight')).toThrow(InputError);
    expect(() => repackTensor(q40, bytes, 0, 2, 64, 'token_embd.weight')).toThrow(/token_embd\.weight/);
    expect(() => repackTensor(q40, bytes, 0, 1, 48, 'x')).toThrow(/not a whole number/);
    expect(repackTensor(q40, bytes, 0, 2, 32).quants.length).toBe(8);
  });
});

describe('dequantizeRows', () => {
  for (const t of QUANT_TYPES) {
    it(`${t.name}: reads a few rows as the whole tensor has them`, () => {
      const N = 5;
      const K = 2 * t.blockElems;
      const offset = 3;
      const src = distinctBlocks(t.blockBytes, N * 2, offset);
      const whole = dequantizeTensor(t, src, offset, N, K);
      const out = new Float32Array(2 * K);
      dequantizeRows(t, src, offset, K, 2, 2, out);
      expect(new Uint32Array(out.buffer)).toEqual(new Uint32Array(whole.buffer, 2 * K * 4, 2 * K));
    });
  }

  it('refuses rows past the end and an output too small', () => {
    const [q40] = QUANT_TYPES;
    const bytes = new Uint8Array(4 * 18);
    expect(() => dequantizeRows(q40, bytes, 0, 32, 3, 2, new Float32Array(64), 'output.weight')).toThrow(
      /output\.weight/,
    );
    expect(() => dequantizeRows(q40, bytes, 0, 32, 0, 2, new Float32Array(63))).toThrow(InputError);
    expect(() => dequantizeRows(q40, bytes, 0, 32, -1, 1, new Float32Array(32))).toThrow(InputError);
  });
});
