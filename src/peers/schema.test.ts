import { describe, expect, it } from 'vitest';
import { makePeer } from '../../test-support/fixtures/peers.ts';
import { PeerSchema } from './schema.ts';

// A point as result files held it before points named their clock (the wall clock, then).
const before = { pass: 'prefill', tokens: 64, depth: 0, samplesMs: [1.5], medianMs: 1.5, tokPerS: 42667 };
const withPoints = (points: unknown[]) => PeerSchema.safeParse({ ...makePeer([]), points });

describe('a peer point’s clock', () => {
  it('loads a point written before points named their clock', () => {
    const r = withPoints([before]);
    expect(r.success).toBe(true);
    expect(r.data?.points[0]).not.toHaveProperty('clock');
  });

  it('loads a point timed by llama.cpp’s counters with the wall clock beside them', () => {
    const point = { ...before, clock: 'llama.cpp-perf', wallSamplesMs: [2.1], wallMedianMs: 2.1 };
    expect(withPoints([point]).data?.points[0]).toEqual(point);
  });

  it('refuses a clock it does not know, and an empty wall clock', () => {
    expect(withPoints([{ ...before, clock: 'gpu' }]).success).toBe(false);
    expect(withPoints([{ ...before, wallSamplesMs: [] }]).success).toBe(false);
  });
});
