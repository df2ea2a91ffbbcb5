import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { BenchResultSchema } from '../src/results/schema.ts';
import { runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'kit-'));

/** A PATH with the few tools run.sh uses, and neither node nor npm. */
function bareBin(): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['sh', 'dirname', 'mkdir', 'chmod', 'mv', 'date', 'cat', 'xz']) {
    const path = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
    symlinkSync(path, join(bin, tool));
  }
  return bin;
}

test('the kit, unpacked into an empty folder, runs verify and a bench suite on SwiftShader with no node or npm on PATH; a missing Vulkan loader gets the native runtime’s message', async () => {
  test.setTimeout(240_000);
  // Fast compression here; the size target is for the default level (docs/measurements.md).
  const built = join(dir, 'built');
  const build = await runCli('bench/kit.ts', ['--out', built, '--level', '1'], 120_000);
  expect(build.code, build.stderr).toBe(0);
  const mib = Number(/is ([\d.]+) MiB \(at most 48\)/.exec(build.stderr)?.[1]);
  expect(mib).toBeGreaterThan(0);
  expect(mib).toBeLessThanOrEqual(48);

  // Unpacked into an empty folder, as a copy to another machine would land.
  const kit = join(dir, 'elsewhere', 'kit');
  mkdirSync(kit, { recursive: true });
  execFileSync('sh', ['-c', `tar -C "${built}" -cf - . | tar -C "${kit}" -xf -`]);
  expect(existsSync(join(kit, 'runtime', 'node'))).toBe(false);
  const bin = bareBin();
  expect(
    spawnSync('sh', ['-c', 'command -v node || command -v npm'], { env: { PATH: bin } }).status,
  ).not.toBe(0);

  const out = join(dir, 'out');
  // The quick suite small and without the kernel search: what is tested is that the kit runs.
  const env = {
    PATH: bin,
    HOME: dir,
    OUT: out,
    SUITES: 'verify quick',
    BENCH_ARGS: '--no-autotune --prefill 16,64 --depth 16',
    CHROMIUM_PATH: process.env.CHROMIUM_PATH ?? '',
  };
  const run = spawnSync('sh', [join(kit, 'run.sh'), 'ci-tiny', '--adapter', 'swiftshader'], {
    env,
    encoding: 'utf8',
    timeout: 200_000,
  });
  expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
  expect(run.stdout).toContain('kit: first run: unpacking the Node runtime and Dawn');
  expect(existsSync(join(kit, 'runtime', 'node'))).toBe(true);
  const quick = BenchResultSchema.parse(JSON.parse(readFileSync(join(out, 'quick.json'), 'utf8')));
  expect(quick.status).toBe('complete');
  expect(quick.validation.passed).toBe(true);
  expect(quick.env.runtime?.name).toBe('node');
  expect(quick.points.map((p) => `${p.pass} ${p.tokens}/${p.depth}`)).toEqual([
    'prefill 16/0',
    'prefill 64/0',
    'decode 1/16',
  ]);
  const summary = readFileSync(join(out, 'summary.md'), 'utf8');
  expect(summary).toContain('verify (ci-tiny against the CPU reference): PASS');
  expect(summary).toContain('quick suite (ci-tiny, complete, validation passed)');

  // No Vulkan loader where the runtime looks: the native runtime's own message, exit 3.
  const none = spawnSync('sh', [join(kit, 'run.sh'), 'ci-tiny', '--adapter', 'swiftshader'], {
    env: { ...env, SUITES: 'verify', BENCH_VULKAN_DIRS: join(dir, 'no-such-dir'), OUT: join(dir, 'out2') },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(none.status).toBe(3);
  expect(none.stdout + none.stderr).toMatch(/Vulkan loader/);
  expect(none.stdout + none.stderr).not.toContain('first run');
});
