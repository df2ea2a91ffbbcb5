import { describe, expect, it } from 'vitest';
import { makeResult, scaleTimes } from '../../test-support/fixtures/base.ts';
import { makeServeResult } from '../../test-support/fixtures/serve.ts';
import {
  checkResultFileSize,
  compareResults,
  comparisonToCsv,
  comparisonToMarkdown,
  findRegressions,
  parseResultFile,
  RESULT_FILE_LIMITS,
  ResultFileError,
} from './compare.ts';
import type { BenchResult } from './schema.ts';

/** A result whose points have the given medians, in fixture order (5 prefill, 3 decode). */
/** The fixture (wall-placed points) with these wall-clock medians. */
function withMedians(medians: readonly number[]): BenchResult {
  const r = makeResult();
  r.points.forEach((p, i) => {
    p.medianMs = medians[i];
    p.wallMedianMs = medians[i];
  });
  return r;
}

/** The fixture with every point placed by GPU time, at these GPU medians (wall medians kept). */
function gpuPlaced(medians: readonly number[]): BenchResult {
  const r = makeResult();
  r.points.forEach((p, i) => {
    p.timebase = 'gpu';
    p.medianMs = medians[i];
    p.gpuMedianMs = medians[i];
  });
  return r;
}

describe('parseResultFile', () => {
  const valid = JSON.stringify(makeResult());

  it('accepts a valid file', () => {
    expect(parseResultFile(valid, 'a.json')).toEqual(makeResult());
  });

  /** The error a call throws, so both its class and its message can be checked. */
  function errorOf(text: string, fileName = 'b.json'): unknown {
    try {
      parseResultFile(text, fileName);
    } catch (e) {
      return e;
    }
    throw new Error('expected parseResultFile to throw');
  }

  it('names the file for malformed JSON', () => {
    const e = errorOf('{"schemaVersion": 1,');
    expect(e).toBeInstanceOf(ResultFileError);
    expect((e as Error).name).toBe('ResultFileError');
    expect((e as Error).message).toMatch(/^b\.json: not valid JSON: /);
  });

  it('names the file and the path of the first schema problem', () => {
    const r = JSON.parse(valid);
    r.points[3].medianMs = '12';
    r.points[5].pass = 'warmup';
    expect((errorOf(JSON.stringify(r)) as Error).message).toBe(
      'b.json: points.3.medianMs: Invalid input: expected number, received string',
    );
  });

  it('reports a problem at the root and unknown fields', () => {
    expect((errorOf('[]') as Error).message).toMatch(/^b\.json: \(root\): Invalid input: expected object/);
    const extra = { ...JSON.parse(valid), script: 'alert(1)' };
    expect((errorOf(JSON.stringify(extra)) as Error).message).toMatch(
      /^b\.json: \(root\): Unrecognized key: "script"/,
    );
  });

  it('says which schema version a file has and which are supported', () => {
    const v3 = JSON.stringify({ ...JSON.parse(valid), schemaVersion: 3 });
    expect((errorOf(v3) as Error).message).toBe(
      'b.json: schemaVersion 3 is not supported; this version reads schemaVersion 1 and 2',
    );
    const missing = JSON.stringify({ ...JSON.parse(valid), schemaVersion: undefined });
    expect((errorOf(missing) as Error).message).toMatch(/^b\.json: schemaVersion: Invalid input: expected 2/);
  });

  it('does not echo a long value back', () => {
    const huge = JSON.stringify({ schemaVersion: 'x'.repeat(10_000) });
    expect((errorOf(huge) as Error).message.length).toBeLessThan(400);
  });

  it('rejects files over the size limit before parsing them', () => {
    expect(() => checkResultFileSize(RESULT_FILE_LIMITS.maxChars, 'ok.json')).not.toThrow();
    expect(() => checkResultFileSize(RESULT_FILE_LIMITS.maxChars + 1, 'big.json')).toThrow(
      /^big\.json: 50\.0 MB is too large for a result file \(the limit is 50\.0 MB\)$/,
    );
    const e = errorOf(' '.repeat(RESULT_FILE_LIMITS.maxChars + 1), 'big.json');
    expect(e).toBeInstanceOf(ResultFileError);
    expect((e as Error).message).toMatch(/^big\.json: .*too large/);
  });
});

