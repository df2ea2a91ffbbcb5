import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { findVulkan } from '../bench/vulkan.ts';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'native-'));
const _readResult = (path: string): BenchResult =>
  BenchResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));

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
