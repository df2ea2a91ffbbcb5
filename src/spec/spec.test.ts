import { describe, expect, it } from 'vitest';
import { SpecError } from '../errors.ts';
import { kvCapacityTokens } from '../kv/cache.ts';
import { presetConfig } from '../model/config.ts';
import { fitToModel, fitToWidths } from './fit.ts';
import { engineNeeds } from './needs.ts';
import { buildSpec, specFromOptions } from './options.ts';
import { parseBenchSpec } from './schema.ts';

const preset = { kind: 'preset', preset: 'ci-tiny', seed: 0 } as const;

describe('specFromOptions', () => {
  it('turns the quick suite into a prefill sweep, a decode sweep and fused against unfused, with the defaults', () => {
    const spec = specFromOptions(preset, {});
    expect(spec.suite).toBe('quick');
    expect(spec.kv).toEqual({ mode: 'paged', pageSize: 16, dtype: 'f32', window: null });
    expect(spec.autotune).toBe(true);
    expect(spec.fuse).toBe(true);
    expect(spec.workloads).toEqual([
      { kind: 'prefill', lengths: [16, 32, 64, 128, 256], reps: 3, warmup: 1, profile: false },
      { kind: 'decode', depths: [16, 128, 512], gen: 16, batch: 1, reps: 3, warmup: 1, profile: false },
      // The suite's largest L and its first depth.
      { kind: 'fusion', length: 256, depth: 16, gen: 16, reps: 3, warmup: 1 },
    ]);
  });

  it('ends the quick, custom and full suites with the held-out table on a trained preset, and only there', () => {
    const trained = { kind: 'preset', preset: 'trained-4m', seed: 0 } as const;
    const kinds = (model: unknown, o: Parameters<typeof specFromOptions>[1]) =>
      specFromOptions(model, o).workloads.map((w) => w.kind);
    expect(kinds(preset, {})).toEqual(['prefill', 'decode', 'fusion']);
    expect(kinds(trained, {})).toEqual(['prefill', 'decode', 'fusion', 'tasks']);
    // The quick suite's sample is 64 prompt tokens a slice, the full suite's the formats suite's 768;
    // --task-tokens sets either.
    expect(specFromOptions(trained, {}).workloads[3]).toEqual({ kind: 'tasks', taskTokens: 64 });
    expect(specFromOptions(trained, { suite: 'full' }).workloads.at(-1)).toEqual({
      kind: 'tasks',
      taskTokens: 768,
    });
    expect(specFromOptions(trained, { prefill: [16], depths: [16] }).workloads.at(-1)).toEqual({
      kind: 'tasks',
      taskTokens: 64,
    });
    expect(specFromOptions(trained, { taskTokens: 0 }).workloads.at(-1)).toEqual({
      kind: 'tasks',
      taskTokens: 0,
    });
    // A suite of its own never gains it: the formats suite scores the held-out set itself.
    expect(kinds(trained, { suite: 'formats' })).toEqual(['formats']);
  });

  it('builds the model unfused with --no-fuse, and keeps the fusion workload (it measures both graphs)', () => {
    const spec = specFromOptions(preset, { fuse: false });
    expect(spec.fuse).toBe(false);
    expect(spec.workloads.map((w) => w.kind)).toEqual(['prefill', 'decode', 'fusion']);
    // A spec from before the option reads as the fused graph.
    const { fuse: _, ...old } = spec;
    expect(parseBenchSpec(old).fuse).toBe(true);
  });

  it('makes --suite fusion the fusion workload alone, at --prefill and --depth when given', () => {
    expect(specFromOptions(preset, { suite: 'fusion' })).toMatchObject({
      suite: 'fusion',
      workloads: [{ kind: 'fusion', length: 256, depth: 16, gen: 16, reps: 3, warmup: 1 }],
    });
    const custom = specFromOptions(preset, {
      suite: 'fusion',
      prefill: [64, 128],
      depths: [32],
      gen: 8,
      reps: 4,
    });
    expect(custom.suite).toBe('fusion');
    expect(custom.workloads).toEqual([{ kind: 'fusion', length: 64, depth: 32, gen: 8, reps: 4, warmup: 1 }]);
    // Explicit sweep values make the quick suite custom, without the fusion workload.
    expect(specFromOptions(preset, { prefill: [16] }).workloads.map((w) => w.kind)).toEqual([
      'prefill',
      'decode',
    ]);
  });

  it('fits the fusion workload to the model: a point past maxSeqLen drops the workload, with the reason', () => {
    const quick = specFromOptions(preset, {});
    const fitted = fitToModel(quick, 200);
    expect(fitted.spec.workloads.map((w) => w.kind)).toEqual(['prefill', 'decode']);
    expect(fitted.dropped.some((u) => u.kind === 'fusion' && u.option === 'prefill' && u.value === 256)).toBe(
      true,
    );
    // depth 190 + 16 generated tokens needs 205 positions.
    const deep = fitToModel(specFromOptions(preset, { suite: 'fusion', prefill: [16], depths: [190] }), 200);
    expect(deep.spec.workloads).toEqual([]);
    expect(deep.dropped.map((u) => [u.option, u.value])).toEqual([['depths', 190]]);
    expect(
      fitToModel(specFromOptions(preset, { suite: 'fusion', prefill: [16], depths: [185] }), 200).spec
        .workloads,
    ).toHaveLength(1);
    const needs = engineNeeds(
      specFromOptions(preset, { suite: 'fusion', prefill: [300], depths: [40], gen: 10 }),
    );
    expect(needs).toMatchObject({ model: true, maxPrompt: 300, maxContextTokens: 300, maxSequences: 1 });
  });

  it('makes the list custom when sweep values are given, and drops an empty sweep', () => {
    const spec = specFromOptions(preset, { suite: 'full', prefill: [7], depths: [], reps: 4 });
    expect(spec.suite).toBe('custom');
    expect(spec.workloads).toEqual([{ kind: 'prefill', lengths: [7], reps: 4, warmup: 1, profile: false }]);
  });

  it('makes --weights one format of the run, or with --suite formats the formats to sweep', () => {
    expect(specFromOptions(preset, { weights: ['int4'] }).weights).toBe('int4');
    expect(specFromOptions(preset, {}).weights).toBe('f32');
    const sweep = specFromOptions(preset, { suite: 'formats', weights: ['int8', 'f16'], prefill: [32] });
    // The run's own model stays f32: it is the sweep's reference.
    expect(sweep.weights).toBe('f32');
    expect(sweep.workloads).toEqual([
      {
        kind: 'formats',
        formats: ['int8', 'f16'],
        length: 32,
        depth: 64,
        gen: 16,
        quality: true,
        // The held-out budget of a trained model's task table (unused on seeded weights).
        taskTokens: 768,
        reps: 3,
        warmup: 1,
      },
    ]);
    expect(specFromOptions(preset, { suite: 'formats' }).workloads[0]).toMatchObject({
      formats: ['f32', 'f16', 'int8', 'int4', 'q8_0', 'q4_0', 'q4_k'],
    });
    const several = buildSpec(preset, { weights: ['int8', 'int4'] });
    expect(several.ok).toBe(false);
    if (!several.ok)
      expect(several.issues[0]).toMatchObject({ option: 'weights', message: /--suite formats/ });
    expect(buildSpec(preset, { suite: 'formats', weights: ['int8', 'int8'] }).ok).toBe(false);
  });

  it('refuses a format sweep point past maxSeqLen when typed, and sizes the engine for it', () => {
    const spec = specFromOptions(preset, { suite: 'formats', prefill: [300] });
    // A named suite drops what does not fit; the format sweep names its L and depth as the suite's own.
    const fitted = fitToModel(spec, 256);
    expect(fitted.dropped.map((d) => d.option)).toEqual(['prefill']);
    expect(fitted.spec.workloads).toEqual([]);
    expect(engineNeeds(specFromOptions(preset, { suite: 'formats' }))).toMatchObject({
      model: true,
      maxPrompt: 64,
      maxContextTokens: 64 + 16 - 1,
    });
  });

  it('makes --suite kernels the kernel suite alone', () => {
    const spec = specFromOptions(preset, { suite: 'kernels', prefill: [16] });
    expect(spec.workloads).toEqual([{ kind: 'kernels', reps: 3, warmup: 1 }]);
  });

  it('names the option at fault, with the list position', () => {
    const r = buildSpec(preset, { prefill: [16, 0], reps: 2, pageSize: 12 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => [i.option, i.index])).toEqual([
      ['prefill', 1],
      ['reps', undefined],
      ['pageSize', undefined],
    ]);
    expect(() => specFromOptions(preset, { pageSize: 12 })).toThrow(SpecError);
    expect(() => specFromOptions(preset, { pageSize: 12 })).toThrow('pageSize: must be one of 8, 16, 32');
  });

  it('refuses a list with nothing to measure', () => {
    const r = buildSpec(preset, { prefill: [], depths: [] });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0].message).toContain('nothing to measure');
  });
});