describe('compareResults', () => {
  it('joins points on the key and computes speed-ups against the first file', () => {
    const a = withMedians([10, 20, 40, 80, 160, 5, 6, 8]);
    const b = withMedians([5, 20, 50, 80, 160, 4, 6, 16]);
    const cmp = compareResults([
      { name: 'a.json', result: a },
      { name: 'b.json', result: b },
    ]);
    expect(cmp.rows).toHaveLength(8);
    expect(cmp.rows[0]).toMatchObject({
      key: { preset: 'smollm2-135m', pass: 'prefill', tokens: 16, depth: 0, batch: 1 },
      clock: 'wall',
      medianMs: [10, 5],
      speedup: [2],
    });
    // 40 / 50 = 0.8: b is slower; 5 / 4 = 1.25; 8 / 16 = 0.5.
    expect(cmp.rows.map((r) => r.speedup[0])).toEqual([2, 1, 0.8, 1, 1, 1.25, 1, 0.5]);
    expect(cmp.rows[0].tokensPerSec).toEqual([a.points[0].tokensPerSec, b.points[0].tokensPerSec]);
    expect(cmp.warnings).toEqual([]);
  });

  it('compares GPU medians only where every file placed the point by GPU time, else wall medians', () => {
    const gpu = [1, 2, 3, 4, 5, 6, 7, 8];
    const both = compareResults([
      { name: 'a', result: gpuPlaced(gpu) },
      { name: 'b', result: gpuPlaced(gpu.map((x) => x * 2)) },
    ]);
    expect(both.rows.map((r) => [r.clock, r.speedup[0]])).toEqual(gpu.map(() => ['gpu', 0.5]));
    // One file wall-placed: the row compares the wall medians both files have.
    const wall = withMedians([10, 10, 10, 10, 10, 10, 10, 10]);
    const mixed = compareResults([
      { name: 'a', result: gpuPlaced(gpu) },
      { name: 'b', result: wall },
    ]);
    expect(mixed.rows[0].clock).toBe('wall');
    expect(mixed.rows[0].medianMs).toEqual([makeResult().points[0].wallMedianMs, 10]);
  });

  it('orders prefill by L, then decode by depth and batch, whatever the file order', () => {
    const r = makeResult();
    r.points.reverse();
    const extra = { ...r.points[0], depth: 1024, batch: 2 };
    r.points.push(extra);
    const cmp = compareResults([{ name: 'a.json', result: r }]);
    const keys = cmp.rows.map(
      ({ key }) => `${key.pass} ${key.pass === 'prefill' ? key.tokens : key.depth}x${key.batch}`,
    );
    expect(keys).toEqual([
      'prefill 16x1',
      'prefill 32x1',
      'prefill 64x1',
      'prefill 128x1',
      'prefill 256x1',
      'decode 128x1',
      'decode 512x1',
      'decode 1024x2',
      'decode 1024x4',
    ]);
    expect(cmp.rows[0].speedup).toEqual([]);
  });

  it('shows a point missing from a file as null, with no speed-up', () => {
    const a = makeResult();
    const b = makeResult({ points: a.points.filter((p) => !(p.pass === 'prefill' && p.tokens === 64)) });
    const c = makeResult({ points: a.points.slice(0, 1) });
    const cmp = compareResults([
      { name: 'a', result: a },
      { name: 'b', result: b },
      { name: 'c', result: c },
    ]);
    const row = cmp.rows.find((r) => r.key.tokens === 64);
    expect(row?.medianMs).toEqual([a.points[2].medianMs, null, null]);
    expect(row?.tokensPerSec).toEqual([a.points[2].tokensPerSec, null, null]);
    expect(row?.speedup).toEqual([null, null]);
    expect(cmp.rows[0].speedup).toEqual([1, 1]);
  });

  it('keeps different presets apart and warns about duplicate keys in a file', () => {
    const a = makeResult();
    const b = makeResult({ model: { ...a.model, preset: 'other' } });
    b.points.push({ ...b.points[0], pageSize: 64 });
    const cmp = compareResults([
      { name: 'a', result: a },
      { name: 'b', result: b },
    ]);
    expect(cmp.rows).toHaveLength(16);
    expect(cmp.rows[0].medianMs[1]).toBeNull();
    expect(cmp.rows[8].key.preset).toBe('other');
    expect(cmp.rows[8].medianMs[0]).toBeNull();
    expect(cmp.warnings).toEqual(['b: more than one point for other prefill L=16 B=1; comparing the first']);
  });
});

