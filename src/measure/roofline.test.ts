import { describe, expect, it } from 'vitest';
import { place } from './roofline.ts';

// 10 GFLOP/s, 2 GB/s (ridge at 5 FLOP/byte), 10 µs a dispatch, 300 µs a submit.
const roofs = { fmaGflops: 10, copyGBps: 2, dispatchUs: 10, submitUs: 300 };
const wall = (flops: number, bytes: number, dispatches: number) =>
  ({ flops, bytes, dispatches, timebase: 'wall' }) as const;

describe('roofline placement', () => {
  it('calls a high-intensity pass compute-bound and reports its share of the FMA roof', () => {
    // 1 GFLOP, 10 MB, 40 dispatches: compute floor 100 ms, memory 5 ms, overhead 0.7 ms
    const p = place(wall(1e9, 1e7, 40), 200, roofs);
    expect(p.bound).toBe('compute');
    expect(p.intensity).toBe(100);
    expect(p.gflops).toBeCloseTo(5, 12);
    expect(p.roofPct).toBeCloseTo(50, 12);
    expect(p.predictedMs).toBeCloseTo(100.7, 9);
    expect(p.predictionErrorPct).toBeCloseTo(((200 - 100.7) / 100.7) * 100, 9);
  });

  it('calls a low-intensity pass bandwidth-bound', () => {
    // 2 MFLOP, 20 MB: compute 0.2 ms, memory 10 ms
    const p = place(wall(2e6, 2e7, 40), 20, roofs);
    expect(p.bound).toBe('bandwidth');
    expect(p.gbps).toBeCloseTo(1, 12);
    expect(p.roofPct).toBeCloseTo(50, 12);
  });

  it('calls a tiny pass overhead-bound when launches cost more than the work', () => {
    // 0.1 MFLOP, 0.1 MB: compute 0.01 ms, memory 0.05 ms, overhead 40 · 10 µs + 300 µs = 0.7 ms
    const p = place(wall(1e5, 1e5, 40), 1.4, roofs);
    expect(p.bound).toBe('overhead');
    expect(p.roofPct).toBeCloseTo(50, 12);
  });

  it('leaves the submit out of a GPU-timed span, whose timestamps do not contain it', () => {
    // The same tiny pass on the GPU clock: overhead is 40 · 10 µs = 0.4 ms, no 300 µs submit.
    const p = place({ flops: 1e5, bytes: 1e5, dispatches: 40, timebase: 'gpu' }, 0.8, roofs);
    expect(p.bound).toBe('overhead');
    expect(p.roofPct).toBeCloseTo(50, 12);
    expect(p.predictedMs).toBeCloseTo(0.05 + 0.4, 12);
  });

  it('calls a one-dispatch kernel of a few bytes overhead-bound, not bandwidth-bound at 1%', () => {
    // 4 kB moved: 0.002 ms at 2 GB/s, but one dependent dispatch costs 10 µs = 0.01 ms.
    const p = place({ flops: 1e3, bytes: 4e3, dispatches: 1, timebase: 'gpu' }, 0.02, roofs);
    expect(p.bound).toBe('overhead');
    expect(p.roofPct).toBeCloseTo(50, 12);
  });
});
