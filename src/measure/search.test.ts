import { describe, expect, it } from 'vitest';
import { type FirstTrial, successiveHalving } from './search.ts';

/** A clock that advances only when a trial says so. */
function fakeClock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('successiveHalving', () => {
  it('keeps ⌈n / eta⌉ per rung, times survivors eta× as often, and picks the fastest of the last rung', async () => {
    const clock = fakeClock();
    const rung0: Record<string, number> = { a: 5, b: 3, c: 4, d: 1, e: 2 };
    // Later rungs see other times (noise), so the winner is decided by the last rung: d.
    const later: Record<number, Record<string, number>> = {
      2: { d: 2.5, e: 1.5, b: 3 },
      4: { d: 1.4, e: 1.6 },
    };
    const calls: string[] = [];
    const first =
      (c: string): FirstTrial =>
      async (reps) => {
        calls.push(`${c}@${reps}`);
        return { valid: true, ms: rung0[c] };
      };
    const again = async (c: string, reps: number) => {
      calls.push(`${c}@${reps}`);
      return later[reps][c];
    };
    const r = await successiveHalving(['a', 'b', 'c', 'd', 'e'], first, again, {
      eta: 2,
      reps0: 1,
      budgetMs: 1e9,
      now: clock.now,
    });
    // Rung 0: all five once. Rung 1: ⌈5/2⌉ = 3 fastest (d 1, e 2, b 3) at 2 reps. Rung 2: ⌈3/2⌉ = 2
    // (e 1.5, d 2.5) at 4 reps. Then ⌈2/2⌉ = 1: done, d (1.4) beats e (1.6).
    expect(calls).toEqual(['a@1', 'b@1', 'c@1', 'd@1', 'e@1', 'd@2', 'e@2', 'b@2', 'e@4', 'd@4']);
    expect(r.best).toBe('d');
    expect(r.rungs).toBe(3);
    expect(r.budgetSpent).toBe(false);
    expect(r.records.map((x) => [x.candidate, x.rung, x.ms])).toEqual([
      ['a', 0, 5],
      ['b', 1, 3],
      ['c', 0, 4],
      ['d', 2, 1.4],
      ['e', 2, 1.6],
    ]);
  });

  it('records a failed candidate and never chooses it, even when it reports a time', async () => {
    const first =
      (c: string): FirstTrial =>
      async () =>
        c === 'bad' ? { valid: false, ms: 0.1, error: 'mismatch at row 3' } : { valid: true, ms: 2 };
    const r = await successiveHalving(['bad', 'ok'], first, async () => 2, {
      eta: 2,
      reps0: 1,
      budgetMs: 1e9,
      now: () => 0,
    });
    expect(r.best).toBe('ok');
    expect(r.records[0]).toEqual({
      candidate: 'bad',
      valid: false,
      ms: null,
      rung: -1,
      skipped: false,
      error: 'mismatch at row 3',
    });
  });

  it('stops trying new candidates once the budget is spent, and skips a rung that would overrun it', async () => {
    const clock = fakeClock();
    // Each rung-0 trial costs 10 ms (the compile); the budget is 25 ms.
    const first =
      (c: number): FirstTrial =>
      async () => {
        clock.advance(10);
        return { valid: true, ms: c };
      };
    let agains = 0;
    const r = await successiveHalving([3, 1, 2, 0.5, 0.1], first, async () => ++agains, {
      eta: 2,
      reps0: 1,
      budgetMs: 25,
      now: clock.now,
    });
    // Trials start at t = 0, 10, 20; at t = 30 the rest are skipped, and rung 1 (2 × 2 reps of
    // ~1.5 ms) would end past 25 ms, so the winner is rung 0's fastest of those tried.
    expect(r.records.map((x) => x.skipped)).toEqual([false, false, false, true, true]);
    expect(agains).toBe(0);
    expect(r.best).toBe(1);
    expect(r.rungs).toBe(1);
    expect(r.budgetSpent).toBe(true);
  });

  it('tries the first minTried candidates whatever the budget', async () => {
    const clock = fakeClock();
    const first =
      (c: number): FirstTrial =>
      async () => {
        clock.advance(100);
        return { valid: true, ms: c };
      };
    // The budget is spent after the first trial; the second is a family centre and still runs.
    const r = await successiveHalving([2, 1, 0.5], first, async () => 0, {
      eta: 2,
      reps0: 1,
      budgetMs: 50,
      minTried: 2,
      now: clock.now,
    });
    expect(r.records.map((x) => x.skipped)).toEqual([false, false, true]);
    expect(r.best).toBe(1);
  });

  it('goes past the budget until one candidate passes', async () => {
    const clock = fakeClock();
    const first =
      (c: string): FirstTrial =>
      async () => {
        clock.advance(100);
        return c === 'late' ? { valid: true, ms: 1 } : { valid: false, ms: null, error: 'compile error' };
      };
    const r = await successiveHalving(['x', 'y', 'late', 'never'], first, async () => 1, {
      eta: 3,
      reps0: 1,
      budgetMs: 50,
      now: clock.now,
    });
    expect(r.best).toBe('late');
    expect(r.records.map((x) => x.skipped)).toEqual([false, false, false, true]);
  });

  it('has no winner when nothing passes', async () => {
    const r = await successiveHalving(
      ['x'],
      () => async () => ({ valid: false, ms: null }),
      async () => 1,
      {
        eta: 2,
        reps0: 1,
        budgetMs: 10,
        now: () => 0,
      },
    );
    expect(r.best).toBeUndefined();
    expect(r.rungs).toBe(0);
  });
});
