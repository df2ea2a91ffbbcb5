import { describe, expect, it } from 'vitest';
import { makeResult } from '../../../test-support/fixtures/base.ts';
import { makePeer } from '../../../test-support/fixtures/peers.ts';
import type { PeerPoint } from '../../peers/schema.ts';
import { clockNote } from './common.ts';

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
