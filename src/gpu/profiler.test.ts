import { describe, expect, it } from 'vitest';
import { type Span, timerQuantumNs } from './profiler.ts';

const spans = (ns: readonly number[]): Span[] => ns.map((v, i) => ({ label: `p${i}`, ns: v, ms: v / 1e6 }));
const times = (tick: number, ks: readonly number[]) => ks.map((k) => k * tick);
const ONE_TO_EIGHT = [1, 2, 3, 4, 5, 6, 7, 8];

describe('timerQuantumNs', () => {
  it('finds Chrome’s 100 µs tick and a 1 ms tick', () => {
    expect(timerQuantumNs(spans(times(100_000, ONE_TO_EIGHT)))).toBe(100_000);
    // 2^20 ns (1,048,576) divides no multiple of 1 ms below 2^20 ms.
    expect(timerQuantumNs(spans(times(1_000_000, [3, 5, 7, 9, 11, 13, 15, 17])))).toBe(1_000_000);
  });

  it('finds a power-of-two tick, as Dawn’s masked timestamps have (65,536 ns on SwiftShader)', () => {
    // Odd multiples: 2^17 divides none of them, so 2^16 is the coarsest tick.
    expect(timerQuantumNs(spans(times(65_536, [1, 3, 5, 7, 9, 11, 13, 87])))).toBe(65_536);
    // Even and odd multiples together: still 2^16 (2^17 fails on the odd ones).
    expect(timerQuantumNs(spans(times(65_536, ONE_TO_EIGHT)))).toBe(65_536);
    expect(timerQuantumNs(spans(times(1_024, [1, 3, 5, 7, 9, 11, 13, 15])))).toBe(1_024);
  });

  it('ignores zero spans, and needs eight valid ones', () => {
    expect(timerQuantumNs(spans([0, 0, ...times(65_536, ONE_TO_EIGHT)]))).toBe(65_536);
    expect(timerQuantumNs(spans([0, 0, ...times(65_536, [1, 2, 3, 4, 5, 6, 7])]))).toBeNull();
  });

  it('says nothing of spans with nanosecond resolution', () => {
    // The GPU samples of an unquantized native run (webgpu 0.6.2 with the toggle off, SwiftShader:
    // `--runtime node --prefill 16,32 --depth 16 --no-autotune`).
    expect(
      timerQuantumNs(
        spans([8_236_836, 7_915_196, 5_863_147, 9_150_491, 9_544_761, 9_381_452, 2_611_180, 2_576_656]),
      ),
    ).toBeNull();
    // All multiples of 1,000 ns but one.
    expect(timerQuantumNs(spans([...times(1_000, [1, 2, 3, 4, 5, 6, 7]), 8_001]))).toBeNull();
  });
});
