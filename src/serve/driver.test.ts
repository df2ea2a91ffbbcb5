import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from './driver.ts';

describe('sleep between arrivals', () => {
  it('leaves no abort listener on the arm’s signal once its timer fires', async () => {
    const signal = new AbortController().signal;
    for (let i = 0; i < 12; i++) await sleep(1, signal);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('ends at once on an abort, long before its timer', async () => {
    const c = new AbortController();
    const t0 = performance.now();
    const done = sleep(60_000, c.signal);
    c.abort();
    await done;
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
  });
});
