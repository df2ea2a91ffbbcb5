import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { firstLengths } from '../src/capacity/lengths.ts';
import type { CapacityReport } from '../src/capacity/report.ts';
import type { MetaEntry } from '../src/model/gguf-writer.ts';
import { type BenchResult, BenchResultSchema } from '../src/results/schema.ts';
import { makeResult } from '../test-support/fixtures/base.ts';
import { gguf, TINY_LLAMA_META } from '../test-support/gguf-fixture.ts';
import { runCli } from './cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'capacity-'));
const probeOut = join(dir, 'probe.json');

/**
 * The capacity probe in headless Chromium on ci-tiny: a real KV pool on the adapter, filled by the
 * engine's allocator until it refuses, checked against the calculator's count.
 */
test('bench --suite capacity: the pool admits exactly what the calculator predicts, paged more than contiguous', async () => {
  test.setTimeout(150_000);
  const run = await runCli('bench/bench.ts', [
    '--preset',
    'ci-tiny',
    '--suite',
    'capacity',
    '--pool-mib',
    '16',
    '--out',
    probeOut,
  ]);
  expect(run.code, run.stderr).toBe(0);
  const r: BenchResult = BenchResultSchema.parse(JSON.parse(readFileSync(probeOut, 'utf8')));
  expect(r.status).toBe('complete');
  expect(r.points).toEqual([]);
  const c = r.capacity!;
  // ci-tiny: 2 · 2 layers · 2 KV heads · 32 · 4 bytes (f32) = 1024 bytes per token.
  expect(c.kvBytesPerToken).toBe(1024);
  // 16 MiB = 16,777,216 bytes = 16,384 token slots = 1024 pages of 16.
  expect(c.reservedBytes).toBe(16 * 2 ** 20);
  // Contiguous: 16,384 slots ÷ maxSeqLen 1024 = 16 sequences, whatever their lengths.
  expect(c.predicted.contiguous).toBe(16);
  expect(c.reached.contiguous).toBe(16);
  expect(c.reached.paged).toBe(c.predicted.paged);
  expect(c.agreement).toBe('exact');
  expect(c.note).toBeNull();
  expect(c.predictedUnrounded).toBeGreaterThanOrEqual(c.predicted.paged);
  // The mix (mean 1024 ÷ 8 = 128 tokens, 20% long at 4×) fits many more sequences in pages.
  expect(c.mix).toEqual({ meanTokens: 128, longShare: 0.2, longFactor: 4, seed: 0 });
  expect(c.reached.paged).toBeGreaterThan(2 * c.reached.contiguous);
  expect(c.pagedOverContiguous).toBe(c.reached.paged / c.reached.contiguous);
  // Used bytes are the admitted sequences' own tokens, summed here from the same seeded lengths;
  // waste is what their last pages leave empty, under one page per sequence.
  const lengths = firstLengths(
    { meanTokens: 128, longShare: 0.2, longFactor: 4, maxTokens: 1024, seed: 0 },
    c.reached.paged + 1,
  );
  const used = lengths.slice(0, c.reached.paged).reduce((a, b) => a + b, 0);
  expect(c.usedBytes).toBe(used * 1024);
  const pagesTaken = lengths.slice(0, c.reached.paged).reduce((a, n) => a + Math.ceil(n / 16), 0);
  expect(c.wastedBytes).toBe((pagesTaken * 16 - used) * 1024);
  // The next sequence would not have fit: the allocator stopped at the first real refusal.
  expect(pagesTaken + Math.ceil(lengths[c.reached.paged] / 16)).toBeGreaterThan(1024);
  // Contiguous: 16 sequences each holding a 1024-token slot, most of it empty.
  const contiguousUsed = lengths.slice(0, 16).reduce((a, b) => a + b, 0);
  expect(c.contiguous.usedBytes).toBe(contiguousUsed * 1024);
  expect(c.contiguous.wastedBytes).toBe((16 * 1024 - contiguousUsed) * 1024);
  // Every admitted slot was written on the GPU and read back as its own sequence's.
  expect(c.slotsVerified).toBe(true);
  expect(r.validation.checks.map((x) => [x.name, x.passed])).toEqual([
    ['capacity probe: paged slots written and read back', true],
    ['capacity probe: contiguous slots written and read back', true],
  ]);
  expect(run.stdout).toContain(
    '| KV pool | predicted | reached | reserved bytes | used bytes | wasted bytes |',
  );
  expect(r.peaks.fmaGflops).toBeGreaterThan(0);
});

