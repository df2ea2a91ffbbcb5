import { describe, expect, it } from 'vitest';
import { KernelError } from '../errors.ts';
import {
  ATTENTION_LIMITS,
  attentionDecodeDispatches,
  attentionDecodePartialBytes,
  attentionGrouping,
  attentionKvReadsPerRow,
  splitDecodeGeometry,
} from './limits.ts';

const smollm = { heads: 9, kvHeads: 3, headDim: 64 };

describe('attentionKvReadsPerRow', () => {
  it('reads each row once per group for SmolLM2-135M decode (3 query heads per KV head)', () => {
    expect(attentionKvReadsPerRow('decode', { family: 'tiled' }, smollm)).toBe(1);
    expect(attentionKvReadsPerRow('decode', { family: 'direct' }, smollm)).toBe(1);
  });

  it('counts prefill reads per block of queries, fewer for the chunk’s own rows (causal)', () => {
    // tiled: blocks of 32 queries; L = 64 is two blocks, and row 40 is only in the second.
    expect(attentionKvReadsPerRow('prefill', { family: 'tiled' }, { ...smollm, L: 64 })).toBe(2);
    expect(attentionKvReadsPerRow('prefill', { family: 'tiled' }, { ...smollm, L: 64, row: 40 })).toBe(1);
    // direct: every query reads for itself; row 10 is seen by queries 10 … 63.
    expect(attentionKvReadsPerRow('prefill', { family: 'direct' }, { ...smollm, L: 64 })).toBe(64);
    expect(attentionKvReadsPerRow('prefill', { family: 'direct' }, { ...smollm, L: 64, row: 10 })).toBe(54);
    // direct4: blocks of 4 queries; row 10 is in block 2 of 16.
    expect(attentionKvReadsPerRow('prefill', { family: 'direct4' }, { ...smollm, L: 64 })).toBe(16);
    expect(attentionKvReadsPerRow('prefill', { family: 'direct4' }, { ...smollm, L: 64, row: 10 })).toBe(14);
  });

  it('counts register prefill reads per invocation of 4 (query, head) pairs, as the kernel walks them', () => {
    const register = { family: 'register', wg: 16 } as const;
    // SmolLM2: 64 queries x 3 heads = 192 pairs, 48 invocations; invocations 0 … 6 end before
    // query 10 (pair 4n + 3 < 30), so 41 of them load its row.
    expect(attentionKvReadsPerRow('prefill', register, { ...smollm, L: 64 })).toBe(48);
    expect(attentionKvReadsPerRow('prefill', register, { ...smollm, L: 64, row: 10 })).toBe(41);
    // Against a walk of the kernel's own loop: invocation n visits keys up to the query of its last
    // pair (the last pair of all for the last invocation), for groups of 1 to 8 and partial quads.
    for (const [heads, kvHeads] of [
      [4, 4],
      [4, 2],
      [9, 3],
      [8, 1],
    ]) {
      const group = heads / kvHeads;
      for (const L of [1, 7, 33, 100]) {
        const pairs = L * group;
        const lastQuery = (n: number) => Math.floor(Math.min(4 * n + 3, pairs - 1) / group);
        for (const row of new Set([0, 1, Math.floor(L / 2), L - 1].filter((r) => r < L))) {
          let walks = 0;
          for (let n = 0; n < Math.ceil(pairs / 4); n++) if (lastQuery(n) >= row) walks++;
          const shape = { heads, kvHeads, headDim: 32, L, row };
          expect(attentionKvReadsPerRow('prefill', register, shape), JSON.stringify(shape)).toBe(walks);
        }
      }
    }
  });

  it('splits a group that does not fit into passes, each reading the rows again', () => {
    const wide = { heads: 16, kvHeads: 2, headDim: 256 }; // 8 per group, 64 vec4s per query
    expect(attentionGrouping('decode', { family: 'tiled' }, wide)).toEqual({
      headsPerPass: 8,
      passes: 1,
      queriesPerBlock: 1,
    });
    // direct: 256 private vec4s hold 4 queries of head dim 256.
    expect(attentionGrouping('decode', { family: 'direct' }, wide).passes).toBe(2);
    // direct4: 4 queries x 1 head already fill them: the per-head form, 8 passes.
    expect(attentionGrouping('prefill', { family: 'direct4' }, wide).headsPerPass).toBe(1);
    expect(attentionKvReadsPerRow('prefill', { family: 'direct4' }, { ...wide, L: 8 })).toBe(16);
    // 12 heads per group, at most 8 per pass: two equal passes of 6.
    expect(attentionGrouping('decode', { family: 'tiled' }, { heads: 24, kvHeads: 2, headDim: 64 })).toEqual({
      headsPerPass: 6,
      passes: 2,
      queriesPerBlock: 1,
    });
  });

  it('is one read per row per block for multi-head attention (group of 1)', () => {
    const mha = { heads: 4, kvHeads: 4, headDim: 32 };
    expect(attentionKvReadsPerRow('decode', { family: 'direct' }, mha)).toBe(1);
    expect(attentionKvReadsPerRow('prefill', { family: 'tiled' }, { ...mha, L: 33 })).toBe(2);
  });

  it('throws KernelError for decode direct4 or register and for a row outside the chunk', () => {
    expect(() => attentionKvReadsPerRow('decode', { family: 'direct4' }, smollm)).toThrow(KernelError);
    expect(() => attentionKvReadsPerRow('decode', { family: 'register', wg: 16 }, smollm)).toThrow(
      KernelError,
    );
    expect(() => attentionKvReadsPerRow('prefill', { family: 'tiled' }, { ...smollm, L: 4, row: 4 })).toThrow(
      KernelError,
    );
  });
});

