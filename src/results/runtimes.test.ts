import { describe, expect, it } from 'vitest';
import { makeResult, scaleTimes } from '../../test-support/fixtures/base.ts';
import { makeFusionResult } from '../../test-support/fixtures/fusion.ts';
import { runtimeComparison } from './runtimes.ts';

describe('browser against native', () => {
  it('gives browser ÷ native per point in both clocks, and the overheads side by side', () => {
    const native = makeResult();
    // The same run with every pass twice as long, and a submit 4× as expensive (40 → 160 µs).
    const browser = { ...scaleTimes(native, 2), peaks: { ...native.peaks, submitUs: 160 } };
    const table = runtimeComparison(browser, native);
    const rows = table.split('\n').filter((l) => /^\| (prefill|decode) \|/.test(l));
    expect(rows).toHaveLength(native.points.length);
    for (const row of rows) {
      const cells = row.split('|').map((c) => c.trim());
      expect(cells[5]).toBe('2.00');
      expect(cells[8]).toMatch(/^(2\.00|–)$/);
    }
    expect(table).toContain('| submit + 4-byte readback, µs | 160.0 | 40.0 | 4.00 |');
    expect(table).toContain('| FMA, GFLOP/s | 2000.0 | 2000.0 | 1.00 |');
  });

  it('joins the fusion workload’s points to their own graph, never to the sweep’s point of that size', () => {
    const native = makeFusionResult();
    const browser = scaleTimes(native, 2);
    const rows = runtimeComparison(browser, native)
      .split('\n')
      .filter((l) => /^\| (prefill|decode)( (fused|unfused))? \|/.test(l));
    expect(rows).toHaveLength(native.points.length);
    expect(rows.filter((r) => r.startsWith('| prefill fused |'))).toHaveLength(1);
    expect(rows.filter((r) => r.startsWith('| decode unfused |'))).toHaveLength(1);
    // Each browser point against its own twin: exactly the 2× the browser run was scaled by.
    for (const row of rows) expect(row.split('|').map((c) => c.trim())[5]).toBe('2.00');
  });

  it('says so when no point ran in both', () => {
    const native = { ...makeResult(), points: [] };
    expect(runtimeComparison(makeResult(), native)).toContain('no point ran in both');
  });
});
