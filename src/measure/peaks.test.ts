import { describe, expect, it } from 'vitest';
import { bestPeaks, configsToRepeat, nextScale } from './peaks.ts';

describe('bestPeaks', () => {
  it('keeps the higher throughputs, the lower overheads and every trial, labelled', () => {
    const before = {
      fmaGflops: 10,
      copyGBps: 3,
      dispatchUs: 20,
      emptyDispatchUs: 5,
      submitUs: 400,
      trials: [{ kind: 'fma' as const, label: 'wg 64', value: 10 }],
    };
    const after = {
      fmaGflops: 12,
      copyGBps: 2,
      dispatchUs: 25,
      emptyDispatchUs: 4,
      submitUs: 300,
      trials: [],
    };
    expect(bestPeaks(before, after)).toEqual({
      fmaGflops: 12,
      copyGBps: 3,
      dispatchUs: 20,
      emptyDispatchUs: 4,
      submitUs: 300,
      trials: [{ kind: 'fma', label: 'before: wg 64', value: 10 }],
    });
  });
});

describe('configsToRepeat', () => {
  it('repeats the configurations whose first sample is within the margin of the best first sample', () => {
    // The three copy grids' first samples of one run on SwiftShader (GB/s): 2.2 is 76.4% of 2.88
    // and 1.94 is 67.4%, both more than 10% behind; 2.6 is 90.3%, within it; 2.46 is 85.4%.
    expect(configsToRepeat([2.88, 2.2, 1.94], 0.1)).toEqual([true, false, false]);
    expect(configsToRepeat([2.2, 2.88, 2.6], 0.1)).toEqual([false, true, true]);
    expect(configsToRepeat([2.46, 2.88], 0.15)).toEqual([true, true]);
    expect(configsToRepeat([2.44, 2.88], 0.15)).toEqual([false, true]);
  });

  it('repeats a lone configuration, and every one of a tie', () => {
    expect(configsToRepeat([17], 0.1)).toEqual([true]);
    expect(configsToRepeat([5, 5, 4.5], 0.1)).toEqual([true, true, true]);
  });
});

describe('nextScale', () => {
  it('doubles while a run is under a quarter of the target, then aims 10% past the target', () => {
    // 2 ms of 40 is launch-dominated: double. 37.1 ms at 256 workgroups predicts 40 ms at 276;
    // 10% over: ceil(256 × 40 / 37.1 × 1.1) = ceil(303.61) = 304 (doubling would have run 512).
    expect(nextScale(8, 2, 40, 1 << 20)).toBe(16);
    expect(nextScale(256, 37.1, 40, 1 << 20)).toBe(304);
    // Exactly a quarter predicts: ceil(4 × 4 × 1.1) = ceil(17.6) = 18.
    expect(nextScale(4, 10, 40, 1 << 20)).toBe(18);
  });

  it('grows by at least one and never past the cap', () => {
    expect(nextScale(60, 20, 40, 64)).toBe(64);
    expect(nextScale(10, 39.9, 40, 1 << 20)).toBe(12);
    expect(nextScale(1, 39.99, 40, 64)).toBe(2);
  });
});
