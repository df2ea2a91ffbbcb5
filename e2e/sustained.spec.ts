import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { BenchResultSchema } from '../src/results/schema.ts';
import { cliArgv, runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'sustained-'));
const read = (path: string) => BenchResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
/** Small passes on ci-tiny, natively, without the kernel search (nothing here is about tuning). */
const PASSES = ['--runtime', 'node', '--prefill', '32', '--depth', '16', '--gen', '8', '--no-autotune'];

test('bench --suite sustained: tok/s per window for the whole duration, the roofs measured again, Ctrl-C keeps the finished windows, bad flags exit 2', async () => {
  test.setTimeout(180_000);
  // 6 s of load in windows of 2 s, the roofs every 4 s: the run's own at the start, again at 4 s.
  const out = join(dir, 'sustained.json');
  const args = ['--suite', 'sustained', '--duration', '6s', '--interval', '2', '--roofs-every', '4'];
  const run = await runCli('bench/bench.ts', [...args, ...PASSES, '--out', out], 120_000);
  expect(run.code, run.stderr).toBe(0);
  const r = read(out);
  expect(r.status).toBe('complete');
  const s = r.sustained;
  if (!s) throw new Error('no sustained section');
  expect(s.windowS).toBe(2);
  expect(s.durationS).toBeGreaterThanOrEqual(6);
  // Both passes in each of the three windows (a prefill and a decode take well under 2 s here).
  for (const pass of ['prefill', 'decode'] as const) {
    const own = s.windows.filter((w) => w.pass === pass);
    expect(own.map((w) => w.startS)).toEqual([0, 2, 4]);
    for (const w of own) expect(w.tokPerS).toBeGreaterThan(0);
  }
  expect(s.roofs.map((x) => Math.round(x.atS / 4))).toEqual([0, 1]);
  // The first roofs are the run's own, measured before the workloads.
  expect(s.roofs[0]).toMatchObject({ atS: 0, fmaGflops: r.peaks.fmaGflops, copyGBps: r.peaks.copyGBps });
  for (const roof of s.roofs) expect(roof.fmaGflops * roof.copyGBps).toBeGreaterThan(0);
  // No window after the first minute: nothing to judge.
  expect(s.throttling).toMatchObject({ detected: false, startS: null, dropPct: null });
  // The report the CLI prints.
  const markdown = run.stdout;
  expect(markdown).toContain('Sustained load: tok/s per window');
  expect(markdown).toContain('not judged: no window after the first minute');

  // Ctrl-C in the third window: the two finished windows and the first roofs are kept.
  const cancelled = join(dir, 'cancelled.json');
  const child = spawn(
    process.execPath,
    cliArgv('bench/bench.ts', [
      '--suite',
      'sustained',
      '--duration',
      '2m',
      '--interval',
      '2',
      ...PASSES,
      '--out',
      cancelled,
    ]),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  const code = await new Promise<number | null>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/window 3 of 60/.test(stderr) && !child.killed) child.kill('SIGINT');
    });
    child.on('exit', resolve);
  });
  expect(code, stderr).toBe(130);
  const c = read(cancelled);
  expect(c.status).toBe('cancelled');
  expect(c.sustained?.windows.filter((w) => w.pass === 'decode').map((w) => w.startS)).toEqual([0, 2]);
  expect(c.sustained?.roofs).toHaveLength(1);

  // Bad input names the flag.
  const bad = await Promise.all([
    runCli('bench/bench.ts', ['--suite', 'sustained', '--duration', 'soon', ...PASSES]),
    runCli('bench/bench.ts', ['--suite', 'quick', '--interval', '5', ...PASSES]),
    runCli('bench/bench.ts', ['--suite', 'sustained', '--duration', '5s', '--interval', '10', ...PASSES]),
  ]);
  expect(bad.map((b) => b.code)).toEqual([2, 2, 2]);
  expect(bad[0].stderr).toContain('--duration takes seconds or a time such as 90s, 5m or 1h, got "soon"');
  expect(bad[1].stderr).toContain('--interval applies to --suite sustained');
  expect(bad[2].stderr).toContain('the tok/s window (--interval) must not be longer than the duration');
});
