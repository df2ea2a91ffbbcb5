import { describe, expect, it } from 'vitest';
import { makeResult } from '../../../test-support/fixtures/base.ts';
import { overheadCeiling } from './roofline.ts';

describe('overheadCeiling', () => {
  const r = makeResult();
  const decode = r.points.filter((p) => p.pass === 'decode');

  it('is the GFLOP/s of a median decode step that took only its launch and submit time', () => {
    const c = overheadCeiling(r.points, r.peaks);
    const flops = [...decode.map((p) => p.flops)].sort((a, b) => a - b)[1];
    const dispatches = decode[0].dispatches;
    const seconds = (dispatches * r.peaks.dispatchUs + r.peaks.submitUs) * 1e-6;
    expect(c?.dispatches).toBe(dispatches);
    expect(c?.flops).toBe(flops);
    expect(c?.gflops).toBeCloseTo(flops / seconds / 1e9, 6);
  });

  it('falls back to all points without decode points, and to nothing without points', () => {
    const prefill = r.points.filter((p) => p.pass === 'prefill');
    expect(overheadCeiling(prefill, r.peaks)?.flops).toBe(prefill[2].flops);
    expect(overheadCeiling([], r.peaks)).toBeNull();
  });
});