describe('fitToModel', () => {
  it('drops what a named suite cannot fit, with a reason per value', () => {
    // maxSeqLen 256: prefill 256 fits, decode depth 512 (+16 generated) does not, depth 128 does.
    const { spec, dropped, errors } = fitToModel(specFromOptions(preset, {}), 256);
    expect(errors).toEqual([]);
    expect(dropped.map((d) => [d.option, d.value])).toEqual([['depths', 512]]);
    expect(dropped[0].message).toBe("depth 512 + 16 generated tokens exceeds the model's maxSeqLen of 256");
    expect(spec.workloads[1]).toMatchObject({ kind: 'decode', depths: [16, 128] });
  });

  it('refuses values a person typed, rather than dropping them', () => {
    const { errors } = fitToModel(specFromOptions(preset, { prefill: [300], depths: [] }), 256);
    expect(errors.map((e) => e.message)).toEqual(["prompt length 300 exceeds the model's maxSeqLen of 256"]);
  });

  it('counts a decode at depth 0 as a one-token prompt', () => {
    // depth 0, gen 16: the prompt is 1 token, then 15 steps append 15: 16 tokens.
    const spec = specFromOptions(preset, { prefill: [], depths: [0], gen: 16 });
    expect(fitToModel(spec, 16).errors).toEqual([]);
    expect(fitToModel(spec, 15).errors).toHaveLength(1);
  });
});

