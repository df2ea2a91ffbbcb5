import { describe, expect, it } from 'vitest';
import { SpecError } from '../errors.ts';
import { byClass, parseSlo, type RequestRecord, slowdown, summarize } from './metrics.ts';

function rec(over: Partial<RequestRecord> & Pick<RequestRecord, 'id' | 'arrivalMs'>): RequestRecord {
  return {
    class: 'a',
    priority: 0,
    promptTokens: 8,
    outputTokens: 1,
    prefixHitTokens: 0,
    preemptions: 0,
    status: 'finished',
    admittedMs: over.arrivalMs,
    tokenTimesMs: [],
    finishMs: null,
    ...over,
  };
}

/**
 * Four finished requests and one failed, timed by hand (ms):
 *   id  arrival admitted tokens              finish | queue TTFT E2E  TPOT           ITL
 *   0   0       0        10 15 20 25         25     | 0     10   25   (25−10)/3 = 5  5 5 5
 *   1   10      12       30 40               40     | 2     20   30   (30−20)/1 = 10 10
 *   2   20      30       60                  60     | 10    40   40   (1 token: none) —
 *   3   30      30       40 42 50 51 60      62     | 0     10   32   (32−10)/4 = 5.5 2 8 1 9
 *   4   40      (failed, never admitted)
 */
const records: RequestRecord[] = [
  rec({
    id: 0,
    arrivalMs: 0,
    admittedMs: 0,
    tokenTimesMs: [10, 15, 20, 25],
    finishMs: 25,
    outputTokens: 4,
    promptTokens: 8,
    soloTtftMs: 5,
    soloE2eMs: 20,
  }),
  rec({
    id: 1,
    arrivalMs: 10,
    admittedMs: 12,
    tokenTimesMs: [30, 40],
    finishMs: 40,
    outputTokens: 2,
    promptTokens: 16,
    prefixHitTokens: 8,
    soloTtftMs: 5,
    soloE2eMs: 15,
  }),
  rec({
    id: 2,
    class: 'b',
    arrivalMs: 20,
    admittedMs: 30,
    tokenTimesMs: [60],
    finishMs: 60,
    outputTokens: 1,
    promptTokens: 32,
    prefixHitTokens: 16,
  }),
  rec({
    id: 3,
    class: 'b',
    arrivalMs: 30,
    admittedMs: 30,
    tokenTimesMs: [40, 42, 50, 51, 60],
    finishMs: 62,
    outputTokens: 5,
    promptTokens: 64,
    preemptions: 1,
    recomputedTokens: 20,
    soloTtftMs: 10,
    soloE2eMs: 32,
  }),
  rec({
    id: 4,
    class: 'b',
    status: 'failed',
    error: 'KV cache exhausted',
    arrivalMs: 40,
    admittedMs: null,
    promptTokens: 1000,
    outputTokens: 0,
    preemptions: 2,
    soloTtftMs: 1,
    soloE2eMs: 1,
  }),
];