describe('findRegressions', () => {
  const pair = (baseline: BenchResult, candidate: BenchResult) =>
    compareResults([
      { name: 'base', result: baseline },
      { name: 'cand', result: candidate },
    ]);

  it('flags only points slower than the limit, exactly at the limit passing', () => {
    const base = withMedians([10, 10, 10, 10, 10, 10, 10, 10]);
    const cand = withMedians([11, 11.0001, 9, 10, 20, 10, 10, 10]);
    const found = findRegressions(pair(base, cand), 10);
    expect(found.map((r) => [r.key.tokens, r.baselineMs, r.candidateMs])).toEqual([
      [32, 10, 11.0001],
      [256, 10, 20],
    ]);
    expect(found[0].slowdownPct).toBeCloseTo(10.001, 6);
    expect(found[1].slowdownPct).toBeCloseTo(100, 9);
  });

  it('treats a uniformly scaled run exactly at the limit as passing, and above it as failing', () => {
    const r = makeResult();
    expect(findRegressions(pair(r, scaleTimes(r, 1.1)), 10)).toEqual([]);
    expect(findRegressions(pair(r, scaleTimes(r, 1.5)), 10)).toHaveLength(r.points.length);
    expect(findRegressions(pair(r, scaleTimes(r, 1.5)), 50)).toEqual([]);
    expect(findRegressions(pair(r, r), 0)).toEqual([]);
  });

  it('skips points missing from either file', () => {
    const r = makeResult();
    const slower = scaleTimes(r, 2);
    slower.points = slower.points.slice(0, 2);
    expect(findRegressions(pair(r, slower), 10)).toHaveLength(2);
  });

  it('needs exactly two files', () => {
    const r = makeResult();
    expect(() => findRegressions(compareResults([{ name: 'a', result: r }]), 10)).toThrow(RangeError);
  });
});

describe('comparison output', () => {
  const a = makeResult();
  const b = scaleTimes(a, 2);
  b.env.adapter.description = 'evil | gpu\nsecond line';
  const cmp = compareResults([
    { name: 'a.json', result: a },
    { name: 'b.json', result: b },
  ]);

  it('renders a Markdown table with times and speed-ups, escaping file strings', () => {
    const md = comparisonToMarkdown(cmp);
    expect(md).toContain('1. a.json: Apple M2 Pro, Chrome 131, smollm2-135m');
    expect(md).toContain('2. b.json: evil \\| gpu second line, Chrome 131');
    expect(md).toContain('| pass | L/depth | B | clock | a.json ms | b.json ms | b.json/a.json speedup |');
    expect(md).toMatch(/\| prefill \| 16 \| 1 \| wall \| [\d.]+ \| [\d.]+ \| 0\.50 \|/);
    expect(md).toMatch(/\| decode \| 1024 \| 4 \| wall \| [\d.]+ \| [\d.]+ \| 0\.50 \|/);
    const missing = compareResults([
      { name: 'a.json', result: a },
      { name: 'c.json', result: makeResult({ points: a.points.slice(1) }) },
    ]);
    expect(comparisonToMarkdown(missing)).toMatch(/\| prefill \| 16 \| 1 \| wall \| [\d.]+ \| – \| – \|/);
  });

  it('renders CSV with per-file times, throughputs and speed-ups', () => {
    const lines = comparisonToCsv(cmp).split('\r\n');
    expect(lines[0]).toBe(
      'preset,pass,tokens,depth,batch,graph,clock,a.json ms,b.json ms,a.json tok/s,b.json tok/s,b.json/a.json speedup',
    );
    expect(lines).toHaveLength(a.points.length + 2);
    const p = a.points[0];
    expect(lines[1]).toBe(
      `smollm2-135m,prefill,16,0,1,,wall,${p.wallMedianMs},${p.wallMedianMs * 2},${p.tokensPerSec},${p.tokensPerSec / 2},0.5`,
    );
  });
});

describe('load tests side by side', () => {
  it('matches arms by label and shows each file’s figures, a dash where an arm is missing', () => {
    const a = makeServeResult();
    const b = makeServeResult();
    const sb = b.serve;
    if (!sb) throw new Error('fixture without serve');
    // The second file ran only the continuous arm, at twice the throughput.
    sb.runs = sb.runs
      .filter((r) => r.label === 'continuous')
      .map((r) => ({
        ...r,
        summary: { ...r.summary, outputTokensPerSec: r.summary.outputTokensPerSec * 2 },
      }));
    const md = comparisonToMarkdown(
      compareResults([
        { name: 'a.json', result: a },
        { name: 'b.json', result: b },
      ]),
    );
    const cont = a.serve?.runs.find((r) => r.label === 'continuous');
    const row = md.split('\n').find((l) => l.startsWith('| continuous |'));
    expect(row).toBeDefined();
    const cells = row?.split('|').map((c) => c.trim()) ?? [];
    expect(cells[2]).toBe(cont?.summary.outputTokensPerSec.toFixed(1));
    expect(Number(cells[3])).toBeCloseTo(2 * Number(cells[2]), 0);
    const staticRow = md.split('\n').find((l) => l.startsWith('| static |'));
    expect(staticRow?.split('|').map((c) => c.trim())[3]).toBe('–');
    expect(md).not.toContain('No measured points.');
  });
});