describe('fitToWidths', () => {
  // ci-tiny's linear layers read rows of 128 (q, k, v, o, gate, up, the head) and 344 (down):
  // 344 = 10 · 32 + 24 is no whole number of 32-weight blocks, 128 none of 256.
  const tiny = presetConfig('ci-tiny');
  // trained-4m's rows are 256 and 768 = 3 · 256: every type fits.
  const trained = presetConfig('trained-4m');

  it("drops the GGUF types a named suite lists but the model's rows cannot hold, saying why", () => {
    const { spec, dropped, errors } = fitToWidths(specFromOptions(preset, { suite: 'formats' }), tiny);
    expect(errors).toEqual([]);
    expect(spec.workloads[0]).toMatchObject({ kind: 'formats', formats: ['f32', 'f16', 'int8', 'int4'] });
    expect(dropped).toEqual([
      'q8_0: Q8_0 stores each row as whole blocks of 32 weights, and this model has rows of 344 weights',
      'q4_0: Q4_0 stores each row as whole blocks of 32 weights, and this model has rows of 344 weights',
      'q4_k: Q4_K stores each row as whole blocks of 256 weights, and this model has rows of 128 and 344 weights',
    ]);
    const all = fitToWidths(specFromOptions(preset, { suite: 'formats' }), trained);
    expect(all.dropped).toEqual([]);
    expect(all.spec.workloads[0]).toMatchObject({
      formats: ['f32', 'f16', 'int8', 'int4', 'q8_0', 'q4_0', 'q4_k'],
    });
  });

  it("refuses a run's own format that does not fit, and a custom spec's sweep", () => {
    expect(fitToWidths(specFromOptions(preset, { weights: ['q4_k'] }), tiny).errors).toEqual([
      'q4_k: Q4_K stores each row as whole blocks of 256 weights, and this model has rows of 128 and 344 weights',
    ]);
    expect(fitToWidths(specFromOptions(preset, { weights: ['q4_k'] }), trained).errors).toEqual([]);
    const custom = {
      ...specFromOptions(preset, { suite: 'formats', weights: ['int8', 'q4_0'] }),
      suite: 'custom' as const,
    };
    expect(fitToWidths(custom, tiny).errors).toEqual([
      'q4_0: Q4_0 stores each row as whole blocks of 32 weights, and this model has rows of 344 weights',
    ]);
  });
});

