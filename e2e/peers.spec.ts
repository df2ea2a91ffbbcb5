import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { runPeerJob, runWllamaJob } from '../bench/peers.ts';
import { presetConfig } from '../src/model/config.ts';
import { encodeGguf, ggufParts } from '../src/model/gguf-writer.ts';
import { randomWeights } from '../src/model/weights.ts';
import { AGREEMENT_TOLERANCES } from '../src/peers/agreement.ts';
import type { PeerJob } from '../src/peers/job.ts';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { makeResult } from '../test-support/fixtures/base.ts';
import { makePeer } from '../test-support/fixtures/peers.ts';
import { makeVocabFixtures } from '../test-support/vocab-fixture.ts';
import { runCli } from './cli.ts';
import { openPage, screenshot, watchConsole, withoutAutotune } from './page-helpers.ts';

// Its tests share nothing (each writes its own files), and the file is among the longest: in
// parallel mode the two workers split its tests instead of one running them all at the end.
test.describe.configure({ mode: 'parallel' });

// llama.cpp itself (node-llama-cpp's prebuilt CPU binary) beside the engine, on ci-tiny.

const dir = mkdtempSync(join(tmpdir(), 'peers-'));
const readResult = (path: string): BenchResult =>
  BenchResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));

test('--peer llama.cpp,wllama: both runtimes beside llama.cpp natively and in a page on the same file, the agreements within the f32 bound, a peer that cannot run recorded', async () => {
  test.setTimeout(240_000);
  const out = join(dir, 'both.json');
  const run = await runCli(
    'bench/bench.ts',
    [
      '--runtime',
      'both',
      '--preset',
      'ci-tiny',
      '--prefill',
      '32',
      '--depth',
      '16',
      '--gen',
      '4',
      '--reps',
      '3',
      // gpu: llama.cpp's Vulkan build refuses SwiftShader, so on a machine without a GPU this peer fails.
      '--peer',
      'llama.cpp,llama.cpp:gpu,wllama',
      // Nothing here is about tuning: the default kernels, and no search.
      '--no-autotune',
      '--out',
      out,
    ],
    230_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/peers: both engines load .*ci-tiny-seed0-F32\.gguf \(F32\)/);
  for (const runtime of ['browser', 'node']) {
    const r = readResult(out.replace(/\.json$/, `-${runtime}.json`));
    // The engine ran from the GGUF file llama.cpp loaded, and kept its own points.
    expect(r.model.preset).toBe('ci-tiny-seed0-F32.gguf');
    expect(r.points.map((p) => `${p.pass}${p.tokens}@${p.depth}`)).toEqual(['prefill32@0', 'decode1@16']);
    const [cpu, gpu, wasm] = r.peers ?? [];
    expect(cpu).toMatchObject({
      engine: 'llama.cpp',
      backend: 'cpu',
      requestedBackend: 'cpu',
      fileType: 'F32',
    });
    expect(cpu.error).toBeUndefined();
    expect(cpu.version).toMatch(/^llama\.cpp .*node-llama-cpp 3\.21\.1$/);
    expect(cpu.threads).toBeGreaterThan(0);
    expect(cpu.points.map((p) => [p.pass, p.tokens, p.depth, p.samplesMs.length])).toEqual([
      ['prefill', 32, 0, 3],
      ['decode', 1, 16, 3],
    ]);
    for (const p of cpu.points) expect(p.medianMs).toBeGreaterThan(0);
    // Timed by llama.cpp's own counters, the wall clock around each call beside them.
    for (const p of cpu.points) expect([p.clock, p.wallSamplesMs?.length]).toEqual(['llama.cpp-perf', 3]);
    // The same weights in f32 in two engines: every top-1 the same, log p within llama.cpp's f16 KV error.
    expect(cpu.agreement).toMatchObject({ tokens: 32, top1: 1, passed: true });
    expect(cpu.agreement?.maxAbsLogprobDiff).toBeLessThanOrEqual(5e-3);
    expect(cpu.agreement?.maxAbsLogprobDiff).toBeGreaterThan(0);
    expect(gpu.requestedBackend).toBe('gpu');
    if (gpu.error) expect(gpu.error).toMatch(/no GPU backend/);
    else expect(gpu.points).toHaveLength(2);
    // wllama in a page: llama.cpp's own counters, on WebGPU where its backend engages (it needs
    // shader-f16, which SwiftShader lacks), else on the wasm CPU backend with the reason recorded.
    expect(wasm).toMatchObject({ engine: 'wllama', requestedBackend: 'webgpu', version: 'wllama 3.8.1' });
    expect(wasm.error).toBeUndefined();
    expect(['webgpu', 'wasm-cpu']).toContain(wasm.backend);
    if (wasm.backend === 'wasm-cpu') expect(wasm.note).toMatch(/shader-f16|no WebGPU adapter/);
    expect(wasm.clock).toMatch(/prompt_ms/);
    expect(wasm.points.map((p) => [p.pass, p.tokens, p.depth, p.samplesMs.length])).toEqual([
      ['prefill', 32, 0, 3],
      ['decode', 1, 16, 3],
    ]);
    for (const p of wasm.points) expect(p.medianMs).toBeGreaterThan(0);
    // ci-tiny's 509 tokens are fewer than the 1024 it lists: whole distributions, compared as such.
    expect(wasm.agreement).toMatchObject({ tokens: 32, top1: 1, passed: true });
    expect(wasm.agreement?.peerTopK).toBeUndefined();
    expect(wasm.agreement?.maxAbsLogprobDiff).toBeLessThanOrEqual(5e-3);
    expect(wasm.agreement?.maxAbsLogprobDiff).toBeGreaterThan(0);
  }
  expect(run.stdout).toContain('## Beside llama.cpp (the same GGUF file in both engines)');
  expect(run.stdout).toMatch(/\| pp32 \| [\d.]+ \| [\d.]+ \|/);
  expect(run.stdout).toMatch(/\| tg4 @ d16 \|/);
  expect(run.stdout).toContain('| llama.cpp cpu wall ms |');
  expect(run.stdout).toMatch(/Speed column \(and llama\.cpp cpu ms, tok\/s\): llama\.cpp’s own counters/);
  expect(run.stdout).toMatch(/Agreement on 32 prompt positions: top-1 100\.0%.*\*\*passed\*\*/);
  expect(run.stdout).toMatch(/### wllama (wasm-cpu|webgpu): wllama 3\.8\.1/);
  expect(run.stdout).toMatch(/Verdict: /);
});

test('--peer llama.cpp,wllama on a Qwen3-shaped Q4_K_M file with GPT-2’s vocabulary, made by llama.cpp’s quantizer: both run, wllama on text its tokenizer reads as the ids the others are fed, and both agree within the mixed bound', async () => {
  test.setTimeout(300_000);
  // GPT-2's 50,257-token byte-level BPE vocabulary (llama.cpp's models/ggml-vocab-gpt-2.gguf): a
  // real one, a third of Qwen's, since the LM head is most of this engine's time on SwiftShader.
  const [file] = makeVocabFixtures(dir, 'gpt-2', ['Q4_K_M']);
  const out = join(dir, 'q4km.json');
  const run = await runCli(
    'bench/bench.ts',
    [
      ...['--runtime', 'node', '--model', file, '--prefill', '16', '--depth', '16', '--gen', '4'],
      ...['--reps', '3', '--no-autotune', '--peer', 'llama.cpp,wllama', '--out', out],
    ],
    290_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/peers: both engines load .*qwen3-gpt-2-Q4_K_M\.gguf \(mixed\)/);
  const r = readResult(out);
  expect(r.model.weightFormat).toBe('mixed');
  const [native, wasm] = r.peers ?? [];
  for (const peer of [native, wasm]) {
    expect(peer.error).toBeUndefined();
    expect(peer.fileType).toBe('mixed');
    expect(peer.points.map((p) => [p.pass, p.tokens, p.depth, p.samplesMs.length])).toEqual([
      ['prefill', 16, 0, 3],
      ['decode', 1, 16, 3],
    ]);
    // Judged by the file's own format ("mixed"), not --weights (which a GGUF file does not set).
    expect(peer.agreement).toMatchObject({ tokens: 32, passed: true, tolerance: AGREEMENT_TOLERANCES.mixed });
    expect(peer.agreement?.maxAbsLogprobDiff).toBeGreaterThan(0);
  }
  // The native peer is fed token ids; wllama takes text only, spelled with the file's tokenizer, and
  // its own token counts matched (else the peer fails). 352 of GPT-2's tokens are no whole UTF-8:
  // wllama cannot return them, so both distributions are taken without them.
  expect([native.engine, native.promptInput]).toEqual(['llama.cpp', 'token-ids']);
  expect([wasm.engine, wasm.promptInput]).toEqual(['wllama', 'text']);
  expect(wasm.agreement).toMatchObject({ peerTopK: 1024, tokensLeftOut: 352 });
  expect(run.stdout).toMatch(/Agreement on 32 prompt positions: top-1 .*\*\*passed\*\*/);
});

test('--peer: an unknown peer or backend exits 2 before anything is measured', async () => {
  let run = await runCli('bench/bench.ts', ['--runtime', 'node', '--peer', 'vllm'], 60_000);
  expect([run.code, run.stderr]).toEqual([2, expect.stringContaining('--peer: unknown peer "vllm"')]);
  run = await runCli('bench/bench.ts', ['--runtime', 'node', '--peer', 'llama.cpp:tpu'], 60_000);
  expect([run.code, run.stderr]).toEqual([
    2,
    expect.stringContaining('backend must be cpu, gpu, auto, got "tpu"'),
  ]);
  expect(run.stderr).not.toContain('adapter:');
});

test('--peer: a format llama.cpp cannot hold is recorded and the run keeps its points', async () => {
  test.setTimeout(150_000);
  const out = join(dir, 'int4.json');
  const run = await runCli(
    'bench/bench.ts',
    [
      '--runtime',
      'node',
      '--preset',
      'ci-tiny',
      '--weights',
      'int4',
      '--prefill',
      '16',
      '--depth',
      '',
      '--reps',
      '3',
      '--no-autotune',
      '--peer',
      'llama.cpp',
      '--out',
      out,
    ],
    140_000,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toMatch(
    /peers: llama\.cpp cannot take this model in int4: .*the run goes on without them/,
  );
  const r = readResult(out);
  expect(r.points).toHaveLength(1);
  expect(r.peers?.[0]).toMatchObject({ engine: 'llama.cpp', points: [], agreement: null });
  expect(r.peers?.[0].error).toMatch(/int4/);
});

/** A peer job on ci-tiny's f32 file, the smallest the peer process can be asked. */
function job(file: string): PeerJob {
  return {
    file,
    backend: 'cpu',
    contextSize: 64,
    plan: { prefill: [8], depths: [], gen: 2, reps: 3, warmup: 0, vocabSize: 509 },
    prompt: [200, 201, 202],
  };
}

test('the peer process: not installed, a crash in llama.cpp, a file it cannot load and a timeout are each one clear error', async () => {
  test.setTimeout(120_000);
  const weights = randomWeights(presetConfig('ci-tiny'), 0);
  const good = join(dir, 'good.gguf');
  writeFileSync(good, encodeGguf(ggufParts(weights, { tokenizer: true })));
  // Works as it is: the faults below are the only thing each case changes.
  const ok = await runPeerJob(job(good), 60_000);
  expect(ok.points).toHaveLength(1);
  expect(ok.logprobs).toHaveLength(3);
  expect(ok.logprobs[0]).toHaveLength(509);

  await expect(
    runPeerJob(job(good), 60_000, { BENCH_LLAMA_CPP_MODULE: '/nonexistent/node-llama-cpp' }),
  ).rejects.toThrow(
    /llama\.cpp peer: \/nonexistent\/node-llama-cpp is not installed.*npm ci \(without --omit=optional\)/,
  );

  // A vocabulary without "▁": llama.cpp's tokenizer falls back to byte tokens that are not there and
  // aborts the process (std::out_of_range), as it did before the writer added ▁.
  const parts = ggufParts(weights, { tokenizer: true });
  parts.meta = parts.meta.map(([k, v]) =>
    k === 'tokenizer.ggml.tokens' && 'strs' in v
      ? [k, { strs: v.strs.map((t) => (t === '▁' ? '▁▁' : t)) }]
      : [k, v],
  );
  const broken = join(dir, 'no-space-token.gguf');
  writeFileSync(broken, encodeGguf(parts));
  await expect(runPeerJob(job(broken), 60_000)).rejects.toThrow(
    /the llama\.cpp process ended \((SIGABRT|code \d+)\)/,
  );

  const truncated = join(dir, 'truncated.gguf');
  writeFileSync(truncated, readFileSync(good).subarray(0, 4096));
  await expect(runPeerJob(job(truncated), 60_000)).rejects.toThrow(/cannot load .*truncated\.gguf/);

  await expect(runPeerJob(job(good), 50)).rejects.toThrow(
    /did not finish within 0 s \(--peer-timeout\); stopped/,
  );
});

test('the peer process: llama.cpp’s own counters time each point, the wall clock around each call beside them', async () => {
  test.setTimeout(60_000);
  const file = join(dir, 'counters.gguf');
  writeFileSync(file, encodeGguf(ggufParts(randomWeights(presetConfig('ci-tiny'), 0), { tokenizer: true })));
  // A one-token prefill (an "eval run" to llama.cpp's counters, not "prompt eval"), an 8-token one,
  // and a generation of 4 tokens at depths 0 and 8.
  const r = await runPeerJob(
    {
      ...job(file),
      plan: { prefill: [1, 8], depths: [0, 8], gen: 4, reps: 2, warmup: 1, vocabSize: 509 },
    },
    60_000,
  );
  expect(r.info.clock).toBe('llama.cpp-perf');
  expect(r.info.note).toBeUndefined();
  expect(r.points.map((p) => [p.pass, p.tokens, p.depth, p.clock])).toEqual([
    ['prefill', 1, 0, 'llama.cpp-perf'],
    ['prefill', 8, 0, 'llama.cpp-perf'],
    ['decode', 1, 0, 'llama.cpp-perf'],
    ['decode', 1, 8, 'llama.cpp-perf'],
  ]);
  for (const p of r.points) {
    expect(p.medianMs).toBeGreaterThan(0);
    expect(p.wallSamplesMs).toHaveLength(2);
    // The wall clock holds llama.cpp's span and the binding's own work around it; llama.cpp prints
    // its times to 0.01 ms, hence the rounding allowed.
    for (const [i, ms] of p.samplesMs.entries())
      expect(ms).toBeLessThanOrEqual((p.wallSamplesMs?.[i] ?? 0) + 0.005);
  }
});

test('wllama in its page: no browser, a broken file and a timeout are each one clear error', async () => {
  test.setTimeout(60_000);
  const wjob = {
    backend: 'cpu' as const,
    contextSize: 64,
    plan: { prefill: [8], depths: [], gen: 2, reps: 3, warmup: 0, vocabSize: 509 },
    agreement: { from: 1, texts: ['a', 'ab'] },
    unsampled: [],
    topK: 1024,
  };
  const truncated = join(dir, 'wllama-truncated.gguf');
  writeFileSync(
    truncated,
    encodeGguf(ggufParts(randomWeights(presetConfig('ci-tiny'), 0), { tokenizer: true })).subarray(0, 4096),
  );
  // The run records such an error and keeps its points, as for a format llama.cpp cannot hold.
  await expect(runWllamaJob(wjob, truncated, 50_000, '/nonexistent/chromium')).rejects.toThrow(
    'wllama runs in a browser page, and none started: --browser /nonexistent/chromium: no such file',
  );
  // wllama's own words name its glue code; the message says which step failed.
  await expect(runWllamaJob(wjob, truncated, 50_000)).rejects.toThrow(
    /^wllama: failed while (loading the file|timing the prefill and decode points): /,
  );
  await expect(runWllamaJob(wjob, truncated, 1)).rejects.toThrow(
    /wllama did not finish within 0 s \(--peer-timeout\); stopped/,
  );
});

test('the page: an imported result with a peer draws its joined points on the roofline as diamonds', async ({
  page,
}) => {
  const problems = watchConsole(page);
  const base = makeResult();
  const prefill = base.points.find((p) => p.pass === 'prefill' && p.batch === 1);
  const decode = base.points.find((p) => p.pass === 'decode' && p.batch === 1);
  if (!prefill || !decode) throw new Error('the fixture has a prefill and a decode point');
  const point = (p: typeof prefill, ms: number) => ({
    pass: p.pass,
    tokens: p.tokens,
    depth: p.depth,
    samplesMs: [ms],
    medianMs: ms,
    tokPerS: ((p.pass === 'prefill' ? p.tokens : 1) * 1000) / ms,
  });
  // Two joined points, and one at a length this run never timed: it has no FLOP count, so no mark.
  const peer = makePeer([
    point(prefill, prefill.medianMs / 4),
    point(decode, decode.medianMs / 2),
    { ...point(prefill, 1), tokens: 9999 },
  ]);
  const file = join(dir, 'with-peer.json');
  writeFileSync(file, JSON.stringify(BenchResultSchema.parse({ ...base, peers: [peer] })));
  await openPage(page);
  await page.getByTestId('tab-compare').click();
  await page.getByTestId('import').setInputFiles([file]);
  await expect(page.locator('[data-testid=compare-roofline] [data-mark=peer]')).toHaveCount(2);
  await expect(page.getByTestId('compare-roofline')).toContainText('◇ llama.cpp on the same file');
  // The Compare table beside llama.cpp: the peer took a quarter of the prefill's time and half the
  // decode's, so this engine is 0.25× and 0.50× its speed; the unjoined length has no speed.
  const rows = page.locator('[data-testid=compare-peers-table] tbody tr');
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(0)).toContainText(`pp${prefill.tokens}`);
  await expect(rows.nth(0)).toContainText('0.25×');
  await expect(rows.nth(1)).toContainText('pp9999');
  await expect(rows.nth(1)).toContainText('–');
  await expect(rows.nth(2)).toContainText('0.50×');
  await expect(rows.nth(2)).toContainText('llama.cpp cpu, F32');
  await screenshot(page.getByTestId('compare-peers'), 'compare-peers.png');
  expect(problems).toEqual([]);
});

test('the page: "Compare with llama.cpp" runs wllama in the page on the run’s own GGUF file, beside the run', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const problems = watchConsole(page);
  await openPage(page);
  await page.getByLabel('Prefill lengths L').fill('32');
  await page.getByLabel('Decode depths').fill('16');
  await page.getByLabel('Tokens to generate').fill('4');
  await page.getByLabel(/Compare with llama\.cpp/).check();
  await withoutAutotune(page);
  await page.getByTestId('run').click();
  const card = page.getByTestId('run-peers');
  await expect(card).toBeVisible({ timeout: 170_000 });
  await expect(page.getByTestId('progress')).toContainText('Done: 2 points');
  // The engine ran from the file it wrote for the peer.
  await expect(page.locator('.summary')).toContainText('ci-tiny-seed0-F32.gguf');
  await expect(card).toContainText(/wllama (wasm-cpu|webgpu): wllama 3\.8\.1/);
  await expect(card.getByTestId('run-peers-headline').first()).toContainText(
    /in prefill, .* in decode wllama/,
  );
  const rows = card.locator('[data-testid=run-peers-table-0] tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText('pp32');
  await expect(rows.nth(1)).toContainText('tg4 @ d16');
  // The same f32 weights in both engines: every top-1 the same, log p within the f32 bound.
  await expect(card.getByTestId('run-peers-agreement-0')).toContainText(
    /Agreement on 32 prompt positions: top-1 100\.0% .* passed$/,
  );
  // The peer's points on the roofline, beside the run's own.
  await expect(page.locator('[data-testid=roofline] [data-mark=peer]')).toHaveCount(2);
  await screenshot(card, 'run-peers.png');
  await screenshot(page, 'run-peers-page.png');
  expect(problems).toEqual([]);
});
