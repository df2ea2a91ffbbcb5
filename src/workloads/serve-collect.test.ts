import { describe, expect, it } from 'vitest';
import type { PeaksRecord, Point } from '../results/schema.ts';
import type { ServeRun } from '../spec/workloads/serve-result.ts';
import { batchScaling } from './decode-section.ts';
import { serveResult } from './serve-section.ts';

const peaks = { fmaGflops: 10, copyGBps: 2, submitUs: 500 } as PeaksRecord;
const decode = (batch: number, depth: number, medianMs: number, flops: number, bytes: number) =>
  ({ pass: 'decode', batch, depth, medianMs, flops, bytes }) as Point;

describe('B-scaling', () => {
  it('puts each step against max(FLOPs ÷ peak, bytes ÷ bandwidth) + submit, by hand', () => {
    const points = [
      // 1e9 FLOP at 10 GFLOP/s = 100 ms; 1e9 B at 2 GB/s = 500 ms; + 0.5 ms submit.
      decode(1, 8, 600, 1e9, 1e9),
      // 8e9 FLOP = 800 ms beats 1.2e9 B = 600 ms: compute-bound, 800.5 ms.
      decode(8, 8, 1601, 8e9, 1.2e9),
      // A deeper point of the same batch is not used.
      decode(8, 64, 9999, 8e9, 1.2e9),
    ];
    const rows = batchScaling(points, peaks);
    expect(rows.map((r) => r.batch)).toEqual([1, 8]);
    expect(rows[0].boundMs).toBeCloseTo(500.5, 9);
    expect(rows[1].boundMs).toBeCloseTo(800.5, 9);
    expect(rows[1].ratio).toBeCloseTo(1601 / 800.5, 9);
    // 8 tokens in 1.601 s.
    expect(rows[1].tokensPerSec).toBeCloseTo(8000 / 1601, 9);
  });

  it('needs at least two batch sizes', () => {
    expect(batchScaling([decode(1, 8, 600, 1e9, 1e9)], peaks)).toEqual([]);
  });
});

describe('the rate sweep', () => {
  const run = (label: string, rateRps: number | null, rps: number, good: number, p95: number) =>
    ({
      label,
      experiment: 'sweep',
      slo: { ttftMs: 500 },
      arrival: rateRps === null ? { kind: 'all-at-once' } : { kind: 'poisson', rateRps },
      summary: { requestsPerSec: rps, goodputRps: good, completed: 10, ttftMs: { p95 } },
    }) as unknown as ServeRun;

  it('reads each swept arm and the highest offered rate where ≥ 90% of requests met the SLOs', () => {
    const s = serveResult([
      run('synchronous', null, 1, 1, 100),
      run('saturating', null, 4, 2, 900),
      run('2 req/s', 2, 1.9, 1.9 * 0.95, 200),
      run('3 req/s', 3, 2.8, 2.8 * 0.85, 400),
    ]);
    expect(s.sweep?.points.map((p) => [p.rateRps, p.meetsSlo])).toEqual([
      [1, true],
      [4, false],
      [2, true],
      [3, false],
    ]);
    expect(s.sweep?.maxRateMeetingSlo).toBe(2);
  });

  it('says no rate meets an SLO when none was given', () => {
    const noSlo = { ...run('2 req/s', 2, 2, 2, 100), slo: {} } as ServeRun;
    expect(serveResult([noSlo]).sweep?.maxRateMeetingSlo).toBeNull();
  });
});
