import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { findVulkan } from '../bench/vulkan.ts';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'native-'));
const readResult = (path: string): BenchResult =>
  BenchResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));

/** The native runtime end to end: the CLIs with --runtime node, on Dawn, no browser involved. */
test('bench --runtime node: the quick suite on ci-tiny, a valid result recorded as native, the same report', async () => {
  test.setTimeout(200_000);
  const out = join(dir, 'quick.json');
  const run = await runCli('bench/bench.ts', [
    '--runtime',
    'node',
    '--preset',
    'ci-tiny',
    '--suite',
    'quick',
    '--out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/node runtime, webgpu 0\.6\.2 \(Dawn\)/);
  expect(run.stdout).toContain(
    '| pass | L/depth | clock | ms | wall ms | GPU ms | tok/s | GFLOP/s | GB/s | FLOP/B | bound | % roof | predicted ms |',
  );
  expect(run.stdout).toContain('- **Runtime:** native, Node on webgpu 0.6.2 (Dawn), vulkan backend');
  const r = readResult(out);
  expect(r.env.runtime).toEqual({ name: 'node', dawn: 'webgpu 0.6.2 (Dawn)', backend: 'vulkan' });
  expect(r.status).toBe('complete');
  expect(r.validation.passed).toBe(true);
  const at = (p: (typeof r.points)[number]) => [p.pass, p.pass === 'prefill' ? p.tokens : p.depth];
  expect(r.points.filter((p) => !p.graph).map(at)).toEqual([
    ['prefill', 16],
    ['prefill', 32],
    ['prefill', 64],
    ['prefill', 128],
    ['prefill', 256],
    ['decode', 16],
    ['decode', 128],
    ['decode', 512],
  ]);
  // The quick suite ends with the fusion workload: each graph at the largest L and the first depth.
  expect(r.points.filter((p) => p.graph).map((p) => [p.graph, ...at(p)])).toEqual([
    ['fused', 'prefill', 256],
    ['fused', 'decode', 16],
    ['unfused', 'prefill', 256],
    ['unfused', 'decode', 16],
  ]);
  // Dawn has timestamps here too: every point is placed by GPU time, inside its wall time.
  for (const p of r.points) {
    expect(p.timebase).toBe('gpu');
    for (const [i, gpu] of p.samplesMs.entries()) expect(gpu).toBeLessThanOrEqual(p.wallSamplesMs[i]);
  }
  expect(r.tuning?.enabled).toBe(true);
});

test('verify --runtime node: the ci-tiny logits match the CPU reference', async () => {
  const run = await runCli('bench/verify.ts', [
    '--runtime',
    'node',
    '--preset',
    'ci-tiny',
    '--tokens',
    '1,17,42,7,99',
  ]);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('PASS: GPU logits match the CPU reference');
  expect(run.stdout).toContain('node runtime');
});

test('--runtime both: the same spec in each runtime, two results and the browser-against-native table', async () => {
  test.setTimeout(200_000);
  const out = join(dir, 'both.json');
  const run = await runCli('bench/bench.ts', [
    '--runtime',
    'both',
    '--preset',
    'ci-tiny',
    '--prefill',
    '16,64',
    '--depth',
    '16',
    '--no-autotune',
    '--out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  const browser = readResult(join(dir, 'both-browser.json'));
  const native = readResult(join(dir, 'both-node.json'));
  expect(browser.env.runtime?.name).toBe('browser');
  expect(native.env.runtime?.name).toBe('node');
  expect(run.stdout).toContain('**Browser against native**');
  const rows = run.stdout
    .split('\n')
    .filter((l) => /^\| (prefill|decode) \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|/.test(l));
  expect(rows).toHaveLength(3);
  // Each row's wall ratio is the two results' wall medians, divided.
  const [first] = rows;
  const cells = first.split('|').map((c) => c.trim());
  const ratio = browser.points[0].wallMedianMs / native.points[0].wallMedianMs;
  expect(Number(cells[5])).toBeCloseTo(ratio, 2);
  expect(run.stdout).toMatch(/\| submit \+ 4-byte readback, µs \| [\d.]+ \| [\d.]+ \| [\d.]+ \|/);
});

test('native runtime: bad flags exit 2, no loader or no adapter exit 3 with what to do, and nothing hangs', async () => {
  const bench = (args: string[], env: Record<string, string> = {}) =>
    runCli('bench/bench.ts', args, 60_000, env);
  let run = await bench(['--runtime', 'nope']);
  expect([run.code, run.stderr]).toEqual([
    2,
    expect.stringContaining('--runtime must be browser, node, both, got "nope"'),
  ]);
  run = await bench(['--runtime', 'node', '--adapter', 'gpu0']);
  expect([run.code, run.stderr]).toEqual([
    2,
    expect.stringContaining('--adapter must be default, swiftshader'),
  ]);

  run = await bench(['--runtime', 'node'], { BENCH_VULKAN_DIRS: join(dir, 'nothing-here') });
  expect(run.code).toBe(3);
  expect(run.stderr).toContain('No Vulkan loader (libvulkan.so.1) found. Install one');

  // A real loader with a driver manifest whose library does not exist: Dawn finds no adapter.
  const loader = findVulkan('swiftshader').env.LD_LIBRARY_PATH?.split(':')[0] ?? '/usr/lib/x86_64-linux-gnu';
  const fake = join(dir, 'fake-vulkan');
  mkdirSync(fake);
  symlinkSync(join(loader, 'libvulkan.so.1'), join(fake, 'libvulkan.so.1'));
  writeFileSync(
    join(fake, 'vk_swiftshader_icd.json'),
    JSON.stringify({
      file_format_version: '1.0.0',
      ICD: { library_path: join(fake, 'missing.so'), api_version: '1.1.0' },
    }),
  );
  const started = Date.now();
  run = await bench(['--runtime', 'node'], { BENCH_VULKAN_DIRS: fake });
  expect(run.code, run.stderr).toBe(3);
  expect(run.stderr).toContain('Dawn returned no adapter');
  expect(run.stderr).toContain('--adapter swiftshader');
  expect(Date.now() - started, 'no hang on Dawn handles').toBeLessThan(30_000);
});
