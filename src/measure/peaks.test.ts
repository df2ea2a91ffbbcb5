import { describe, expect, it } from 'vitest';
import { bestPeaks } from './peaks.ts';

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
