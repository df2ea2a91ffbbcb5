import { describe, expect, it } from 'vitest';
import type { BenchResult } from '../results/schema.ts';
import { evaluateTargets } from './targets.ts';

const roofs = { fmaGflops: 10, copyGBps: 2, dispatchUs: 10, submitUs: 300 };

/** A kernel-suite result holding only the long decode attention points (what this target reads). */
function suiteWith(points: { variant: string; medianMs: number }[]) {
  const kernelPoints = points.map((p) => ({
    name: 'attention decode long',
    shape: { L: 1, depth: 4000, batch: 1, heads: 4, headDim: 32 },
    ...p,
  }));
  return { points: [], kernelPoints, spec: { workloads: [] } } as unknown as Omit<BenchResult, 'targets'>;
}

describe('split-K decode attention target', () => {
  it('compares the fastest split candidate with direct at the long depth, as a speed ratio', () => {
    const r = suiteWith([
      { variant: 'direct paged(16)', medianMs: 30 },
      { variant: 'split(chunk=32) paged(16)', medianMs: 12 },
      { variant: 'split(chunk=128) paged(16)', medianMs: 10 },
    ]);
    const t = evaluateTargets(r, roofs).find((x) => x.name.startsWith('split-K'));
    expect(t?.name).toBe('split-K decode attention at batch 1, depth 4000');
    expect(t?.met).toBe(true);
    // 30 / 10 = 3.00, the fastest split named.
    expect(t?.reached).toBe("3.00× direct's speed (split(chunk=128) paged(16): 10.00 ms against 30.00 ms)");
  });

  it('is missed when every split candidate is slower, and absent without both families', () => {
    const slower = suiteWith([
      { variant: 'direct paged(16)', medianMs: 8 },
      { variant: 'split(chunk=32) paged(16)', medianMs: 10 },
    ]);
    const t = evaluateTargets(slower, roofs).find((x) => x.name.startsWith('split-K'));
    expect(t?.met).toBe(false);
    expect(t?.reached).toMatch(/^0\.80× /);
    const onlyDirect = suiteWith([{ variant: 'direct paged(16)', medianMs: 8 }]);
    expect(evaluateTargets(onlyDirect, roofs).some((x) => x.name.startsWith('split-K'))).toBe(false);
  });
});