// Percentiles by linear interpolation at rank p/100 · (n − 1) over the sorted samples.
describe('summarize', () => {
  const s = summarize(records, { durationMs: 100 });

  it('counts and rates over the duration', () => {
    expect(s.completed).toBe(4);
    expect(s.failed).toBe(1);
    expect(s.cancelled).toBe(0);
    // 100 ms = 0.1 s: 4 requests, 4+2+1+5 = 12 output tokens, 8+16+32+64 = 120 prompt tokens.
    expect(s.requestsPerSec).toBeCloseTo(40, 10);
    expect(s.outputTokensPerSec).toBeCloseTo(120, 10);
    expect(s.totalTokensPerSec).toBeCloseTo(1320, 10);
    expect(s.goodputRps).toBeCloseTo(40, 10);
  });

  it('counts prefix hits, prefill work and preemptions', () => {
    // Hits 0+8+16+0 = 24 of 120 prompt tokens (the failed request's 1000 do not count).
    expect(s.prefixHitRate).toBeCloseTo(0.2, 12);
    // 120 − 24 + 20 recomputed.
    expect(s.prefillTokensComputed).toBe(116);
    // 1 + the failed request's 2.
    expect(s.preemptions).toBe(3);
  });

  it('has TTFT, TPOT, ITL, E2E and queue by hand', () => {
    // TTFT sorted 10 10 20 40: mean 20; p50 at rank 1.5 = 15; p90 at 2.7 = 20 + 0.7·20 = 34;
    // p95 at 2.85 = 37; p99 at 2.97 = 39.4.
    expectDist(s.ttftMs, { mean: 20, p50: 15, p90: 34, p95: 37, p99: 39.4 });
    // TPOT sorted 5 5.5 10: mean 20.5/3; p50 at rank 1 = 5.5; p90 at 1.8 = 5.5 + 0.8·4.5 = 9.1;
    // p95 at 1.9 = 9.55; p99 at 1.98 = 9.91.
    expectDist(s.tpotMs, { mean: 20.5 / 3, p50: 5.5, p90: 9.1, p95: 9.55, p99: 9.91 });
    // ITL sorted 1 2 5 5 5 8 9 10: mean 45/8; p50 at rank 3.5 = 5; p90 at 6.3 = 9.3; p95 at 6.65 = 9.65;
    // p99 at 6.93 = 9.93.
    expectDist(s.itlMs, { mean: 5.625, p50: 5, p90: 9.3, p95: 9.65, p99: 9.93 });
    // E2E sorted 25 30 32 40: mean 31.75; p50 at 1.5 = 31; p90 at 2.7 = 32 + 0.7·8 = 37.6; p95 38.8; p99 39.76.
    expectDist(s.e2eMs, { mean: 31.75, p50: 31, p90: 37.6, p95: 38.8, p99: 39.76 });
    // Queue sorted 0 0 2 10: mean 3; p50 at 1.5 = 1; p90 at 2.7 = 2 + 0.7·8 = 7.6; p95 8.8; p99 9.76.
    expectDist(s.queueMs, { mean: 3, p50: 1, p90: 7.6, p95: 8.8, p99: 9.76 });
  });

  it('gives null distributions when nothing finished', () => {
    const none = summarize([records[4]], { durationMs: 1000 });
    expect(none).toMatchObject({
      completed: 0,
      failed: 1,
      requestsPerSec: 0,
      prefixHitRate: 0,
      preemptions: 2,
    });
    for (const d of [none.ttftMs, none.tpotMs, none.itlMs, none.e2eMs, none.queueMs]) expect(d).toBeNull();
    // One single-token request: TTFT but no TPOT or ITL sample.
    const one = summarize([records[2]], { durationMs: 1000 });
    expect(one.ttftMs).toEqual({ mean: 40, p50: 40, p90: 40, p95: 40, p99: 40 });
    expect(one.tpotMs).toBeNull();
    expect(one.itlMs).toBeNull();
  });

  it('counts cancelled requests apart and does not time them', () => {
    const cancelled = rec({ id: 9, status: 'cancelled', arrivalMs: 0, tokenTimesMs: [1000], finishMs: null });
    const c = summarize([...records, cancelled], { durationMs: 100 });
    expect(c.cancelled).toBe(1);
    expect(c.completed).toBe(4);
    expect(c.ttftMs?.mean).toBe(20);
  });

  it('rejects a non-positive duration and a finished request without a finish time', () => {
    expect(() => summarize(records, { durationMs: 0 })).toThrow(/durationMs/);
    expect(() => summarize([rec({ id: 7, arrivalMs: 0, tokenTimesMs: [1] })], { durationMs: 1 })).toThrow(
      /request 7: .*finishMs/,
    );
  });
});

describe('goodput', () => {
  // Each SLO below leaves out exactly one of the four finished requests: 3 / 0.1 s.
  it('leaves out the request over a TTFT SLO, counting TTFT equal to it as met', () => {
    // TTFTs 10, 20, 40, 10: only request 2 is over 20.
    expect(summarize(records, { durationMs: 100, slo: { ttftMs: 20 } }).goodputRps).toBeCloseTo(30, 10);
    expect(summarize(records, { durationMs: 100, slo: { ttftMs: 19.9 } }).goodputRps).toBeCloseTo(20, 10);
  });

  it('checks each request’s TPOT, a single token passing', () => {
    // TPOTs 5, 10, —, 5.5: only request 1 is over 9; request 2 has one token.
    expect(summarize(records, { durationMs: 100, slo: { tpotMs: 9 } }).goodputRps).toBeCloseTo(30, 10);
  });

  it('checks E2E, and every SLO at once', () => {
    // E2Es 25, 30, 40, 32: only request 2 is over 35.
    expect(summarize(records, { durationMs: 100, slo: { e2elMs: 35 } }).goodputRps).toBeCloseTo(30, 10);
    // TTFT ≤ 20 and TPOT ≤ 9 and E2E ≤ 35: requests 1 and 2 fail one each.
    const all = summarize(records, { durationMs: 100, slo: { ttftMs: 20, tpotMs: 9, e2elMs: 35 } });
    expect(all.goodputRps).toBeCloseTo(20, 10);
    expect(all.requestsPerSec).toBeCloseTo(40, 10);
  });
});