describe('engine sizing', () => {
  it('sizes the KV cache for a whole batch at its deepest, paged and contiguous', () => {
    const spec = specFromOptions(preset, { prefill: [256], depths: [16, 512], gen: 16, batch: 4 });
    const needs = engineNeeds(spec);
    // Four sequences, each at most 512 + 15 tokens; the longest prompt 512.
    expect(needs).toEqual({
      maxPrompt: 512,
      maxSequences: 4,
      maxContextTokens: 4 * 527,
      maxBatch: 4,
      // The validation pass decodes one row; the batch four.
      gemvBatches: [1, 4],
      // The deepest decode step attends to 512 + 15 tokens: decode attention is tuned there.
      decodeContext: 527,
      model: true,
      kernels: true,
    });
    // Paged: the tokens plus one partly filled page each (pages of 16).
    expect(kvCapacityTokens('paged', 16, 1024, { sequences: 4, tokens: 2108 })).toBe(2108 + 64);
    // Contiguous: a whole maxSeqLen slot for each of the four, however short.
    expect(kvCapacityTokens('contiguous', 16, 1024, { sequences: 4, tokens: 2108 })).toBe(4096);
  });

  it('tunes the GEMV at one row and at a verify of K+1 rows for a speculative run', () => {
    expect(engineNeeds(specFromOptions(preset, { suite: 'spec', k: 4 })).gemvBatches).toEqual([1, 5]);
    // K = 12 verifies in chunks: 8 rows, then 5.
    expect(engineNeeds(specFromOptions(preset, { suite: 'spec', k: 12 })).gemvBatches).toEqual([1, 8]);
    // No drafters: only the curve, no loop to tune for.
    expect(engineNeeds(specFromOptions(preset, { suite: 'spec', drafters: [] })).gemvBatches).toEqual([1]);
  });

  it('needs no model for the kernel suite alone', () => {
    expect(engineNeeds(specFromOptions(preset, { suite: 'kernels' })).model).toBe(false);
  });

  it('the capacity suite is the capacity probe alone: no model, no tuned kernels', () => {
    const spec = specFromOptions(preset, { suite: 'capacity', pageSize: 32, poolMiB: 8 });
    expect(spec.suite).toBe('capacity');
    expect(spec.workloads).toEqual([
      {
        kind: 'capacity',
        poolMiB: 8,
        pageSize: 32,
        meanTokens: null,
        longShare: 0.2,
        longFactor: 4,
        seed: 0,
      },
    ]);
    const needs = engineNeeds(spec);
    expect(needs.model).toBe(false);
    expect(needs.kernels).toBe(false);
    expect(() => specFromOptions(preset, { suite: 'capacity', poolMiB: 0 })).toThrow(/poolMiB/);
  });
});
