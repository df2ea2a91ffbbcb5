import { describe, expect, it } from 'vitest';
import { makePeer } from '../../test-support/fixtures/peers.ts';
import {
  agreementDetail,
  llamaBenchName,
  nearTiesNote,
  type OwnPoint,
  peerClockLine,
  peerSpeedClock,
  peersHeadline,
  peersReport,
  speedRatios,
} from './report.ts';
import type { PeerRecord } from './schema.ts';

const own: OwnPoint[] = [
  { pass: 'prefill', tokens: 64, depth: 0, batch: 1, medianMs: 20 },
  // The fusion workload's point at the same L is not the run's own sweep: never joined.
  { pass: 'prefill', tokens: 64, depth: 0, batch: 1, medianMs: 1, graph: 'unfused' },
  { pass: 'decode', tokens: 1, depth: 16, batch: 1, medianMs: 4 },
];

const peer = (points: PeerRecord['points'], error?: string) => makePeer(points, error ? { error } : {});

const pp64 = { pass: 'prefill' as const, tokens: 64, depth: 0, samplesMs: [10], medianMs: 10, tokPerS: 6400 };
const tg = { pass: 'decode' as const, tokens: 1, depth: 16, samplesMs: [1], medianMs: 1, tokPerS: 1000 };

describe('the side-by-side report', () => {
  it('names tests as llama-bench does', () => {
    expect(llamaBenchName(pp64, 16)).toBe('pp64');
    expect(llamaBenchName(tg, 16)).toBe('tg16 @ d16');
  });

  it('joins peer points to the run’s own batch-1 points and takes speed ratios by hand', () => {
    // pp64: this engine 64 / 20 ms = 3200 tok/s against 6400: 0.5. tg: 250 tok/s against 1000: 0.25.
    const r = speedRatios(own, peer([pp64, tg]));
    expect(r.map((x) => x.ratio)).toEqual([0.5, 0.25]);
  });

  it('headlines each peer and gives the software-adapter verdict when the peer wins', () => {
    const text = peersHeadline(own, [peer([pp64, tg])], 'SwiftShader', true);
    expect(text).toContain('0.50× in prefill, 0.25× in decode llama.cpp cpu');
    expect(text).toMatch(
      /Verdict: llama\.cpp is faster on this machine, as expected: the adapter is a software one/,
    );
    expect(peersHeadline(own, [peer([{ ...pp64, medianMs: 40, tokPerS: 1600 }])], 'GPU', false)).toMatch(
      /2\.00× in prefill.*\n\nVerdict: this engine on this adapter is faster/s,
    );
  });

  it('says why a peer did not run, and still reports the others', () => {
    const text = peersReport(own, [peer([], 'not installed'), peer([pp64])], 16, 'SwiftShader', true);
    expect(text).toContain('Not measured: not installed');
    expect(text).toContain('| pp64 | 20.00 | 10.00 | 3200.0 | 6400.0 | 0.50× |');
  });

  it('names the clock of the speed column, and puts the wall clock beside llama.cpp’s own', () => {
    const counted = peer([
      { ...pp64, clock: 'llama.cpp-perf', wallSamplesMs: [14], wallMedianMs: 14 },
      { ...tg, clock: 'llama.cpp-perf', wallSamplesMs: [3], wallMedianMs: 3 },
    ]);
    expect(peerSpeedClock(counted)).toMatch(/llama\.cpp’s own counters \(llama_perf_context\)/);
    const text = peersReport(own, [counted], 16, 'SwiftShader', true);
    expect(text).toContain(
      '| test | this engine ms | llama.cpp cpu ms | llama.cpp cpu wall ms | this engine tok/s | llama.cpp cpu tok/s | speed (this ÷ peer) |',
    );
    // The speed column is taken from llama.cpp's time (10 ms), not the wall clock's (14 ms).
    expect(text).toContain('| pp64 | 20.00 | 10.00 | 14.00 | 3200.0 | 6400.0 | 0.50× |');
    expect(text).toMatch(/Speed column \(and llama\.cpp cpu ms, tok\/s\): llama\.cpp’s own counters/);
    // Points from before they named a clock: the record's clock line alone, and no wall column.
    expect(peerClockLine(peer([pp64]))).toBe('Clock: wall.');
    expect(peerSpeedClock(peer([{ ...pp64, clock: 'wall' }]))).toMatch(/wall clock/);
  });

  it('names wllama by its backend, and prints its note and a top-K agreement as such', () => {
    const w = makePeer([pp64], {
      engine: 'wllama',
      backend: 'wasm-cpu',
      requestedBackend: 'webgpu',
      note: 'WebGPU did not engage',
      agreement: {
        tokens: 32,
        top1: 1,
        maxAbsLogprobDiff: 1e-5,
        kl: 1e-8,
        tolerance: { top1: 1, maxAbsLogprobDiff: 5e-3 },
        passed: true,
        top1Mismatches: [],
        top1Gaps: [],
        logprobMismatches: [],
        peerTopK: 1024,
      },
    });
    const text = peersReport(own, [w], 16, 'SwiftShader', true);
    expect(text).toContain('0.50× in prefill wllama wasm-cpu');
    expect(text).toContain('Note: WebGPU did not engage.');
    expect(text).toContain(
      "Agreement on 32 prompt positions (over the peer's 1024 likeliest tokens at each;",
    );
    // Near-ties: listed with this engine's gaps on a pass; named as such on a failure.
    const flipped = w.agreement && {
      ...w.agreement,
      top1: 30 / 32,
      top1Mismatches: [3, 17],
      top1Gaps: [4e-3, 2.5e-2],
      tolerance: { top1: 0.95, maxAbsLogprobDiff: 0.15 },
    };
    if (!flipped) throw new Error('the fixture has an agreement');
    expect(agreementDetail(flipped)).toBe(
      " (top-1 differs at positions 3 (this engine's gap 4.0e-3), 17 (this engine's gap 2.5e-2): near-ties, each gap within the log-p bound)",
    );
    expect(agreementDetail({ ...flipped, passed: false, logprobMismatches: [5] })).toBe(
      " (top-1 differs at positions 3 (this engine's gap 4.0e-3), 17 (this engine's gap 2.5e-2), all near-ties; past the log-p bound at 5)",
    );
    expect(agreementDetail({ ...flipped, top1Mismatches: [], top1Gaps: [] })).toBe('');
    // The near-ties counted, and the top-1 share outside them; nothing for a result without them.
    expect(nearTiesNote({ tokens: 32, nearTies: 5, top1OutsideNearTies: 1 })).toBe(
      " [5 near-ties, this engine's top two within the log-p bound; top-1 100.0% at the other 27]",
    );
    expect(nearTiesNote({ tokens: 1, nearTies: 1 })).toBe(
      " [1 near-tie, this engine's top two within the log-p bound]",
    );
    expect(nearTiesNote({ tokens: 32 })).toBe('');
    // A real vocabulary's tokens that are no whole UTF-8, left out of both distributions.
    const agreement = w.agreement && { ...w.agreement, tokensLeftOut: 352 };
    expect(peersReport(own, [{ ...w, agreement }], 16, 'SwiftShader', true)).toContain(
      "Agreement on 32 prompt positions (over the peer's 1024 likeliest tokens at each; KL with the rest as one bucket; 352 tokens that are no whole UTF-8 text left out of both, each renormalized over the rest):",
    );
  });
});