const META: MetaEntry[] = [...TINY_LLAMA_META, ['tokenizer.ggml.tokens', { strs: ['a', 'b', 'c'] }]];
const capacity = (args: string[]) => runCli('bench/capacity.ts', args);
const traffic = ['--gpu-mem', '1GB', '--input', '100', '--output', '28', '--sessions', '20'];

test('npm run capacity: JSON output, roofs from a saved run, and a GGUF header', async () => {
  // A saved result whose roofs are 2000 GFLOP/s and 200 GB/s (the fixture's).
  const roofs = join(dir, 'roofs.json');
  writeFileSync(roofs, JSON.stringify(makeResult()));
  const model = join(dir, 'tiny.gguf');
  // Embeddings [64, 3] in Q8_0: 192 elements = 6 blocks of 34 bytes = 204 bytes, tied (no output.weight).
  writeFileSync(model, gguf(META, [['token_embd.weight', [64, 3], 8]]));
  const run = await capacity([
    '--model',
    model,
    ...traffic,
    '--kv-dtype',
    'f16',
    '--roofs',
    roofs,
    '--format',
    'json',
  ]);
  expect(run.code, run.stderr).toBe(0);
  const e = JSON.parse(run.stdout) as CapacityReport;
  // 2 · 2 layers · 2 KV heads · 16 (64 ÷ 4) · 2 bytes = 256 bytes per token; 128 tokens a request.
  expect(e.kvBytesPerToken).toBe(256);
  expect(e.kvBytesPerRequest).toBe(32_768);
  expect(e.kvBytesPerRequestMha).toBe(65_536);
  expect(e.kvBytesTotal).toBe(20 * 32_768);
  expect(e.weightsBytes).toBe(204);
  expect(e.model.weightsExact).toBe(true);
  expect(e.gpusNeeded).toBe(1);
  expect(e.input.peakTflops).toBe(2);
  expect(e.input.bandwidthGBs).toBe(200);
  // Prefill of 100 tokens: 204 bytes of weights and 25,600 of KV at 200 GB/s is 0.13 µs; its
  // FLOPs, over 1e5 by the linear layers alone (2 · 100 · 2 layers · 40,960), at 2e12 FLOP/s are
  // more, so it is compute-bound and takes at least 8.2 µs.
  expect(e.prefillMs!).toBeGreaterThan(((2 * 100 * 2 * 40_960) / 2e12) * 1000);
  expect(e.tpotMs).toBeGreaterThan(0);
  expect(e.notes.join(' ')).toContain('roofs.json');
});

test('npm run capacity: bad input exits 2 and names the flag or field', async () => {
  const failed = join(dir, 'failed.json');
  writeFileSync(
    failed,
    JSON.stringify(
      makeResult({ status: 'failed', peaks: { ...makeResult().peaks, fmaGflops: 0, copyGBps: 0 } }),
    ),
  );
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 3,
      hidden_size: 64,
      intermediate_size: 128,
      vocab_size: 10,
      max_position_embeddings: 64,
    }),
  );
  const cutGguf = join(dir, 'cut.gguf');
  writeFileSync(cutGguf, gguf(META, [['token_embd.weight', [40, 3], 8]]));
  const cases: [string[], RegExp][] = [
    [['--model', 'ci-tiny', ...traffic, '--headroom', '1.5'], /--headroom: must be in \(0, 1\]/],
    [['--model', 'ci-tiny', ...traffic, '--gpus=0'], /--gpus: must be positive/],
    [['--model', 'ci-tiny', ...traffic, '--gpu-mem=-1GB'], /--gpu-mem: "-1GB" is not a size/],
    [['--model', 'ci-tiny', ...traffic, '--roofs', failed], /roofs: .*failed.json has no measured roofs/],
    [['--model', config, ...traffic], /num_key_value_heads: heads \(4\) must be a multiple of kvHeads \(3\)/],
    [
      ['--model', cutGguf, ...traffic],
      /token_embd.weight has 120 elements, not a whole number of Q8_0 blocks/,
    ],
    [['--model', 'nope', ...traffic], /"nope" is neither a preset/],
    [['--model', 'ci-tiny', '--gpu-mem', '1GB'], /--input is required/],
  ];
  // Each exits at its parse; four at a time (most of each is tsx starting).
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const runs = await Promise.all(batch.map(([args]) => capacity(args)));
    batch.forEach(([args, message], k) => {
      expect(runs[k].code, args.join(' ')).toBe(2);
      expect(runs[k].stderr).toMatch(message);
    });
  }
});