describe('split-K decode geometry and traffic', () => {
  it('covers the table’s capacity in slices of chunk tokens', () => {
    // 1024 tokens in slices of 32: 32 slices; 1000 tokens: 31 full slices and one of 8.
    expect(splitDecodeGeometry(32, 1024)).toEqual({ chunk: 32, slices: 32 });
    expect(splitDecodeGeometry(32, 1000)).toEqual({ chunk: 32, slices: 32 });
    // A context shorter than one slice is one slice.
    expect(splitDecodeGeometry(512, 100)).toEqual({ chunk: 512, slices: 1 });
  });

  it('grows the slices past splitMaxSlices of them, so the partials stay bounded', () => {
    // 16384 tokens / 256 slices = 64 tokens a slice; chunk 32 would have needed 512 slices.
    expect(ATTENTION_LIMITS.splitMaxSlices).toBe(256);
    expect(splitDecodeGeometry(32, 16384)).toEqual({ chunk: 64, slices: 256 });
    // 16385 tokens: ⌈16385 / 256⌉ = 65 a slice, ⌈16385 / 65⌉ = 253 slices.
    expect(splitDecodeGeometry(32, 16385)).toEqual({ chunk: 65, slices: 253 });
    expect(() => splitDecodeGeometry(0, 100)).toThrow(KernelError);
  });

  it('is two dispatches and moves its partials twice, per used slice and query head', () => {
    expect(attentionDecodeDispatches({ family: 'split', chunk: 32 })).toBe(2);
    expect(attentionDecodeDispatches({ family: 'direct' })).toBe(1);
    expect(attentionDecodeDispatches({ family: 'tiled' })).toBe(1);
    // SmolLM2 heads (9, dim 64), contexts 100 and 33 in slices of 32: 4 + 2 = 6 used slices;
    // each writes and the merge reads 64 + 2 floats per head: 2 · 6 · 9 · 66 · 4 bytes.
    const shape = { heads: 9, headDim: 64, maxContext: 2048 };
    expect(attentionDecodePartialBytes({ family: 'split', chunk: 32 }, shape, [100, 33])).toBe(28512);
    expect(attentionDecodePartialBytes({ family: 'direct' }, shape, [100, 33])).toBe(0);
  });

  it('reads each K/V row once per group, as direct does', () => {
    expect(attentionKvReadsPerRow('decode', { family: 'split', chunk: 128 }, smollm)).toBe(1);
    expect(() => attentionGrouping('prefill', { family: 'split', chunk: 128 }, smollm)).toThrow(KernelError);
  });
});
