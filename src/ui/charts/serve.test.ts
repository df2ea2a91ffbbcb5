import { describe, expect, it } from 'vitest';
import { makeServeResult } from '../../../test-support/fixtures/serve.ts';
import { cdfSteps } from './serve-cdf.ts';
import { chartArms, classOrder, phasesOf } from './serve-common.ts';
import { ttftSplit } from './serve-ttft-split.ts';
import { pickRequests } from './serve-waterfall.ts';

const serve = makeServeResult().serve;
if (!serve) throw new Error('the fixture has no serve section');
const [, continuous] = serve.runs;

describe('the load-test charts’ data', () => {
  it('draw the A/B arms, the classes in the default mix’s order', () => {
    expect(chartArms(serve).map((r) => r.label)).toEqual(['continuous', 'static']);
    expect(classOrder(serve.runs)).toEqual(['short', 'rag', 'long-gen']);
    const swept = makeServeResult({ sweep: true }).serve;
    expect(swept && chartArms(swept).map((r) => r.experiment)).toEqual(Array(5).fill('sweep'));
  });

  it('cut each request into queue, prefill and decode that add up to its TTFT and E2E', () => {
    for (const q of continuous.requests) {
      const p = phasesOf(q);
      if (!p) throw new Error(`request ${q.id} did not finish`);
      expect(p.queueMs + p.prefillMs).toBeCloseTo(p.ttftMs, 9);
      expect(p.queueMs + p.prefillMs + p.decodeMs).toBeCloseTo(p.e2eMs, 9);
      expect(p.queueMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('split TTFT into means that sum to the class’s mean TTFT in the summary', () => {
    for (const s of ttftSplit(serve.runs)) {
      const run = serve.runs.find((r) => r.label === s.arm);
      expect(s.queueMs + s.prefillMs).toBeCloseTo(run?.byClass[s.class].ttftMs?.mean ?? -1, 9);
      expect(s.queueMs).toBeCloseTo(run?.byClass[s.class].queueMs?.mean ?? -1, 9);
    }
  });

  it('pick the fastest, median and slowest TTFT of each class for the waterfall', () => {
    const picked = pickRequests(continuous, 'mix');
    expect(picked).toHaveLength(9);
    for (const c of ['short', 'rag', 'long-gen']) {
      const ttfts = continuous.requests
        .filter((q) => q.class === c)
        .map((q) => phasesOf(q)?.ttftMs ?? 0)
        .sort((a, b) => a - b);
      const mine = picked.filter((q) => q.class === c).map((q) => phasesOf(q)?.ttftMs ?? 0);
      expect(mine).toContain(ttfts[0]);
      expect(mine).toContain(ttfts[Math.floor((ttfts.length - 1) / 2)]);
      expect(mine).toContain(ttfts[ttfts.length - 1]);
    }
    // In arrival order, as the rows are drawn.
    expect(picked.map((q) => q.arrivalMs)).toEqual([...picked.map((q) => q.arrivalMs)].sort((a, b) => a - b));
    expect(pickRequests(continuous, 'preempted').map((q) => q.preemptions)).toEqual([1]);
    expect(pickRequests(continuous, 'slowest')).toHaveLength(10);
  });

  it('draw an empirical CDF: a step of 1 ÷ n at each sorted value', () => {
    expect(cdfSteps([30, 10, 20])).toEqual([
      { ms: 10, share: 0 },
      { ms: 10, share: 1 / 3 },
      { ms: 20, share: 2 / 3 },
      { ms: 30, share: 1 },
    ]);
    expect(cdfSteps([])).toEqual([]);
  });
});
