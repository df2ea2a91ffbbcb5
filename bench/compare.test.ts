import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeResult, scaleTimes } from '../test-support/fixtures/base.ts';

const repoRoot = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'compare-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeTemp(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const baseline = makeResult();
const baselinePath = writeTemp('baseline.json', JSON.stringify(baseline));
const samePath = writeTemp('same.json', JSON.stringify(baseline));
const slowerPath = writeTemp('slower.json', JSON.stringify(scaleTimes(baseline, 1.5)));
const malformedPath = writeTemp('malformed.json', '{"schemaVersion": 1, "points": [');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as a user would; resolves with its exit code and output instead of rejecting. */
function runCompare(args: readonly string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'bench/compare.ts', ...args],
      { cwd: repoRoot },
      (error, stdout, stderr) => {
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

// Each case starts Node and tsx: about a second, several on a busy machine. Cases run one at a
// time, since concurrent starts only compete for the same cores.
const CLI_TIMEOUT_MS = 60_000;

describe('npm run compare', () => {
  it(
    'exits 1 on a run 50% slower than the baseline, naming each regression',
    async () => {
      const run = await runCompare([baselinePath, slowerPath, '--max-regression', '10']);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('speedup |');
      expect(run.stderr).toMatch(
        /regression: smollm2-135m prefill L=16 B=1: [\d.]+ ms -> [\d.]+ ms \(\+50\.0%/,
      );
      expect(run.stderr).toContain(`${baseline.points.length} of ${baseline.points.length} points regressed`);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 0 on an identical run',
    async () => {
      const run = await runCompare([baselinePath, samePath, '--max-regression', '10']);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain('no regression over 10%');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'prints CSV when asked',
    async () => {
      const run = await runCompare([baselinePath, slowerPath, '--format', 'csv']);
      expect(run.code).toBe(0);
      expect(run.stdout.split('\r\n')[0]).toBe(
        `preset,pass,tokens,depth,batch,graph,clock,${baselinePath} ms,${slowerPath} ms,${baselinePath} tok/s,${slowerPath} tok/s,${slowerPath}/${baselinePath} speedup`,
      );
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 2 on a malformed file, naming it',
    async () => {
      const run = await runCompare([baselinePath, malformedPath]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`compare: ${malformedPath}: not valid JSON`);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 2 on a bad flag, with the usage',
    async () => {
      const run = await runCompare([baselinePath, samePath, '--max-regresion', '10']);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("Unknown option '--max-regresion'");
      expect(run.stderr).toContain('Usage: npm run compare');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 2 on too few files, a non-numeric limit, or a gate over three files',
    async () => {
      const runs = [
        await runCompare([baselinePath]),
        await runCompare([baselinePath, samePath, '--max-regression', 'ten']),
        await runCompare([baselinePath, samePath, slowerPath, '--max-regression', '10']),
      ];
      expect(runs.map((r) => r.code)).toEqual([2, 2, 2]);
      expect(runs[0].stderr).toContain('give at least two result files, got 1');
      expect(runs[1].stderr).toContain(
        '--max-regression must be a non-negative number of percent, got "ten"',
      );
      expect(runs[2].stderr).toContain('--max-regression compares exactly two files');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'documents every flag in --help',
    async () => {
      const run = await runCompare(['--help']);
      expect(run.code).toBe(0);
      for (const flag of ['--max-regression PCT', '--format md|csv|html', '--rank', '-h, --help'])
        expect(run.stdout).toContain(flag);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'ranks a folder of results as a leaderboard, listing the files that do not validate',
    async () => {
      const board = join(dir, 'board');
      mkdirSync(board);
      const a = makeResult();
      a.env.adapter = { ...a.env.adapter, description: 'Device A' };
      const b = scaleTimes(makeResult(), 3);
      b.env.adapter = { ...b.env.adapter, description: 'Device B' };
      writeFileSync(join(board, 'a.json'), JSON.stringify(a));
      writeFileSync(join(board, 'b.json'), JSON.stringify(b));
      writeFileSync(join(board, 'broken.json'), '{"schemaVersion": 1, "points": [');
      writeFileSync(join(board, 'notes.txt'), 'not a result');
      const md = await runCompare([board]);
      expect(md.code).toBe(0);
      // B is the same run at three times the time: second in both groups.
      expect(md.stdout).toMatch(/\| 1 \| Device A \|[^\n]*\n\| 2 \| Device B \|/);
      expect(md.stdout).toContain('## smollm2-135m · f32 · decode (decode at depth 512, batch 1)');
      expect(md.stderr).toMatch(/left out .*broken\.json: not valid JSON/);
      expect(md.stderr).toContain('ranked 2 file(s) in 2 group(s); left out 1');
      const html = await runCompare([board, '--format', 'html']);
      expect(html.code).toBe(0);
      expect(html.stdout).toMatch(/^<!doctype html>/);
      expect(html.stdout).toContain('broken.json');
      // The README's leaderboard command, as written there, with this folder and file put in.
      const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
      const line = readme.split('\n').find((l) => l.includes('--format html > board.html'));
      expect(line, 'the README shows the leaderboard command').toBeDefined();
      const page = join(board, 'board.html');
      const command = (line ?? '')
        .replace(/\s+#.*$/, '')
        .replace('results/lab', board)
        .replace('board.html', page);
      await new Promise<void>((done) =>
        execFile('sh', ['-c', command], { cwd: repoRoot }, (error, _out, stderr) => {
          expect(error, stderr).toBeNull();
          done();
        }),
      );
      expect(readFileSync(page, 'utf8')).toMatch(/^<!doctype html>/);
      const none = await runCompare(['--rank', join(board, 'broken.json')]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('no valid result file among 1');
    },
    CLI_TIMEOUT_MS,
  );
});
