import { describe, expect, it } from 'vitest';
import { specFromOptions } from '../spec/options.ts';
import {
  detectThrottling,
  parseDuration,
  SustainedSectionSchema,
  type SustainedWindow,
} from '../spec/workloads/sustained.ts';
import { type SustainedRecord, sustainedSection } from './sustained.ts';

/** Windows of 10 s of one pass at these tok/s, from t = 0. */
function windows(pass: SustainedWindow['pass'], tps: readonly number[]): SustainedWindow[] {
  return tps.map((tokPerS, i) => ({ startS: i * 10, pass, tokPerS, passes: 3 }));
}

describe('detectThrottling', () => {
  it('finds a drop that lasts, from the window it began', () => {
    // First minute: 100 each (median 100). From 90 s: 80, 80, 75 → 20 % and more below.
    const w = windows('decode', [100, 100, 100, 100, 100, 100, 95, 92, 80, 80, 75]);
    const t = detectThrottling(w);
    expect(t.detected).toBe(true);
    expect(t.startS).toBe(80);
    expect(t.pass).toBe('decode');
    // Median of 80, 80, 75 is 80: 20 % below the baseline.
    expect(t.dropPct).toBeCloseTo(20, 9);
    expect(t.baseline).toEqual({ prefill: null, decode: 100 });
  });

  it('does not call one slow window a throttle', () => {
    const w = windows('prefill', [100, 102, 98, 100, 101, 99, 100, 70, 100, 99]);
    const t = detectThrottling(w);
    expect(t.detected).toBe(false);
    expect(t.startS).toBeNull();
    // Later windows 100, 70, 100, 99: median 99.5 against 100.
    expect(t.dropPct).toBeCloseTo(0.5, 9);
  });

  it('takes a slow last window as the start of a drop (nothing after it to clear it)', () => {
    const t = detectThrottling(windows('prefill', [100, 100, 100, 100, 100, 100, 100, 85]));
    expect(t).toMatchObject({ detected: true, startS: 70, pass: 'prefill' });
    expect(t.dropPct).toBeCloseTo(15, 9);
  });

  it('judges nothing without a window after the first minute', () => {
    const t = detectThrottling([...windows('prefill', [100, 50, 40]), ...windows('decode', [10, 9, 8])]);
    expect(t).toEqual({
      detected: false,
      startS: null,
      dropPct: null,
      pass: null,
      baseline: { prefill: 50, decode: 9 },
    });
  });

  it('reports the pass with the larger drop when both fell', () => {
    const t = detectThrottling([
      ...windows('prefill', [100, 100, 100, 100, 100, 100, 85, 85]),
      ...windows('decode', [10, 10, 10, 10, 10, 10, 6, 6]),
    ]);
    expect(t.pass).toBe('decode');
    expect(t.dropPct).toBeCloseTo(40, 9);
  });
});

describe('parseDuration', () => {
  it('reads seconds, minutes and hours', () => {
    expect(['60', '60s', '5m', '1.5m', '1h', ' 2 m '].map(parseDuration)).toEqual([
      60, 60, 300, 90, 3600, 120,
    ]);
    expect(['', 'five', '5 min', '-3', '1d'].map(parseDuration).every(Number.isNaN)).toBe(true);
  });
});

describe('sustainedSection', () => {
  const settings = { durationS: 60, windowS: 10, length: 64, depth: 32 };
  const window = (startS: number, pass: SustainedWindow['pass'], tokPerS: number): SustainedRecord => ({
    type: 'sustained-window',
    startS,
    pass,
    tokPerS,
    passes: 2,
  });

  it('keeps the windows and roofs of a cancelled run, lasting as far as its last window', () => {
    const s = sustainedSection(
      [
        { type: 'sustained-roofs', atS: 0, fmaGflops: 50, copyGBps: 10 },
        window(0, 'prefill', 900),
        window(0, 'decode', 60),
        window(10, 'prefill', 880),
        window(10, 'decode', 58),
      ],
      settings,
    );
    expect(s).toBeDefined();
    expect(SustainedSectionSchema.safeParse(s).success).toBe(true);
    expect(s?.durationS).toBe(20);
    expect(s?.windows).toHaveLength(4);
    expect(s?.roofs).toEqual([{ atS: 0, fmaGflops: 50, copyGBps: 10 }]);
    expect(s?.throttling.baseline).toEqual({ prefill: 890, decode: 59 });
  });

  it('takes the duration the run measured from its end record', () => {
    const s = sustainedSection(
      [
        window(0, 'prefill', 900),
        { type: 'sustained-end', durationS: 60.2, windowS: 10, prefillTokens: 64, decodeDepth: 32 },
      ],
      settings,
    );
    expect(s?.durationS).toBe(60.2);
  });

  it('writes no section when nothing finished', () => {
    expect(sustainedSection([], settings)).toBeUndefined();
  });
});

describe('--suite sustained', () => {
  it('builds one workload from the duration, the window, the roofs interval and the passes', () => {
    const spec = specFromOptions(
      { kind: 'preset', preset: 'ci-tiny', seed: 0 },
      { suite: 'sustained', durationS: 60, windowS: 5, prefill: [32], depths: [16], gen: 8 },
    );
    expect(spec.workloads).toEqual([
      { kind: 'sustained', durationS: 60, windowS: 5, roofEveryS: 60, length: 32, depth: 16, gen: 8 },
    ]);
  });

  it('refuses a window longer than the duration, naming the option', () => {
    expect(() =>
      specFromOptions(
        { kind: 'preset', preset: 'ci-tiny', seed: 0 },
        { suite: 'sustained', durationS: 5, windowS: 10 },
      ),
    ).toThrow('windowS: the tok/s window (--interval) must not be longer than the duration (--duration)');
  });
});
