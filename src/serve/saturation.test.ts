import { describe, expect, it } from 'vitest';
import type { TimelinePoint } from './driver.ts';
import { saturationRate } from './saturation.ts';

const step = (tMs: number, waiting: number, tokensOut: number): TimelinePoint => ({
  tMs,
  running: 8,
  waiting,
  decodeRows: 8,
  tokensOut,
  prefillTokens: 0,
  kvUsedPages: 0,
  kvTotalPages: 1,
  stepMs: 10,
});

describe('saturation rate', () => {
  it('counts output tokens only while requests wait', () => {
    // Steps end at 10, 20, 30 ms (the first began at 0); 8 + 8 + 6 rows while requests waited,
    // tokens emitted while requests waited, then the drain (not counted). 22 tokens in 30 ms = 733.3 tokens/s; 20 tokens per request.
    const t = [step(10, 5, 8), step(20, 3, 8), step(30, 1, 6), step(40, 0, 8), step(50, 0, 2)];
    expect(saturationRate(t, 20)).toBeCloseTo(22 / 0.03 / 20, 9);
  });

  it('has nothing to read when the queue never built up', () => {
    expect(saturationRate([step(10, 0, 3), step(20, 0, 3)], 10)).toBeNull();
    expect(saturationRate([], 10)).toBeNull();
  });
});
