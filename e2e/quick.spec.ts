import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { CI_TINY_DISPATCHES, SPLIT_MERGES } from './ci-tiny.ts';
import { type CliRun, runCli } from './cli.ts';

/**
 * The quick suite on ci-tiny, the main job, run once for all three tests below: `--runtime both`
 * runs it in headless Chromium's worker and natively on Dawn, one after the other, and writes a
 * result for each and the browser-against-native table. Each test reads what it is about; none
 * needs a run of its own (the CLI starts, compiles and autotunes once per runtime, not three times).
 */
const dir = mkdtempSync(join(tmpdir(), 'quick-'));
const readResult = (path: string): BenchResult =>
  BenchResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
let run: CliRun;

/** Seconds each runtime's run took, from its progress line ("Done  elapsed 50s"), in the order they ran. */
function elapsed(runtime: 'browser' | 'node'): number {
  const done = [...run.stderr.matchAll(/\] Done\s+elapsed (\d+)s/g)].map((m) => Number(m[1]));
  expect(done, run.stderr).toHaveLength(2);
  return done[runtime === 'browser' ? 0 : 1];
}

test.describe
  .serial('the quick suite on ci-tiny, in the browser and natively', () => {
    test.beforeAll(async () => {
      test.setTimeout(330_000);
      run = await runCli(
        'bench/bench.ts',
        ['--runtime', 'both', '--preset', 'ci-tiny', '--suite', 'quick', '--out', join(dir, 'quick.json')],
        320_000,
      );
    });

    test('bench CLI: the quick suite on ci-tiny writes a valid result, both clocks and per-point latency', async () => {
      expect(run.code, run.stderr).toBe(0);
      expect(elapsed('browser'), 'the quick suite must finish in under 3 minutes').toBeLessThan(180);
      expect(run.stderr).toMatch(/\[\d+\/\d+\] prefill: prefill L=16 .*elapsed \d+s/);

      expect(run.stdout).toContain(
        '| pass | L/depth | clock | ms | tok/s | bound | % roof | predicted ms | GFLOP/s | GB/s | FLOP/B | wall ms | GPU ms |',
      );

      const result = readResult(join(dir, 'quick-browser.json'));
      expect(result.status).toBe('complete');
      // A search that ran says where it is, trial by trial, op by op (issue 37, item 10); a tuning
      // read from the cache (an earlier test's) ran none.
      if (result.tuning?.cached === false) {
        expect(run.stderr).toMatch(
          /Autotuning matmul: validating and timing .+? \(trial 1; \d+ candidates\)/,
        );
        expect(run.stderr).toMatch(/Autotuning attentionDecode: validating and timing .+? \(trial \d+;/);
      }
      expect(result.validation.passed).toBe(true);
      expect(result.spec.workloads.map((w) => w.kind)).toEqual(['prefill', 'decode', 'fusion']);
      expect(result.spec.fuse).toBe(true);
      const graph = result.model.graph;
      if (!graph) throw new Error('the result does not say which graph the model ran');
      // The sweeps' points; the fusion workload's carry their graph.
      const sweep = result.points.filter((p) => !p.graph);
      const prefill = sweep.filter((p) => p.pass === 'prefill');
      const decode = sweep.filter((p) => p.pass === 'decode');
      expect(prefill.map((p) => p.tokens)).toEqual([16, 32, 64, 128, 256]);
      expect(decode.map((p) => p.depth)).toEqual([16, 128, 512]);
      // SwiftShader has timestamps, and the CLI asks Chromium not to quantize them.
      expect(result.env.timestamps).toEqual({ supported: true, quantumNs: null });
      const splitDecode = (result.tuning?.choices ?? []).some(
        (c) => c.op === 'attentionDecode' && c.chosen.startsWith('split('),
      );
      for (const p of result.points) {
        // One sample per repetition, in both clocks; the GPU clock placed it.
        expect(p.samplesMs).toHaveLength(3);
        expect(p.wallSamplesMs).toHaveLength(3);
        expect(p.gpuSamplesMs).toHaveLength(3);
        expect(p.timebase).toBe('gpu');
        expect(p.medianMs).toBe(p.gpuMedianMs);
        expect(p.wallMedianMs).toBeGreaterThan(0);
        // Nothing foreign inside the GPU span: it cannot exceed the wall time of the same repetition.
        for (const [i, gpu] of p.samplesMs.entries()) expect(gpu).toBeLessThanOrEqual(p.wallSamplesMs[i]);
        expect(p.kernels.length, `${p.pass} ${p.tokens}/${p.depth} has a kernel breakdown`).toBeGreaterThan(
          0,
        );
        // The dispatches the cost model assumes are the ones the engine recorded, and both are the hand count.
        expect(p.dispatches).toBe(
          CI_TINY_DISPATCHES[p.graph ?? graph] + (p.pass === 'decode' && splitDecode ? SPLIT_MERGES : 0),
        );
        expect(p.kernels.reduce((n, k) => n + k.calls, 0)).toBe(p.dispatches);
        expect(p.predictedMs).toBeGreaterThan(0);
      }
      for (const p of result.points.filter((x) => x.pass === 'prefill'))
        expect(p.ttftMs?.p50).toBe(p.wallMedianMs);
      for (const p of result.points.filter((x) => x.pass === 'decode')) {
        // TPOT samples are the wall samples, one per repetition; ITLs are every gap of 15 steps × 3 reps.
        expect(p.tpotMs?.p50).toBe(p.wallMedianMs);
        expect(p.itlSamplesMs).toHaveLength(15 * 3);
        expect(p.itlMs?.p99).toBeGreaterThanOrEqual(p.itlMs?.p50 ?? Number.POSITIVE_INFINITY);
      }
      // Long prefills are compute-bound on a software adapter; decode steps bandwidth- or overhead-bound.
      expect(prefill[prefill.length - 1].bound).toBe('compute');
      for (const d of decode) expect(['bandwidth', 'overhead']).toContain(d.bound);
      expect(result.peaks.dispatchUs).toBeGreaterThan(0);
      expect(result.peaks.emptyDispatchUs).toBeGreaterThan(0);
      expect(result.peaksAfter?.fmaGflops).toBeGreaterThan(0);
      // The roofs again time each throughput probe's winner of the first measurement alone, at its
      // scale: one FMA and one copy trial, the configuration of the first measurement's best.
      for (const kind of ['fma', 'copy'] as const) {
        const before = result.peaks.trials.filter((t) => t.kind === kind);
        const best = before.reduce((a, b) => (b.value > a.value ? b : a));
        const after = result.peaksAfter?.trials.filter((t) => t.kind === kind) ?? [];
        expect(after.map((t) => t.label)).toEqual([
          `${best.label} (the first measurement's best configuration)`,
        ]);
        // A configuration timed once was more than 10% behind the best first sample, so behind the best.
        for (const t of before.filter((x) => x.label.includes('(one run')))
          expect(t.value).toBeLessThan(0.9 * best.value);
      }

      // Fused against unfused at the suite's largest L and first depth: what the engine recorded per
      // layer, the hand count; the times are the points' own p50s, the ratio theirs.
      expect(result.points.filter((p) => p.graph).map((p) => [p.pass, p.graph, p.tokens, p.depth])).toEqual([
        ['prefill', 'fused', 256, 0],
        ['decode', 'fused', 1, 16],
        ['prefill', 'unfused', 256, 0],
        ['decode', 'unfused', 1, 16],
      ]);
      const [fused, unfused] = result.fusion ?? [];
      expect([fused?.graph, fused?.fused, unfused?.graph, unfused?.fused]).toEqual([
        'fused',
        true,
        'unfused',
        false,
      ]);
      for (const [row, perLayer] of [
        [fused, 6],
        [unfused, 16],
      ] as const) {
        const merge = splitDecode ? SPLIT_MERGES : 0;
        expect([row.prefillPerLayer, row.decodePerLayer]).toEqual([perLayer, perLayer + merge / 2]);
        expect([row.prefillDispatches, row.decodeDispatches]).toEqual([
          CI_TINY_DISPATCHES[row.graph],
          CI_TINY_DISPATCHES[row.graph] + merge,
        ]);
        const point = (pass: string) => result.points.find((p) => p.graph === row.graph && p.pass === pass);
        expect(row.prefillMs).toBe(point('prefill')?.ttftMs?.p50);
        expect(row.tpotMs).toBe(point('decode')?.tpotMs?.p50);
      }
      expect(fused.tpotRatio).toBeCloseTo(fused.tpotMs / unfused.tpotMs, 12);
      expect(result.validation.checks.map((c) => c.name)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^fused graph: /),
          expect.stringMatching(/^unfused graph: /),
        ]),
      );
      const target = result.targets?.find((t) => t.name.startsWith('fused against unfused decode step'));
      expect(target?.met).not.toBeNull();
      // The report's fusion row: per layer and per pass, split-K's merge counted in decode.
      const merge = splitDecode ? SPLIT_MERGES : 0;
      expect(run.stdout).toContain(
        `| fused | 6 | ${6 + merge / 2} | ${CI_TINY_DISPATCHES.fused}, ${CI_TINY_DISPATCHES.fused + merge} |`,
      );
    });

    /** The native runtime end to end: the CLI with --runtime node, on Dawn, no browser involved. */
    test('bench --runtime node: the quick suite on ci-tiny, a valid result recorded as native, the same report', async () => {
      expect(run.code, run.stderr).toBe(0);
      expect(elapsed('node'), 'the quick suite must finish in under 3 minutes').toBeLessThan(180);
      expect(run.stderr).toMatch(/node runtime, webgpu 0\.6\.2 \(Dawn\)/);
      expect(run.stdout).toContain(
        '| pass | L/depth | clock | ms | tok/s | bound | % roof | predicted ms | GFLOP/s | GB/s | FLOP/B | wall ms | GPU ms |',
      );
      expect(run.stdout).toContain('- **Runtime:** native, Node on webgpu 0.6.2 (Dawn), vulkan backend');
      const r = readResult(join(dir, 'quick-node.json'));
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
      // Dawn has timestamps here too, not quantized: its own default masks them to 65,536 ns, which
      // made every prefill span a multiple of that (src/runtime/node/dawn-globals.ts).
      expect(r.env.timestamps).toEqual({ supported: true, quantumNs: null });
      const prefillNs = r.points
        .filter((p) => p.pass === 'prefill')
        .flatMap((p) => p.gpuSamplesMs ?? [])
        .map((ms) => Math.round(ms * 1e6));
      expect(prefillNs.length).toBeGreaterThan(0);
      expect(prefillNs.some((ns) => ns % 65_536 !== 0)).toBe(true);
      // Every point is placed by GPU time, inside its wall time.
      for (const p of r.points) {
        expect(p.timebase).toBe('gpu');
        for (const [i, gpu] of p.samplesMs.entries()) expect(gpu).toBeLessThanOrEqual(p.wallSamplesMs[i]);
      }
      expect(r.tuning?.enabled).toBe(true);
      // Every autotuned choice, in both runtimes, is one that passed validation.
      for (const t of [r, readResult(join(dir, 'quick-browser.json'))]) {
        expect(t.tuning?.choices.length).toBeGreaterThan(0);
        for (const choice of t.tuning?.choices ?? []) {
          expect(choice.trials.find((x) => x.variant === choice.chosen)?.valid, choice.op).toBe(true);
        }
      }
    });

    test('--runtime both: the same spec in each runtime, two results and the browser-against-native table', async () => {
      expect(run.code, run.stderr).toBe(0);
      const browser = readResult(join(dir, 'quick-browser.json'));
      const native = readResult(join(dir, 'quick-node.json'));
      expect(browser.env.runtime?.name).toBe('browser');
      expect(native.env.runtime?.name).toBe('node');
      expect(run.stdout).toContain('**Browser against native**');
      const rows = run.stdout
        .split('\n')
        .filter((l) =>
          /^\| (prefill|decode)( fused| unfused)? \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|/.test(l),
        );
      // Every point ran in both (the sweeps' and each graph's), each against its own twin.
      expect(rows).toHaveLength(browser.points.length);
      // Each row's wall ratio is the two results' wall medians, divided.
      const [first] = rows;
      const cells = first.split('|').map((c) => c.trim());
      const ratio = browser.points[0].wallMedianMs / native.points[0].wallMedianMs;
      expect(Number(cells[5])).toBeCloseTo(ratio, 2);
      expect(run.stdout).toMatch(/\| submit \+ 4-byte readback, µs \| [\d.]+ \| [\d.]+ \| [\d.]+ \|/);
    });
  });
