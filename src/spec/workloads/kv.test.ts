import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../model/config.ts';
import { fitToModel, modelErrors } from '../fit.ts';
import { buildSpec, specFromOptions } from '../options.ts';
import { parseBenchSpec } from '../schema.ts';
import { type TaskQuality, taskVariant } from './formats.ts';
import { kvReport, kvResultTargets, kvTargets } from './kv-report.ts';
import type { KvCell, KvSection } from './kv-result.ts';
import { KvSectionSchema } from './kv-result.ts';

const preset = { kind: 'preset', preset: 'ci-tiny', seed: 0 } as const;

/** A cell with nothing measured but its key and bytes; the tests fill in what they judge. */
function cell(kvHeads: number, kvDtype: KvCell['kvDtype'], window: number | null, bytes: number): KvCell {
  return {
    kvHeads,
    kvDtype,
    window,
    bytesPerToken: bytes,
    allocatedBytesPerToken: bytes,
    pagesAt: [],
    maxContext: 0,
    maxSequences: 0,
    sequenceTokens: 256,
    decodeAttentionMs: [],
    tpotMs: [],
    prefillMs: 1,
    error: [],
  };
}

const allAgree = [
  { bucket: 'first', relErr: 1e-4, top1: 1, firstDivergence: null },
  { bucket: 'middle', relErr: 2e-4, top1: 1, firstDivergence: null },
  { bucket: 'last', relErr: 3e-4, top1: 1, firstDivergence: null },
] as const;

/**
 * ci-tiny's shape: 4 heads of 32, 2 layers. f32 MHA: 2 layers · 2 (K, V) · 4 heads · 32 · 4 bytes =
 * 2048 bytes per token; f16 1024; int8 2 · 2 · 4 · (32 + 4) = 576 = 0.28125 × f32, exactly the
 * bound (32 + 4) ÷ (4 · 32); MQA f32 512 = 1/4 of MHA.
 */
function section(): KvSection {
  return {
    model: 'ci-tiny',
    heads: 4,
    headDim: 32,
    layers: 2,
    pageSize: 16,
    maxSeqLen: 1024,
    poolBytes: 32 * 2 ** 20,
    prefillTokens: 128,
    errorContext: 1000,
    clocks: { decodeAttentionMs: 'gpu', tpotMs: 'wall', prefillMs: 'wall' },
    cells: [
      {
        ...cell(4, 'f32', null, 2048),
        pagesAt: [
          { depth: 64, pages: 4 },
          { depth: 256, pages: 16 },
        ],
        decodeAttentionMs: [
          { depth: 64, ms: 0.5 },
          { depth: 256, ms: 2 },
        ],
        tpotMs: [
          { depth: 64, ms: 3 },
          { depth: 256, ms: 4 },
        ],
        maxContext: 1024,
        maxSequences: 64,
      },
      { ...cell(4, 'f16', null, 1024), error: [...allAgree] },
      {
        ...cell(4, 'int8', null, 576),
        decodeAttentionMs: [
          { depth: 64, ms: 0.4 },
          { depth: 256, ms: 1.1 },
        ],
        error: [
          { bucket: 'first', relErr: 1e-2, top1: 1, firstDivergence: null },
          { bucket: 'middle', relErr: 2e-2, top1: 0.99, firstDivergence: 512 },
          { bucket: 'last', relErr: 4e-2, top1: 0.97, firstDivergence: 801 },
        ],
      },
      cell(1, 'f32', null, 512),
      {
        ...cell(4, 'f32', 64, 2048),
        pagesAt: [
          { depth: 64, pages: 4 },
          { depth: 256, pages: 5 },
        ],
        decodeAttentionMs: [
          { depth: 64, ms: 0.5 },
          { depth: 256, ms: 0.55 },
        ],
      },
    ],
  };
}

/** The targets by name: figure and met. */
function judged(s: KvSection) {
  return Object.fromEntries(kvTargets(s).map((t) => [t.name, [t.figure, t.met]]));
}

