import type { TraceRequest } from '../src/serve/traffic.ts';
import { expect, test } from './harness/client.ts';

/**
 * The load test's correctness on the real engine, in both runtimes: every request's tokens under
 * continuous batching (decode rows mixed with prompt chunks), chunked prefill, preemption with
 * recompute and prefix-cache hits equal the same request run alone, and static batching never
 * admits a request into a running batch. Each scenario asserts that the path it checks was taken.
 */

/** Ten requests at t = 0: prompts of 40…94 tokens, most starting with the same 48-token prefix. */
function trace(): TraceRequest[] {
  return Array.from({ length: 10 }, (_, id) => {
    const promptTokens = 40 + ((id * 37) % 55);
    const shared = id % 4 !== 3;
    return {
      id,
      arrivalMs: 0,
      promptTokens,
      outputTokens: 10 + ((id * 7) % 15),
      prefixId: shared ? 0 : null,
      prefixTokens: shared ? Math.min(48, promptTokens - 1) : 0,
      class: id % 2 === 0 ? 'short' : 'long',
      priority: 0,
    };
  });
}

test.beforeEach(async ({ harness }) => {
  test.setTimeout(240_000);
  await harness.call('serve', 'useAutotuned');
});

test('continuous batching with chunked prompts, preemption and prefix hits: every request as if alone', async ({
  harness,
}) => {
  // 12 pages of 16 tokens for up to 6 running requests of up to 8 pages each: they must preempt.
  // A budget of 24 tokens per step splits every prompt into chunks.
  const r = await harness.call('serve', 'servedVsAlone', {
    trace: trace(),
    kvTokens: 192,
    pageSize: 16,
    arm: { batching: 'continuous', policy: 'fcfs', tokenBudget: 24, maxBatch: 6, prefixCache: true },
  });
  expect(r.states).toEqual(Array(10).fill('finished'));
  expect(r.mixedSteps).toBeGreaterThan(0);
  expect(r.chunkedPrompts).toBe(10);
  expect(r.preemptions).toBeGreaterThan(0);
  expect(r.prefixHitTokens).toBeGreaterThan(0);
  expect(r.replayMismatches).toBe(0);
  expect(r.identical).toEqual(Array(10).fill(true));
});

test('static batching: nothing joins a running batch, and every request is as if alone', async ({
  harness,
}) => {
  const r = await harness.call('serve', 'servedVsAlone', {
    trace: trace(),
    kvTokens: 4096,
    pageSize: 16,
    arm: { batching: 'static', policy: 'fcfs', tokenBudget: 64, maxBatch: 4, prefixCache: false },
  });
  expect(r.states).toEqual(Array(10).fill('finished'));
  expect(r.maxRunning).toBe(4);
  expect(r.joinedRunningBatch).toBe(false);
  expect(r.identical).toEqual(Array(10).fill(true));
});
