import { describe, expect, it } from 'vitest';
import { makeResult, scaleTimes } from '../../test-support/fixtures/base.ts';
import { makePeer } from '../../test-support/fixtures/peers.ts';
import {
  buildLeaderboard,
  groupTitle,
  LEADERBOARD_CSV_HEADER,
  leaderboardToCsv,
  leaderboardToHtml,
  leaderboardToMarkdown,
} from './leaderboard.ts';
import type { BenchResult } from './schema.ts';

function device(r: BenchResult, description: string): BenchResult {
  r.env.adapter = { ...r.env.adapter, description };
  return r;
}

// Three devices. The fixture measures prefill at L = 16…256 and decode at depths 128 and 512
// (batch 1) and 1024 (batch 4, never ranked). "slow" is the same run at twice the time; "odd"
// measured only a prefill at L = 512, so it shares no shape with the others.
const fast = device(makeResult(), 'Fast GPU');
const slow = device(scaleTimes(makeResult(), 2), 'Slow GPU');
const odd = device(makeResult(), 'Odd <GPU>');
{
  const p256 = odd.points.find((p) => p.pass === 'prefill' && p.tokens === 256);
  if (!p256) throw new Error('fixture has no L = 256');
  odd.points = [{ ...p256, tokens: 512 }];
}
const at = (r: BenchResult, pass: 'prefill' | 'decode', tokens: number, depth: number) => {
  const p = r.points.find(
    (q) => q.pass === pass && q.tokens === tokens && q.depth === depth && q.batch === 1,
  );
  if (!p) throw new Error(`no ${pass} ${tokens}@${depth}`);
  return p;
};
// llama.cpp beside the fast run, at the prefill shape the board will choose.
fast.peers = [
  makePeer([{ pass: 'prefill', tokens: 256, depth: 0, samplesMs: [100], medianMs: 100, tokPerS: 2560 }]),
];

const files = [
  { name: 'slow.json', result: slow },
  { name: 'odd.json', result: odd },
  { name: 'fast.json', result: fast },
];

describe('buildLeaderboard', () => {
  const board = buildLeaderboard(files);

  it('makes one group per model, format and pass, at the shape most files measured', () => {
    // L = 16…256 are each measured by two files, 512 by one: the longest of the shared ones.
    // Depths 128 and 512 by two each: the deepest.
    expect(board.groups.map((g) => [g.preset, g.weights, g.pass, g.tokens, g.depth])).toEqual([
      ['smollm2-135m', 'f32', 'decode', 1, 512],
      ['smollm2-135m', 'f32', 'prefill', 256, 0],
    ]);
    expect(board.files).toBe(3);
  });

  it('ranks by tok/s, with each device’s own roof share, roofs and runtime', () => {
    const prefill = board.groups[1];
    expect(prefill.rows.map((r) => [r.rank, r.file, r.device])).toEqual([
      [1, 'fast.json', 'Fast GPU'],
      [2, 'slow.json', 'Slow GPU'],
    ]);
    const p = at(fast, 'prefill', 256, 0);
    // The fixture's median is the wall time of L = 256 tokens.
    expect(prefill.rows[0].tokensPerSec).toBeCloseTo(256 / (p.medianMs / 1000), 6);
    expect(prefill.rows[1].tokensPerSec).toBeCloseTo(256 / ((2 * p.medianMs) / 1000), 6);
    expect(prefill.rows[1].roofPct).toBeCloseTo(p.roofPct / 2, 9);
    expect(prefill.rows[0]).toMatchObject({ fmaGflops: 2000, copyGBps: 200, runtime: 'browser' });
    expect(prefill.otherShape).toEqual(['odd.json']);
  });

  it('puts llama.cpp at the same point beside the device that ran it', () => {
    const [first, second] = board.groups[1].rows;
    expect(first.peers).toHaveLength(1);
    expect(first.peers[0].tokensPerSec).toBe(2560);
    const p = at(fast, 'prefill', 256, 0);
    expect(first.peers[0].ratio).toBeCloseTo(256 / (p.medianMs / 1000) / 2560, 9);
    expect(second.peers).toEqual([]);
    // No peer point at decode depth 512: none shown there.
    expect(board.groups[0].rows[0].peers).toEqual([]);
  });

  it('takes the better of the roofs measured before and after', () => {
    const r = device(makeResult(), 'After');
    r.peaksAfter = { ...r.peaks, fmaGflops: 2500, copyGBps: 150 };
    const row = buildLeaderboard([{ name: 'a', result: r }]).groups[0].rows[0];
    expect([row.fmaGflops, row.copyGBps]).toEqual([2500, 200]);
  });
});

describe('leaderboard output', () => {
  const board = buildLeaderboard(files);

  it('prints a ranked Markdown table per group, naming what was left unranked', () => {
    const md = leaderboardToMarkdown(board);
    expect(md).toContain('# Device leaderboard (3 result files)');
    expect(md).toContain(`## ${groupTitle(board.groups[1])}`);
    expect(groupTitle(board.groups[1])).toBe('smollm2-135m · f32 · prefill (prompt L = 256, batch 1)');
    expect(md).toMatch(/\| 1 \| Fast GPU \| browser \|.*\| llama\.cpp \(cpu\) 2560 tok\/s/);
    expect(md).toContain('Not at this shape, so not ranked here: odd.json.');
  });

  it('writes one CSV line per ranked row', () => {
    const lines = leaderboardToCsv(board).trimEnd().split(/\r?\n/);
    expect(lines[0]).toBe(LEADERBOARD_CSV_HEADER.join(','));
    expect(lines).toHaveLength(1 + 4);
    expect(lines[3]).toMatch(/^smollm2-135m,f32,prefill,256,0,1,Fast GPU,false,browser,/);
  });

  it('writes self-contained HTML with every string from a file escaped', () => {
    const withOdd = buildLeaderboard([{ name: 'odd.json', result: odd }]);
    const html = leaderboardToHtml(withOdd, [{ file: 'bad.json', error: 'not valid JSON: <eof>' }]);
    expect(html).toContain('Odd &lt;GPU&gt;');
    expect(html).not.toContain('Odd <GPU>');
    expect(html).toContain('<li>bad.json: not valid JSON: &lt;eof&gt;</li>');
    expect(html).not.toMatch(/<script|src=|href=/);
  });
});

describe('files that rank nowhere', () => {
  it('are counted, named and explained in every output: no points, or only batch > 1', () => {
    const empty = device(makeResult(), 'KV only');
    empty.points = [];
    empty.spec.workloads = [{ kind: 'kv' } as BenchResult['spec']['workloads'][number]];
    const batched = device(makeResult(), 'Batched');
    batched.points = batched.points.map((p) => ({ ...p, batch: 4 }));
    const board = buildLeaderboard([
      { name: 'a.json', result: fast },
      { name: 'kv.json', result: empty },
      { name: 'b4.json', result: batched },
    ]);
    expect(board.files).toBe(3);
    expect(board.unranked).toEqual([
      { file: 'kv.json', why: 'no prefill or decode points (its workloads: kv)' },
      {
        file: 'b4.json',
        why: `its ${batched.points.length} point(s) are all at batch > 1 (its workloads: ${batched.spec.workloads.map((w) => w.kind).join(', ')})`,
      },
    ]);
    const line = 'Ranked nowhere: kv.json (no prefill or decode points (its workloads: kv));';
    expect(leaderboardToMarkdown(board)).toContain(line);
    expect(leaderboardToHtml(board)).toContain('Ranked nowhere: kv.json');
    // A ranked file is not among them.
    expect(board.unranked.map((u) => u.file)).not.toContain('a.json');
  });
});
