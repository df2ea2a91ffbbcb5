import { describe, expect, it } from 'vitest';
import { dequantizePacked } from '../quant/formats.ts';
import { packTensor, unpackTensor } from '../weight-format.ts';
import { interleaveRows } from './fused.ts';

/** Rows r of an [N, K] tensor whose every element is 10·r + column: each row is recognisable. */
const rows = (N: number, K: number, base: number) =>
  Float32Array.from({ length: N * K }, (_, i) => base + 10 * Math.floor(i / K) + (i % K));

describe('fused weight layouts', () => {
  it('gate/up interleaved: gate row j at 2j, up row j at 2j + 1', () => {
    const out = interleaveRows(
      'gate/up',
      { N: 2, K: 4, f32: rows(2, 4, 0) },
      { N: 2, K: 4, f32: rows(2, 4, 100) },
    );
    expect('f32' in out && [...out.f32]).toEqual([
      0, 1, 2, 3, 100, 101, 102, 103, 10, 11, 12, 13, 110, 111, 112, 113,
    ]);
  });

  it('packed rows move with their scales: the result dequantizes to the moved dequantized rows', () => {
    const K = 40; // one whole group of 32 and a part group
    const gate = packTensor(
      'int4',
      Float32Array.from({ length: 3 * K }, (_, i) => Math.sin(i)),
      3,
      K,
      'gate',
    );
    const up = packTensor(
      'int4',
      Float32Array.from({ length: 3 * K }, (_, i) => Math.cos(3 * i)),
      3,
      K,
      'up',
    );
    const out = interleaveRows('gate/up', { N: 3, K, packed: gate }, { N: 3, K, packed: up });
    if (!('packed' in out)) throw new Error('expected a packed result');
    const got = dequantizePacked(out.packed);
    const g = unpackTensor(gate);
    const u = unpackTensor(up);
    for (let j = 0; j < 3; j++) {
      expect([...got.subarray(2 * j * K, (2 * j + 1) * K)]).toEqual([...g.subarray(j * K, (j + 1) * K)]);
      expect([...got.subarray((2 * j + 1) * K, (2 * j + 2) * K)]).toEqual([
        ...u.subarray(j * K, (j + 1) * K),
      ]);
    }
  });

  it('tensors in different formats or widths cannot share a kernel', () => {
    const f32 = { N: 1, K: 8, f32: rows(1, 8, 0) };
    const int8 = { N: 1, K: 8, packed: packTensor('int8', rows(1, 8, 0), 1, 8, 'x') };
    expect(() => interleaveRows('gate/up', f32, int8)).toThrow(/one format/);
    expect(() => interleaveRows('gate/up', f32, { N: 1, K: 4, f32: rows(1, 4, 0) })).toThrow(/inner widths/);
  });
});
