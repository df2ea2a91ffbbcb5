import { describe, expect, it } from 'vitest';
import { capacityInput, estimateCapacity } from '../../capacity/estimate.ts';
import { capacityModelFromDims } from '../../capacity/model.ts';
import { formatBytes, formatExact } from '../format.ts';
import { pagedBytesPerSession } from './capacity.ts';

/** Llama-2-70B's shape, as in src/capacity/capacity.test.ts. */
const LLAMA2_70B = capacityModelFromDims({
  layers: 80,
  heads: 64,
  kvHeads: 8,
  headDim: 128,
  hidden: 8192,
  intermediate: 28672,
  vocab: 32000,
  contextLength: 4096,
});

describe('the capacity chart’s paged line', () => {
  it('climbs by the hand-worked bytes per session of the 50-session mix', () => {
    const input = capacityInput({
      gpuMem: 80e9,
      gpus: 4,
      input: 3000,
      output: 400,
      sessions: 50,
      longShare: 0.2,
    });
    // 0.8 · 3408 + 0.2 · 13,600 = 5446.4 slots a session, · 327,680 bytes (capacity.test.ts).
    expect(pagedBytesPerSession(estimateCapacity(LLAMA2_70B, input), input)).toBeCloseTo(1_784_676_352, 3);
  });

  it('crosses the usable memory where the estimator puts the paged concurrency', () => {
    // Mixes that round differently: no long sessions, pages larger than a session, a long tail.
    for (const raw of [
      { gpuMem: 80e9, gpus: 4, input: 3000, output: 400, sessions: 50 },
      { gpuMem: 24e9, gpus: 8, input: 100, output: 7, sessions: 300, pageSize: 256, longShare: 0.5 },
      { gpuMem: 141e9, gpus: 8, input: 8000, output: 1000, sessions: 64, longShare: 0.05, longFactor: 16 },
    ]) {
      const input = capacityInput(raw);
      const e = estimateCapacity(LLAMA2_70B, input);
      const crossing = Math.floor(e.kvBudgetBytes / pagedBytesPerSession(e, input));
      expect(crossing, JSON.stringify(raw)).toBe(e.maxConcurrency.paged);
    }
  });
});

describe('byte formats', () => {
  it('are exact, then decimal or binary with the unit named', () => {
    expect(formatExact(137_953_296_384)).toBe('137,953,296,384');
    expect(formatBytes(137_953_296_384, 'decimal')).toBe('137.95 GB');
    expect(formatBytes(137_953_296_384, 'binary')).toBe('128.48 GiB');
    expect(formatBytes(327_680, 'binary')).toBe('320.00 KiB');
    expect(formatBytes(512, 'decimal')).toBe('512 B');
    expect(formatBytes(-2e9, 'decimal')).toBe('−2.00 GB');
  });
});
