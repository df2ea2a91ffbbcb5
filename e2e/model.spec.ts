import { DEFAULT_VARIANTS, VARIANT_CANDIDATES, variantName } from '../src/kernels/variants.ts';
import { expect, test } from './harness/client.ts';
import { modelEndToEnd, prompt, useFamilies } from './model-families.ts';

test('split-K decode attention in the model: decode equals recompute across slice boundaries, batch equals alone, dispatches as the cost model counts', async ({
  harness,
}) => {
  test.setTimeout(180_000);
  // The smallest split candidate, so 30 prompt tokens + 4 steps cross a slice boundary (1 → 2
  // slices of 32) and a page boundary while the decode plan, built once, is replayed.
  const split = VARIANT_CANDIDATES.attentionDecode
    .filter((v) => v.family === 'split')
    .reduce((a, b) => (b.chunk < a.chunk ? b : a));
  // Before the family sets below, whose beforeEach sets the families every later test runs with.
  await harness.call('model', 'useVariants', { ...DEFAULT_VARIANTS, attentionDecode: split });
  const r = await harness.call('model', 'decodeVsRecompute', prompt(30), 4);
  expect(r.tokenMismatches, JSON.stringify(r)).toEqual([]);
  expect(r.failedSteps, JSON.stringify(r)).toEqual([]);
  // Sequences of 1, 38 and 34 tokens in one batch, each against itself alone.
  const prompts = Array.from({ length: 3 }, (_, i) => prompt(1 + ((i * 37) % 41), i + 1));
  const batch = await harness.call('model', 'batchVsAlone', prompts, 2);
  expect(batch.identical).toEqual(Array(3).fill(true));
  const d = await harness.call('model', 'decodeDispatches', prompt(30));
  expect(d.recorded).toEqual(d.assumed);
  // ci-tiny has 2 layers: the slices and the merge of each.
  expect(d.recorded.attention).toBe(4);
});

// The autotuned families (what this adapter runs), fused and unfused; the GPU-oriented defaults
// in model-defaults.spec.ts (on SwiftShader they are the slow ones).
modelEndToEnd('autotuned');
modelEndToEnd('autotuned, unfused');

test('every packed weight format end to end: logits against the CPU forward on the dequantized weights (normwise ≤ 1e-4), batch against alone', async ({
  harness,
}) => {
  test.setTimeout(240_000);
  // 37 prompt tokens: the packed matmul at an odd M; ci-tiny's down projection has K = 344, a
  // partial last group of 24. The autotuner's pick for int8 (one packed search, about 35 s on
  // SwiftShader; every packed family is checked kernel by kernel in kernels.spec and fused.spec),
  // the defaults for the others, and untied.
  // f32 is every other model test's format (prefill, decode, batches, chunks against the reference).
  const cases = [
    { format: 'f16', untied: false, tuned: false },
    { format: 'int8', untied: false, tuned: true },
    { format: 'int4', untied: false, tuned: false },
    { format: 'int4', untied: true, tuned: false },
  ] as const;
  for (const c of cases) {
    const r = await harness.call('model', 'formatVsReference', c.format, prompt(37, 5), 3, c.untied, c.tuned);
    const what = `${c.format} untied=${c.untied} tuned=${c.tuned}: ${JSON.stringify({ ...r, recorded: undefined, assumed: undefined })}`;
    expect(r.prefillErr, what).toBeLessThanOrEqual(1e-4);
    expect(r.decodeErr, what).toBeLessThanOrEqual(1e-4);
    expect(r.batchIdentical, what).toBe(true);
    expect(r.recorded, what).toEqual(r.assumed);
    // Every linear layer (7 per layer, 2 layers), the embedding table and the head are in the
    // format, as llama-quantize makes a file; a tied head is the table itself.
    expect(r.packed, what).toEqual(Array(16).fill(c.format));
    expect(r.headIsTable, what).toBe(!c.untied);
  }
});

