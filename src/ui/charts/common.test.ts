import { describe, expect, it } from 'vitest';
import { makeResult } from '../../../test-support/fixtures/base.ts';
import { makePeer } from '../../../test-support/fixtures/peers.ts';
import type { PeerPoint } from '../../peers/schema.ts';
import { clockNote, fitMargins } from './common.ts';

const pp64 = (clock?: PeerPoint['clock']): PeerPoint => ({
  pass: 'prefill',
  tokens: 64,
  depth: 0,
  samplesMs: [1],
  medianMs: 1,
  tokPerS: 64_000,
  ...(clock ? { clock } : {}),
});

describe('the chart’s clock note', () => {
  const r = makeResult();
  const run = (peers: ReturnType<typeof makePeer>[]) => ({
    label: 'a',
    points: r.points,
    peaks: null,
    peers,
  });

  it('names the native peer’s clock from its points: llama.cpp’s counters, or the wall clock', () => {
    expect(clockNote([run([makePeer([pp64('llama.cpp-perf')])])], false)).toContain(
      '◇ llama.cpp on the same file (llama.cpp by llama.cpp’s own counters)',
    );
    // A file from before the peer read the counters: its points name no clock, the wall clock's.
    expect(clockNote([run([makePeer([pp64()])])], false)).toContain(
      '(llama.cpp by the wall clock around each call)',
    );
    expect(
      clockNote(
        [run([makePeer([pp64('llama.cpp-perf')])]), { ...run([makePeer([pp64('wall')])]), label: 'b' }],
        false,
      ),
    ).toContain('(llama.cpp by llama.cpp’s own counters or the wall clock around each call)');
    expect(
      clockNote([run([makePeer([pp64()], { engine: 'wllama', backend: 'wasm-cpu' })])], false),
    ).toContain('(wllama by llama.cpp’s own timings)');
  });
});

describe('margins for labels beside a plot', () => {
  it('stay as asked where they fit, and shrink in proportion where the plot would run backwards', () => {
    expect(fitMargins(800, 280, 24)).toEqual({ marginLeft: 280, marginRight: 24 });
    // The case study's TTFT chart drawn 260 px wide (CI, mid-layout): 280 + 24 px of margins left
    // the x range backwards. At most 60% of 260 = 156 px now, split 280 : 24.
    const m = fitMargins(260, 280, 24);
    expect(m.marginLeft + m.marginRight).toBeCloseTo(156, 9);
    expect(m.marginLeft / m.marginRight).toBeCloseTo(280 / 24, 9);
    expect(260 - m.marginLeft - m.marginRight).toBeGreaterThan(0);
    expect(fitMargins(0, 10, 10)).toEqual({ marginLeft: 0, marginRight: 0 });
  });
});
