import { describe, expect, it } from 'vitest';
import type { Progress } from '../src/runtime/api.ts';
import { pipedProgress, progressText } from './progress-text.ts';

const at = (done: number, label: string, elapsedMs: number): Progress => ({
  workload: 'decode',
  label,
  done,
  total: 3,
  elapsedMs,
  etaMs: elapsedMs,
});

describe('progress without a terminal', () => {
  it('prints one line per step: updates of the same step that move only the clocks print nothing', () => {
    const piped = pipedProgress();
    const lines = [
      at(0, 'd=16', 1000),
      at(0, 'd=16', 2000),
      at(0, 'd=16', 3000),
      at(1, 'd=128', 4000),
      at(1, 'd=128', 5000),
      at(2, 'd=512', 6000),
    ]
      .map(piped)
      .filter((l) => l !== null);
    expect(lines).toEqual([
      '[0/3] decode: d=16  elapsed 1s  ETA 1s',
      '[1/3] decode: d=128  elapsed 4s  ETA 4s',
      '[2/3] decode: d=512  elapsed 6s  ETA 6s',
    ]);
    expect(progressText({ ...at(3, 'done', 7000), workload: null, etaMs: null })).toBe(
      '[3/3] done  elapsed 7s',
    );
  });

  it('counts whole points where a workload reports a point in parts (a task table, slice by slice)', () => {
    // The KV workload's last point, its task table, one of six slices scored: 3 + 1/6.
    expect(progressText({ ...at(3 + 1 / 6, 'the arithmetic slice', 96_000), total: 4, etaMs: 26_000 })).toBe(
      '[3/4] decode: the arithmetic slice  elapsed 96s  ETA 26s',
    );
  });
});
