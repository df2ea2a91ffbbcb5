import { describe, expect, it } from 'vitest';
import { installDawnPollNaps, NAP_MAX_MS } from './dawn-poll.ts';

/** Polls `poll` with setImmediate, as dawn.node does, until `ms` have passed; resolves with the count. */
function pollFor(poll: () => void, ms: number): Promise<{ polls: number; overMs: number }> {
  const start = performance.now();
  let polls = 0;
  return new Promise((resolve) => {
    // A bound function prints as native code, as dawn.node's poll callback does.
    const tick = function (this: unknown) {
      polls++;
      poll();
      const elapsed = performance.now() - start;
      if (elapsed >= ms) resolve({ polls, overMs: elapsed - ms });
      else setImmediate(bound);
    };
    const bound = tick.bind(null);
    setImmediate(bound);
  });
}

describe('installDawnPollNaps', () => {
  it('naps a long native poll (a tenth of the wait, at most NAP_MAX_MS), leaves JavaScript callbacks alone', async () => {
    // Before: how many polls a spinning 60 ms wait makes on this machine.
    const spinning = await pollFor(() => {}, 60);
    installDawnPollNaps();
    installDawnPollNaps(); // idempotent: one wrapper, not two
    const napping = await pollFor(() => {}, 60);
    // By hand: free polls for the first 0.05 / 0.1 = 0.5 ms (tens to a few hundred, with the
    // machine's load), then naps of a tenth of the wait: about 10·ln(10 / 0.5) ≈ 30 polls until the
    // nap reaches NAP_MAX_MS at 10 ms, then one poll per millisecond: about 50 more.
    expect(spinning.polls).toBeGreaterThan(600);
    expect(napping.polls - 80).toBeLessThan(spinning.polls / 3);
    // The wait ends no later than one nap past its end (plus a scheduler's slack).
    expect(napping.overMs).toBeLessThan(NAP_MAX_MS + 5);

    // A JavaScript callback is called as before, with its arguments.
    const args = await new Promise<unknown[]>((resolve) => setImmediate((a, b) => resolve([a, b]), 1, 'x'));
    expect(args).toEqual([1, 'x']);
  });
});
