import { describe, expect, it } from 'vitest';
import { makeResult } from '../../../test-support/fixtures/base.ts';
import { makeFormatsResult } from '../../../test-support/fixtures/formats.ts';
import type { FormatSummary } from '../../spec/workloads/formats.ts';
import { resultWeights } from '../formats/weights.ts';
import { formatLines, msAt, splitByFormat, withFormats } from './formats.ts';

function row(format: FormatSummary['format'], decodeBytesPerToken: number, tpotMs: number): FormatSummary {
  return {
    format,
    linearBytes: 0,
    decodeBytesPerToken,
    tpotMs,
    tokensPerSec: 1000 / tpotMs,
    tpotRatio: null,
    prefillMs: 1,
    prefillRatio: null,
  };
}

describe('formatLines', () => {
  it('reads f32’s bandwidth off its row and keeps the measured copy roof', () => {
    // 200 MB in 4 ms is 50 GB/s; at 50 GB/s, 100 MB take 2 ms: half the bytes, half the time.
    const lines = formatLines([row('int8', 1e8, 3), row('f32', 2e8, 4)], 200);
    expect(lines).toEqual({ f32GBps: 50, copyGBps: 200 });
    expect(msAt(1e8, 50)).toBe(2);
    expect(msAt(1e9, 200)).toBe(5);
  });

  it('has no f32 line without an f32 row, and no roof without a copy bandwidth', () => {
    expect(formatLines([row('int8', 1e8, 3)], 0)).toEqual({ f32GBps: null, copyGBps: null });
  });
});

describe('splitByFormat and withFormats', () => {
  const sweep = makeFormatsResult();
  const single = makeResult();
  const run = (label: string, r = sweep) => ({ label, points: r.points, peaks: r.peaks });

  it('draws a sweep as one run per format, named by its format', () => {
    const split = splitByFormat([run('M2')]);
    expect(split.map((r) => r.label)).toEqual(['f32', 'f16', 'int8', 'int4']);
    for (const r of split)
      expect(r.points.map((p) => `${p.weightFormat} ${p.pass}`)).toEqual([
        `${r.label} prefill`,
        `${r.label} decode`,
      ]);
  });

  it('names the format beside the run when runs are compared, a file without formats as f32', () => {
    expect(splitByFormat([run('#1 M2'), run('#2 M2', single)]).map((r) => r.label)).toEqual([
      '#1 M2 · f32',
      '#1 M2 · f16',
      '#1 M2 · int8',
      '#1 M2 · int4',
      '#2 M2 · f32',
    ]);
    expect(withFormats([run('#1 M2'), run('#2 M2', single)]).map((r) => r.label)).toEqual([
      '#1 M2 · f32, f16, int8, int4',
      '#2 M2 · f32',
    ]);
    // One run of one format is drawn as it was.
    expect(splitByFormat([run('M2', single)])[0].label).toBe('M2');
    expect(withFormats([run('M2', single)])[0].label).toBe('M2');
  });

  it('says which weights a result ran: the sweep’s formats, or the model’s one', () => {
    expect(resultWeights(sweep)).toBe('f32, f16, int8, int4 (format sweep)');
    expect(resultWeights(single)).toBe('f32');
    const int8 = makeResult({
      model: { ...single.model, weightFormat: 'int8' },
      points: single.points.map((p) => ({ ...p, weightFormat: 'int8' as const })),
    });
    expect(resultWeights(int8)).toBe('int8');
  });
});