test('prefill logits match the CPU reference with every prefill attention family the autotuner may pick', async ({
  harness,
}) => {
  // The model tests above run the defaults and this adapter's pick; any other candidate could be
  // the pick elsewhere, so each one runs a whole-model prefill too (the other ops at their
  // defaults), over several key blocks and a partial last one.
  test.setTimeout(180_000);
  const before = await harness.call('model', 'currentVariants');
  try {
    for (const attentionPrefill of VARIANT_CANDIDATES.attentionPrefill) {
      if (attentionPrefill.family === DEFAULT_VARIANTS.attentionPrefill.family) continue;
      await harness.call('model', 'useVariants', { ...DEFAULT_VARIANTS, attentionPrefill });
      // 37 tokens: 74 (query, head) pairs of each KV head, so register's last invocation holds 2 rows.
      const r = await harness.call('model', 'prefillVsReference', prompt(37));
      const what = `${variantName(attentionPrefill)}: ${JSON.stringify(r)}`;
      expect(r.maxRelErr, what).toBeLessThanOrEqual(1e-3);
      expect(r.recorded, what).toEqual(r.assumed);
    }
  } finally {
    await harness.call('model', 'useVariants', before);
  }
});

test('an engine step decodes a batch while prefilling another prompt in chunks, each sequence as if alone', async ({
  harness,
}) => {
  // Three running sequences, then a 45-token prompt in chunks of 16 (16 + 16 + 13) mixed into the
  // decode steps; each sequence generates 8 tokens.
  const prompts = [prompt(9, 1), prompt(20, 2), prompt(3, 3), prompt(45, 4)];
  const r = await harness.call('model', 'mixedStepVsAlone', prompts, 16, 7);
  expect(r.chunks).toBe(3);
  expect(r.mixedSteps).toBe(3);
  expect(r.identical).toEqual([true, true, true, true]);
  // Pages of 16: 9 + 7 = 16 tokens cached → 1 page; 20 + 7 = 27 → 2; 3 + 7 = 10 → 1; 45 + 7 = 52 → 4.
  expect(r.pagesHeld).toEqual([1, 2, 1, 4]);
});

test('speculative verify: logits at all K positions, and a rollback equal to a fresh prefill of the accepted prefix', async ({
  harness,
}) => {
  // 13 prompt tokens, then K = 11 drafted ones (not the model's own, so mostly rejected): two
  // verify chunks (8 + 3 rows), in pages of 8.
  const draft = prompt(11, 9);
  const r = await harness.call('model', 'verifyAndRollback', prompt(13), draft, 2, prompt(1, 5)[0]);
  expect(r.nextTokens).toBe(11);
  for (const [i, row] of r.rows.entries()) {
    expect(row.passed, `verify row ${i}: max rel err ${row.maxRelErr}`).toBe(true);
    expect(row.sameToken, `verify row ${i}`).toBe(true);
    expect(row.bitwiseAsDecode, `verify row ${i} against the same token decoded alone`).toBe(true);
  }
  // 13 tokens: 2 pages; + 11 = 24: 3 pages; rolled back to 15: 2 pages again, the third returned.
  expect([r.pagesBefore, r.pagesAfterVerify, r.pagesAfterRollback]).toEqual([2, 3, 2]);
  expect(r.lengthAfterRollback).toBe(15);
  expect(r.rollback.passed, `after rollback: max rel err ${r.rollback.maxRelErr}`).toBe(true);
  expect(r.rollback.sameToken).toBe(true);
});

test.describe('speculative decoding emits exactly plain greedy output', () => {
  // Each drafter over 64 tokens, built as the spec workload builds it, with the families the
  // autotuner picks here (what a spec run uses). Acceptance must be more than zero where the
  // drafter can be right, so the check is not passed by rejecting everything.
  test.beforeEach(async ({ harness }) => {
    test.setTimeout(180_000);
    await useFamilies(harness, 'autotuned');
  });
  for (const [drafter, k, promptClass, adaptive] of [
    ['ngram', 4, 'repetitive', false],
    ['ngram:1-3', 16, 'repetitive', false],
    ['oracle:0.7', 4, 'random', false],
    ['oracle:0.9', 9, 'random', true],
    ['truncated:1', 4, 'random', false],
    ['model:ci-tiny', 3, 'repetitive', false],
  ] as const) {
    test(`${drafter}, K = ${k}${adaptive ? ' (adaptive)' : ''}, ${promptClass} prompt`, async ({
      harness,
    }) => {
      const r = await harness.call(
        'model',
        'speculativeMatchesGreedy',
        drafter,
        k,
        promptClass,
        64,
        adaptive,
      );
      expect(r.tokens).toBe(64);
      expect(r.identical, `first mismatch at token ${r.firstMismatch}`).toBe(true);
      // The cache holds the prompt and every token but the last (still pending).
      expect(r.cacheLength).toBe(r.promptLength + 63);
      expect(r.steps).toBeLessThanOrEqual(63);
      expect(r.maxRows).toBeLessThanOrEqual(k + 1);
      if (drafter.startsWith('oracle')) expect(r.accepted).toBeGreaterThan(0);
      if (drafter.startsWith('ngram')) expect(r.drafted).toBeGreaterThan(0);
      // K = 9 and 16 verify in two chunks of the decode kernels.
      if (k > 8) expect(r.maxRows).toBeGreaterThan(8);
    });
  }
});