describe('kvTargets', () => {
  it('meets every target on a section that meets them, each figure the one worked out by hand', () => {
    const s = KvSectionSchema.parse(section());
    expect(judged(s)).toEqual({
      'f16 KV bytes per token against f32 (allocator)': [0.5, true],
      'int8 KV bytes per token against f32 (allocator, scales included)': [0.28125, true],
      'MQA KV bytes per token against MHA (allocator)': [0.25, true],
      'Window: pages one sequence holds at depth 4·W, beyond those at W': [1, true],
      'Window: decode attention time at depth 4·W against at W': [1.1, true],
      'int8 decode attention time at the longest depth against f32': [0.55, true],
      'f16 KV top-1 agreement with f32 KV, every part of the context': [1, true],
      'int8 KV error table filled (first, middle and last fifths)': [1, true],
    });
    // The int8 bound is ci-tiny's 0.281×; the MQA goal is 1/heads.
    const goals = kvTargets(s).map((t) => t.goal);
    expect(goals[1]).toBe('≤ 0.281× ((head_dim + 4) ÷ (4 · head_dim))');
    expect(goals[2]).toBe('= 1/4 (0.250×)');
  });

  it('misses each target a cell breaks, reporting the worst figure and where it came from', () => {
    const s = section();
    const [f32, f16, int8, mqa, windowed] = s.cells;
    s.cells = [
      f32,
      // 1040 bytes: f16 with 16 bytes of padding a token is not half of f32.
      { ...f16, allocatedBytesPerToken: 1040, error: [allAgree[0], { ...allAgree[1], top1: 0.995 }] },
      // 640 = 0.3125 × f32, over the bound; 1.4 ms = 0.7 × f32's at 256; the last fifth missing.
      {
        ...int8,
        allocatedBytesPerToken: 640,
        decodeAttentionMs: [{ depth: 256, ms: 1.4 }],
        error: int8.error.slice(0, 2),
      },
      { ...mqa, allocatedBytesPerToken: 600 },
      // Still growing past W: 4 pages at 64, 7 at 256; 1.3 ms against 1 ms.
      {
        ...windowed,
        pagesAt: [
          { depth: 64, pages: 4 },
          { depth: 256, pages: 7 },
        ],
        decodeAttentionMs: [
          { depth: 64, ms: 1 },
          { depth: 256, ms: 1.3 },
        ],
      },
    ];
    const t = judged(KvSectionSchema.parse(s));
    expect(Object.values(t).map(([, met]) => met)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(t['f16 KV bytes per token against f32 (allocator)'][0]).toBeCloseTo(1040 / 2048, 12);
    expect(t['int8 KV bytes per token against f32 (allocator, scales included)'][0]).toBe(0.3125);
    expect(t['MQA KV bytes per token against MHA (allocator)'][0]).toBeCloseTo(600 / 2048, 12);
    expect(t['Window: pages one sequence holds at depth 4·W, beyond those at W'][0]).toBe(3);
    expect(t['Window: decode attention time at depth 4·W against at W'][0]).toBeCloseTo(1.3, 12);
    expect(t['int8 decode attention time at the longest depth against f32'][0]).toBeCloseTo(0.7, 12);
    expect(t['f16 KV top-1 agreement with f32 KV, every part of the context'][0]).toBe(0.995);
    expect(t['int8 KV error table filled (first, middle and last fifths)'][0]).toBeCloseTo(2 / 3, 12);
    const note = kvTargets(s).find((x) => x.name.startsWith('Window: pages'))?.note;
    expect(note).toBe('MHA 4 · f32 · window 64: 7 pages at 256, 4 at 64');
  });

  it('judges nothing whose cells are missing, and says which', () => {
    const s = { ...section(), cells: [section().cells[0]] };
    const targets = kvTargets(s);
    expect(targets.map((t) => t.met)).toEqual(Array(8).fill(null));
    expect(targets.every((t) => t.figure === null && t.note.startsWith('no '))).toBe(true);
    expect(kvResultTargets(s)[0]).toEqual({
      name: 'f16 KV bytes per token against f32 (allocator)',
      target: '= 0.500×',
      reached: '–',
      met: null,
      note: 'no f16 cell with an f32 cell of the same KV heads and window',
    });
  });

  it('writes the reached figures in the result targets’ words', () => {
    const reached = kvResultTargets(section()).map((t) => t.reached);
    expect(reached[0]).toBe('0.500× (MHA 4 · f16 · full)');
    expect(reached[3]).toBe('1 page (MHA 4 · f32 · window 64: 5 pages at 256, 4 at 64)');
    expect(reached[6]).toBe('100.0 % (worst of 3: MHA 4 · f16 · full, first fifth)');
  });
});

describe('kvReport', () => {
  it('writes the cell table at the longest depth, the error by position and the targets', () => {
    const [cells, errors, targets] = kvReport(section());
    expect(cells).toContain(
      '| KV heads | KV type | window | bytes/token calc | bytes/token allocated | × f32 | max context | max sequences | prefill ms | decode attention ms @ 256 | TPOT ms @ 256 |',
    );
    expect(cells).toContain(
      '| 4 (MHA) | f32 | none | 2048 | 2048 | 1.000× | 1024 | 64 × 256 | 1.000 | 2.000 | 4.000 |',
    );
    expect(cells).toContain(
      '| 4 (MHA) | int8 | none | 576 | 576 | 0.281× | 0 | 0 × 256 | 1.000 | 1.100 | – |',
    );
    expect(cells).toContain('| 1 (MQA) | f32 | none | 512 | 512 | 1.000× | 0 | 0 × 256 | 1.000 | – | – |');
    expect(errors).toContain('| 4 | int8 | none | last | 4.00e-2 | 97.0 % | 801 |');
    expect(errors).toContain('| 4 | f16 | none | first | 1.00e-4 | 100.0 % | none |');
    expect(targets.filter((l) => l.endsWith('| yes |'))).toHaveLength(8);
  });
});

describe('--suite kv and the KV options', () => {
  it('builds the matrix from its lists; the run’s own model stays f32 without a window', () => {
    const spec = specFromOptions(preset, {
      suite: 'kv',
      kvHeads: [4, 2, 1],
      kvDtype: ['f32', 'f16', 'int8'],
      window: [null, 64],
      depths: [64, 256],
      prefill: [128],
      poolMiB: 16,
    });
    expect(spec.kv).toEqual({ mode: 'paged', pageSize: 16, dtype: 'f32', window: null });
    expect(spec.workloads).toEqual([
      {
        kind: 'kv',
        kvHeads: [4, 2, 1],
        kvDtypes: ['f32', 'f16', 'int8'],
        windows: [null, 64],
        depths: [64, 256],
        length: 128,
        poolMiB: 16,
        // Read only on a trained model (its task table), as the format sweep's.
        taskTokens: 768,
        reps: 3,
        warmup: 1,
      },
    ]);
    // What the runner chooses is left out, the pool among it (one f32 MHA context, not the capacity probe's default).
    expect(specFromOptions(preset, { suite: 'kv' }).workloads).toEqual([
      { kind: 'kv', taskTokens: 768, reps: 3, warmup: 1 },
    ]);
  });

  it('gives any other suite one KV type and one window, recorded in the spec', () => {
    const spec = specFromOptions(preset, { kvDtype: ['int8'], window: [128] });
    expect(spec.kv).toEqual({ mode: 'paged', pageSize: 16, dtype: 'int8', window: 128 });
    // A spec (or a result's) from before the options reads as f32 with full attention.
    const { kv, ...rest } = spec;
    expect(parseBenchSpec({ ...rest, kv: { mode: 'paged', pageSize: 16 } }).kv).toEqual({
      mode: 'paged',
      pageSize: 16,
      dtype: 'f32',
      window: null,
    });
  });

  it('rejects lists outside --suite kv and bad values, naming the flag', () => {
    const issues = (options: Parameters<typeof buildSpec>[1]) => {
      const r = buildSpec(preset, options);
      return r.ok ? [] : r.issues.map((i) => `${i.option}: ${i.message}`);
    };
    expect(issues({ kvDtype: ['f32', 'f16'] })).toEqual([
      'kvDtype: several KV types (--kv-dtype) make a sweep: add --suite kv, or give one type',
    ]);
    expect(issues({ window: [null, 64] })).toEqual([
      'window: several windows (--window) make a sweep: add --suite kv, or give one',
    ]);
    expect(issues({ kvHeads: [2] })).toEqual([
      'kvHeads: --kv-heads applies to --suite kv (the run itself keeps the model’s KV heads)',
    ]);
    expect(issues({ suite: 'kv', prefill: [64, 128] })).toEqual([
      'prefill: the kv suite times one prefill length (--prefill L)',
    ]);
    expect(issues({ window: [0] })).toHaveLength(1);
    expect(issues({ suite: 'kv', kvDtype: ['f16', 'f16'] })).toEqual(['kvDtype: a KV type is listed twice']);
  });

  it('checks windows and KV heads against the model, naming --window and --kv-heads', () => {
    const tiny = presetConfig('ci-tiny');
    expect(modelErrors(specFromOptions(preset, { window: [8] }), tiny)).toEqual([
      '--window 8 is shorter than one KV page of 16 tokens',
    ]);
    expect(modelErrors(specFromOptions(preset, { window: [1024] }), tiny)).toEqual([
      "--window 1024 is not shorter than the model's maxSeqLen of 1024: it would never slide",
    ]);
    expect(modelErrors(specFromOptions(preset, { window: [16] }), tiny)).toEqual([]);
    const matrix = specFromOptions(preset, { suite: 'kv', kvHeads: [4, 3, 1], window: [null, 8, 64] });
    expect(modelErrors(matrix, tiny)).toEqual([
      "--kv-heads 3 does not divide the model's 4 heads (query heads share KV heads in equal groups)",
      '--window 8 is shorter than one KV page of 16 tokens',
    ]);
  });

  it('drops the depths the model cannot hold (a named suite: with a warning)', () => {
    const spec = specFromOptions(preset, { suite: 'kv', depths: [256, 1023, 2000] });
    const fitted = fitToModel(spec, 1024);
    expect(fitted.spec.workloads).toMatchObject([{ kind: 'kv', depths: [256, 1023] }]);
    expect(fitted.dropped.map((u) => u.value)).toEqual([2000]);
  });
});

describe('the task table by KV cache', () => {
  const row = (dtype: 'f32' | 'int8', window: number | null, score: number): TaskQuality => ({
    format: 'f16',
    kv: { dtype, window },
    slice: 'recall-512',
    kind: 'recall',
    metric: 'exact match',
    cases: 40,
    score,
    score95: [0, 1],
    deltaPoints: dtype === 'f32' && window === null ? null : (score - 0.5) * 100,
    verdict: dtype === 'f32' && window === null ? null : score < 0.45 ? 'degraded' : 'acceptable',
    kld:
      dtype === 'f32' && window === null
        ? null
        : { positions: 40, mean: 0.1, median: 0.05, p99: 1, max: 2, sameTop: 0.9 },
  });

  it('names each row by its KV type and window, against f32 KV with full attention', () => {
    const rows = [row('f32', null, 0.5), row('int8', null, 0.5), row('f32', 64, 0.1)];
    const s = { ...section(), taskQuality: rows };
    expect(KvSectionSchema.parse(s).taskQuality).toHaveLength(3);
    const table = kvReport(s).find((t) => t[0].startsWith('**Task quality by slice**')) ?? [];
    expect(table[0]).toContain('f32 KV with full attention is the reference');
    expect(table[2]).toContain('| KV cache |');
    expect(table[2]).toContain('| Δ ref |');
    expect(table).toContain(
      '| recall-512 | exact match | f16, KV f32, window 64 | 40 | 10.0% | 0.0%–100.0% | -40.0 | degraded | – | 1.00e-1 | 5.00e-2 | 1.00e+0 | 90.0% |',
    );
    expect(taskVariant(rows[1])).toBe('f16, KV int8, full attention');
    // The format sweep's rows carry no KV: named by their format, f32 the reference.
    expect(taskVariant({ ...rows[0], kv: undefined, format: 'int4' })).toBe('int4');
  });
});