describe('byClass', () => {
  it('summarizes each class over the run’s duration', () => {
    const c = byClass(records, { durationMs: 100 });
    expect(Object.keys(c)).toEqual(['a', 'b']);
    expect(c.a).toMatchObject({ completed: 2, failed: 0, preemptions: 0, prefillTokensComputed: 16 });
    // a: TTFT 10, 20; 2 requests and 6 output tokens in 0.1 s.
    expect(c.a.requestsPerSec).toBeCloseTo(20, 10);
    expect(c.a.outputTokensPerSec).toBeCloseTo(60, 10);
    expectDist(c.a.ttftMs, { mean: 15, p50: 15, p90: 19, p95: 19.5, p99: 19.9 });
    // b: requests 2, 3 finished, 4 failed; TTFT 40, 10; prefill 32 − 16 + 64 + 20 recomputed.
    expect(c.b).toMatchObject({ completed: 2, failed: 1, preemptions: 3, prefillTokensComputed: 100 });
    expectDist(c.b.ttftMs, { mean: 25, p50: 25, p90: 37, p95: 38.5, p99: 39.7 });
  });
});

describe('slowdown', () => {
  it('is load over solo for finished requests with baselines', () => {
    // Requests 0, 1, 3 (2 has none; 4 failed). TTFT ratios 10/5, 20/5, 10/10 = 2 4 1: sorted 1 2 4,
    // p50 2, p95 at rank 1.9 = 2 + 0.9·2 = 3.8. E2E ratios 25/20, 30/15, 32/32 = 1.25 2 1: sorted
    // 1 1.25 2, p50 1.25, p95 = 1.25 + 0.9·0.75 = 1.925.
    const s = slowdown(records);
    expect(s?.n).toBe(3);
    expect(s?.ttft.p50).toBeCloseTo(2, 12);
    expect(s?.ttft.p95).toBeCloseTo(3.8, 12);
    expect(s?.e2e.p50).toBeCloseTo(1.25, 12);
    expect(s?.e2e.p95).toBeCloseTo(1.925, 12);
    expect(slowdown([records[2], records[4]])).toBeNull();
  });
});

describe('parseSlo', () => {
  it('reads any subset', () => {
    expect(parseSlo('ttft:200,tpot:50,e2el:5000')).toEqual({ ttftMs: 200, tpotMs: 50, e2elMs: 5000 });
    expect(parseSlo('tpot:12.5')).toEqual({ tpotMs: 12.5 });
    expect(parseSlo(' e2el : 1000 , ttft:.5 ')).toEqual({ e2elMs: 1000, ttftMs: 0.5 });
  });

  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['ttft', /"ttft".*milliseconds/],
    ['ttft:', /"ttft:".*milliseconds/],
    ['ttft:0', /"ttft:0".*> 0/],
    ['tpot:-5', /"tpot:-5"/],
    ['tpot:abc', /"tpot:abc"/],
    ['e2el:1e999', /"e2el:1e999"/],
    ['ttft:100,itl:20', /"itl:20".*unknown metric "itl"/],
    ['ttft:100,', /unknown metric ""/],
    ['ttft:100,ttft:200', /"ttft:200".*twice/],
  ];
  for (const [text, message] of bad) {
    it(`rejects "${text}", naming the part`, () => {
      expect(() => parseSlo(text)).toThrow(SpecError);
      expect(() => parseSlo(text)).toThrow(message);
    });
  }
});

function expectDist(
  d: { mean: number; p50: number; p90: number; p95: number; p99: number } | null,
  want: { mean: number; p50: number; p90: number; p95: number; p99: number },
): void {
  expect(d).not.toBeNull();
  for (const k of ['mean', 'p50', 'p90', 'p95', 'p99'] as const) expect(d?.[k], k).toBeCloseTo(want[k], 10);
}