test('running out of KV pages through the model throws and changes nothing', async ({ harness }) => {
  const r = await harness.call('model', 'kvExhaustion');
  expect(r.prefillError).toMatchObject({ name: 'KvCacheExhaustedError', isKvError: true });
  expect(r.prefillError?.message).toContain('needs 1 more pages of 16 tokens but only 0 of 4 pages are free');
  expect(r.decodeError).toMatchObject({ name: 'KvCacheExhaustedError' });
  // All or nothing: a, which had room, did not grow either, and the pool is as it was.
  expect(r.after).toEqual(r.before);
  expect(r.bLength).toBe(0);
  expect(r.recovered).toBe(1);
});

test('KV types f16 and int8 and a sliding window end to end: logits against the CPU forward that stores K/V alike and masks beyond the window, chunked prefill, decode against recompute, pages held', async ({
  harness,
}) => {
  test.setTimeout(240_000);
  const WINDOW = 16;
  const cells = [
    { dtype: 'f16', window: undefined },
    { dtype: 'int8', window: undefined },
    { dtype: 'f32', window: WINDOW },
    { dtype: 'int8', window: WINDOW },
  ] as const;
  for (const { dtype, window } of cells) {
    for (const layout of [
      { mode: 'paged', pageSize: 8 },
      { mode: 'contiguous', pageSize: 16 },
    ] as const) {
      const what = `${dtype} window ${window ?? 'none'} ${layout.mode}`;
      // 40 prompt tokens, past the window of 16 already, then 6 decode steps.
      const r = await harness.call('model', 'kvCacheVsReference', dtype, window, prompt(40), 6, layout);
      expect(r.reference.passed, `${what}: ${JSON.stringify(r.reference)}`).toBe(true);
      expect(r.chunks.passed, `${what}: chunked`).toBe(true);
      expect(r.tokenMismatches, what).toEqual([]);
      expect(r.failedSteps, what).toEqual([]);
      // Past the window a paged sequence holds ⌈16 / 8⌉ + 1 pages at most; contiguous, its one slot.
      if (window && layout.mode === 'paged') expect(r.heldPages, what).toBeLessThanOrEqual(3);
      else expect(r.heldPages, what).toBe(layout.mode === 'paged' ? Math.ceil(r.length / 8) : 1);
    }
  }
});

test('a prefix hit after the window has passed the prefix, and copy-on-write of an int8 page', async ({
  harness,
}) => {
  const hit = await harness.call('model', 'windowPrefixHit', 16, 8, prompt(40), prompt(5, 3), 20);
  // 45 tokens in pages of 8: the 5 full pages of the shared 40-token prompt are hit.
  expect(hit.hit).toBe(40);
  expect(hit.heldByA).toBeLessThanOrEqual(3);
  expect(hit.passed, JSON.stringify(hit)).toBe(true);
  expect(hit.sameToken).toBe(true);
  const cow = await harness.call(
    'model',
    'sharedPrefix',
    prompt(13),
    prompt(5, 2),
    prompt(4, 3),
    6,
    8,
    'int8',
  );
  expect(cow.sharedPagesAfterFork).toBe(2);
  expect(cow.stillShared).toBe(1);
  expect(cow.identicalA).toBe(true);
  expect(cow.identicalB).toBe(true);
});
