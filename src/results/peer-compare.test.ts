import { describe, expect, it } from 'vitest';
import { makeResult } from '../../test-support/fixtures/base.ts';
import { makePeer } from '../../test-support/fixtures/peers.ts';
import type { PeerPoint, PeerRecord } from '../peers/schema.ts';
import { compareResults, comparisonToMarkdown } from './compare.ts';
import {
  comparePeers,
  formatPeerMs,
  mixedClocksNote,
  mixesClocks,
  peerComparisonMarkdown,
} from './peer-compare.ts';
import type { BenchResult } from './schema.ts';

const peer = makePeer;

const pp = (tokens: number, ms: number): PeerPoint => ({
  pass: 'prefill',
  tokens,
  depth: 0,
  samplesMs: [ms],
  medianMs: ms,
  tokPerS: (tokens * 1000) / ms,
});
const tg = (depth: number, ms: number): PeerPoint => ({
  pass: 'decode',
  tokens: 1,
  depth,
  samplesMs: [ms],
  medianMs: ms,
  tokPerS: 1000 / ms,
});

/** The fixture with its own pp64 and tg @ d128 (batch 1) medians set, and these peers. */
function run(own: { pp64: number; tg128: number }, peers: PeerRecord[]): BenchResult {
  const r = makeResult({ peers });
  for (const p of r.points) {
    if (p.pass === 'prefill' && p.tokens === 64) p.medianMs = own.pp64;
    if (p.pass === 'decode' && p.depth === 128 && p.batch === 1) p.medianMs = own.tg128;
  }
  return r;
}

describe('peers across runs', () => {
  const a = run({ pp64: 20, tg128: 4 }, [peer([pp(64, 10), tg(128, 1)])]);
  // Run b: the same peer 2× slower on pp64, and one test (pp256) run a lacks; its own pp64 5 ms.
  const b = run({ pp64: 5, tg128: 8 }, [peer([pp(64, 20), tg(128, 2), pp(256, 40)])]);

  it('joins on engine, backend, weight type and test, with each run’s speed by hand', () => {
    const rows = comparePeers([{ result: a }, { result: b }]);
    expect(rows.map((r) => r.test)).toEqual(['pp64', 'pp256', 'tg16 @ d128']);
    const [pp64, pp256, tg128] = rows;
    expect(pp64.peerMs).toEqual([10, 20]);
    // Speed = peer ms ÷ own ms: a 10 / 20 = 0.5, b 20 / 5 = 4.
    expect(pp64.ratio).toEqual([0.5, 4]);
    expect(pp256.peerMs).toEqual([null, 40]);
    // b's own pp256 is the fixture's point; a has no peer pp256.
    expect(pp256.ratio[0]).toBeNull();
    expect(pp256.ratio[1]).toBeCloseTo(40 / (b.points.find((p) => p.tokens === 256)?.medianMs ?? 0), 12);
    expect(tg128.ratio).toEqual([1 / 4, 2 / 8]);
  });

  it('never joins another backend or weight type, and skips a failed peer', () => {
    const gpu = run({ pp64: 20, tg128: 4 }, [
      peer([pp(64, 1)], { backend: 'vulkan' }),
      peer([pp(64, 2)], { fileType: 'Q4_0' }),
      peer([], { error: 'not installed' }),
    ]);
    const rows = comparePeers([{ result: a }, { result: gpu }]);
    const labels = rows.map((r) => `${r.key.backend} ${r.key.fileType} ${r.test}`);
    expect(labels).toEqual(['cpu F32 pp64', 'vulkan F32 pp64', 'cpu Q4_0 pp64', 'cpu F32 tg16 @ d128']);
    expect(rows[1].peerMs).toEqual([null, 1]);
    expect(rows[2].peerMs).toEqual([null, 2]);
  });

  it('says where a row joins times of different clocks, and not where the clocks agree', () => {
    // a: a file from before the native peer read llama.cpp's counters (its points name no clock:
    // the wall clock); c: llama.cpp's counters on pp64, with the wall clock beside them.
    const counted = { ...pp(64, 8), clock: 'llama.cpp-perf' as const, wallSamplesMs: [9], wallMedianMs: 9 };
    const c = run({ pp64: 20, tg128: 4 }, [peer([counted, { ...tg(128, 1), clock: 'wall' }])]);
    const rows = comparePeers([{ result: a }, { result: c }]);
    const [pp64, tg128] = rows;
    expect(pp64.clocks).toEqual(['wall', 'llama.cpp-perf']);
    expect(mixesClocks(pp64)).toBe(true);
    // tg128 is on the wall clock in both: nothing to say.
    expect(tg128.clocks).toEqual(['wall', 'wall']);
    expect(mixesClocks(tg128)).toBe(false);
    expect([formatPeerMs(pp64, 0), formatPeerMs(pp64, 1), formatPeerMs(tg128, 1)]).toEqual([
      '10.00 †',
      '8.000 †',
      '1.000',
    ]);
    // Each run's speed is still against its own peer: a 10 / 20, c 8 / 20.
    expect(pp64.ratio).toEqual([0.5, 0.4]);
    const md = peerComparisonMarkdown([
      { name: 'a.json', result: a },
      { name: 'c.json', result: c },
    ]).join('\n');
    expect(md).toContain('| llama.cpp cpu, F32 | pp64 | 10.00 † | 8.000 † | 0.50× | 0.40× |');
    expect(md).toContain(
      '† The runs timed this peer by different clocks (a.json: the wall clock around each call; c.json: llama.cpp’s own counters): its ms are not comparable from run to run.',
    );
    // One clock throughout (a against itself): no mark, no note.
    expect(
      peerComparisonMarkdown([
        { name: 'a.json', result: a },
        { name: 'b.json', result: b },
      ]).join('\n'),
    ).not.toContain('†');
    // wllama's points name no clock: its record's (llama.cpp's server timings) is theirs.
    const w = run({ pp64: 20, tg128: 4 }, [peer([pp(64, 30)], { engine: 'wllama', backend: 'wasm-cpu' })]);
    expect(comparePeers([{ result: w }])[0].clocks).toEqual(['wllama-server']);
    expect(mixedClocksNote(comparePeers([{ result: w }]), ['w'])).toBeNull();
  });

  it('writes a section into the comparison’s Markdown, and none without peers', () => {
    const md = comparisonToMarkdown(
      compareResults([
        { name: 'a.json', result: a },
        { name: 'b.json', result: b },
      ]),
    );
    expect(md).toContain('**Beside llama.cpp**');
    expect(md).toContain('| llama.cpp cpu, F32 | pp64 | 10.00 | 20.00 | 0.50× | 4.0× |');
    expect(peerComparisonMarkdown([{ name: 'x', result: makeResult() }])).toEqual([]);
    expect(comparisonToMarkdown(compareResults([{ name: 'x', result: makeResult() }]))).not.toContain(
      'Beside llama.cpp',
    );
  });
});
