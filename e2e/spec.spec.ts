import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { NATIVE, runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'spec-'));

/**
 * `--suite spec` on ci-tiny, end to end as a user runs it: the verify-K curve (k = 9 needs two
 * verify chunks), then three drafters on both prompt classes against plain greedy decode of the
 * same prompts. Small settings, so it fits the test budget; the default suite is the README's.
 */
test('bench --suite spec: the verify-K curve, three drafters, identical output, coherent statistics', async () => {
  test.setTimeout(240_000);
  const out = join(dir, 'spec.json');
  const run = await runCli(
    'bench/bench.ts',
    [
      ...NATIVE,
      '--preset',
      'ci-tiny',
      '--suite',
      'spec',
      '--drafter',
      'ngram,oracle:0.8,truncated:1',
      '--verify-k',
      '1,2,4,9',
      '--gen',
      '24',
      '--reps',
      '3',
      // Nothing here is about tuning: the adapter's default kernels, and no search.
      '--no-autotune',
      '--out',
      out,
    ],
    230_000,
  );
  expect(run.code, run.stderr).toBe(0);
  const r: BenchResult = BenchResultSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  expect(r.status).toBe('complete');
  const s = r.speculative!;
  expect(s.verifyCurve.map((p) => [p.k, p.depth, p.chunks])).toEqual([
    [1, 64, 1],
    [2, 64, 1],
    [4, 64, 1],
    [9, 64, 2],
  ]);
  for (const p of s.verifyCurve) {
    expect(p.verifySamplesMs).toHaveLength(3);
    expect(p.ratio).toBeCloseTo(p.verifyMs / p.decodeMs, 10);
  }
  // More tokens per pass: more FLOPs on the same weights, so the intensity rises with k.
  const intensity = s.verifyCurve.map((p) => p.intensity);
  expect([...intensity].sort((a, b) => a - b)).toEqual(intensity);
  // The knee by hand: the last k, in order, still at ≤ 1.5 decode steps.
  let knee: number | null = null;
  for (const p of s.verifyCurve) {
    if (p.ratio > 1.5) break;
    knee = p.k;
  }
  expect(s.knee).toBe(knee);

  expect(s.runs.map((x) => `${x.drafter}/${x.promptClass}`)).toEqual([
    'ngram/repetitive',
    'oracle:0.8/repetitive',
    'truncated:1/repetitive',
    'ngram/random',
    'oracle:0.8/random',
    'truncated:1/random',
  ]);
  for (const x of s.runs) {
    expect(x.identical, `${x.drafter} on ${x.promptClass}: ${JSON.stringify(x.firstMismatch)}`).toBe(true);
    expect(x.tokens).toBe(24);
    expect(x.synthetic).toBe(x.drafter.startsWith('oracle'));
    if (x.synthetic) expect(x.label).toContain('synthetic');
    expect(x.steps).toBeGreaterThan(0);
    expect(x.steps).toBeLessThanOrEqual(23);
    expect(x.acceptanceRate).toBeCloseTo(x.drafted > 0 ? x.accepted / x.drafted : 0, 10);
    expect(x.speedup).toBeCloseTo(x.baselineTpotMs / x.tpotMs, 10);
    expect(x.perPosition.length).toBeLessThanOrEqual(4);
  }
  // The oracle at p = 0.8 is right most of the time; random prompts give prompt lookup little.
  const oracle = s.runs.filter((x) => x.drafter === 'oracle:0.8');
  for (const x of oracle) expect(x.acceptanceRate).toBeGreaterThan(0.4);
  // Every run's identity check is in the validation, and passed.
  const checks = r.validation.checks.filter((c) => c.name.startsWith('speculative'));
  expect(checks).toHaveLength(6);
  expect(checks.every((c) => c.passed)).toBe(true);
  // The report printed at the end.
  const md = run.stdout;
  expect(md).toContain('**Verify-K curve**');
  expect(md).toContain('(synthetic)');
  expect(md).toContain('predicted speedup = τ · decodeMs');
});

test('bench --suite spec: bad drafters and K exit 2 before measuring, naming the cause', async () => {
  const cases: [string[], RegExp][] = [
    [['--k', '17'], /k.*16|17/i],
    [['--k', '0'], /k/i],
    [['--drafter', 'model:smollm2-135m'], /vocabulary of 49152 tokens and the target 509/],
    [['--drafter', 'truncated:2'], /truncated:2 keeps 2 layers of a 2-layer target/],
    [['--drafter', 'foo'], /"foo" is not a drafter/],
    [['--drafter', 'oracle:1.5'], /probability P must be in \[0, 1\]/],
    [['--verify-k', '18'], /verifyKs/],
  ];
  // Each exits before any engine starts; four at a time (most of each is Node loading the built CLI).
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const runs = await Promise.all(
      batch.map(([flags]) =>
        runCli('bench/bench.ts', ['--preset', 'ci-tiny', '--suite', 'spec', ...flags], 60_000),
      ),
    );
    batch.forEach(([flags, message], k) => {
      expect(runs[k].code, `${flags.join(' ')}: ${runs[k].stderr}`).toBe(2);
      expect(runs[k].stderr).toMatch(message);
    });
  }
  const quick = await runCli('bench/bench.ts', ['--preset', 'ci-tiny', '--k', '4'], 60_000);
  expect(quick.code).toBe(2);
  expect(quick.stderr).toContain(
    '--drafter, --k, --adaptive-k, --verify-k and --temperature apply to --suite spec',
  );
});
