import { describe, expect, it } from 'vitest';
import { BenchResultSchema } from '../src/results/schema.ts';
import { slowdown, summarize } from '../src/serve/metrics.ts';
import { BATCH_SIZES } from '../src/spec/workloads/decode.ts';
import { QUALITY_SLICES } from '../src/spec/workloads/formats.ts';
import { curveAt, kneeOf, predictedSpeedup } from '../src/speculative/predict.ts';
import { makeBatchScalingResult, makeFormatsResult, makeServeResult, makeSpecResult } from './fixtures.ts';

describe('makeSpecResult', () => {
  const r = makeSpecResult();
  const s = r.speculative;

  it('is a valid result of the spec suite, as an imported file would be', () => {
    const parsed = BenchResultSchema.safeParse(JSON.parse(JSON.stringify(r)));
    expect(parsed.success).toBe(true);
    expect(r.spec.suite).toBe('spec');
    expect(r.spec.workloads.map((w) => w.kind)).toEqual(['spec']);
    expect(r.points).toEqual([]);
  });

  it('has the curve of the README ratios, its knee, and one run per drafter and prompt class', () => {
    if (!s) throw new Error('no speculative section');
    const at64 = s.verifyCurve.filter((p) => p.depth === 64);
    expect(at64.map((p) => p.k)).toEqual([1, 2, 4, 8, 16]);
    expect(at64.map((p) => Number(p.ratio.toFixed(2)))).toEqual([1.02, 1.1, 1.3, 1.6, 3.1]);
    // Each larger verify does more work on nearly the same bytes: it slides right on the roofline.
    for (let i = 1; i < at64.length; i++) expect(at64[i].intensity).toBeGreaterThan(at64[i - 1].intensity);
    expect(kneeOf(s.verifyCurve, s.kneeRatio)).toEqual({ knee: s.knee, byDepth: s.kneeByDepth });
    expect(s.knee).toBe(4);
    expect(s.runs.map((run) => `${run.drafter} ${run.promptClass}`)).toEqual([
      'ngram repetitive',
      'ngram random',
      'oracle:0.8 repetitive',
      'oracle:0.8 random',
      'truncated:1 repetitive',
      'truncated:1 random',
    ]);
    expect(s.runs.filter((run) => run.synthetic).map((run) => run.drafter)).toEqual([
      'oracle:0.8',
      'oracle:0.8',
    ]);
  });

  it('keeps each run consistent: rates from counts, speed-up from TPOTs, prediction from the formula', () => {
    for (const run of s?.runs ?? []) {
      expect(run.acceptanceRate).toBeCloseTo(run.accepted / run.drafted, 12);
      expect(run.meanAcceptanceLength).toBeCloseTo(1 + run.accepted / run.steps, 12);
      expect(run.speedup).toBeCloseTo(run.baselineTpotMs / run.tpotMs, 12);
      expect(run.perPosition).toHaveLength(run.k);
      const at = curveAt(s?.verifyCurve ?? [], run.k + 1, run.promptTokens + run.tokens / 2);
      expect(at).not.toBeNull();
      if (at) {
        expect(run.predictedSpeedup).toBeCloseTo(
          predictedSpeedup({ meanAcceptanceLength: run.meanAcceptanceLength, draftMs: run.draftMs, ...at }),
          12,
        );
      }
    }
  });
});

describe('makeServeResult', () => {
  const r = makeServeResult();
  const runs = r.serve?.runs ?? [];

  it('is a valid result of the serve suite, as an imported file would be', () => {
    for (const x of [r, makeServeResult({ prefixCache: true }), makeServeResult({ sweep: true })]) {
      expect(BenchResultSchema.safeParse(JSON.parse(JSON.stringify(x))).success).toBe(true);
      expect(x.spec.suite).toBe('serve');
      expect(x.spec.workloads.map((w) => w.kind)).toEqual(['serve']);
      expect(x.points).toEqual([]);
    }
  });

  it('has a calibration and the two A/B arms on one trace of 20 requests of the default mix', () => {
    expect(runs.map((x) => `${x.experiment} ${x.label}`)).toEqual([
      'calibration saturation (calibration)',
      'ab continuous',
      'ab static',
    ]);
    const [, continuous, batch] = runs;
    expect(continuous.requests.map((q) => [q.id, q.arrivalMs, q.promptTokens])).toEqual(
      batch.requests.map((q) => [q.id, q.arrivalMs, q.promptTokens]),
    );
    const classes = (x: typeof continuous) => x.requests.map((q) => q.class).sort();
    expect(classes(continuous).filter((c) => c === 'short')).toHaveLength(12);
    expect(classes(continuous).filter((c) => c === 'rag')).toHaveLength(5);
    expect(classes(continuous).filter((c) => c === 'long-gen')).toHaveLength(3);
    // The A/B arms' arrival is 90% of what the calibration reached.
    expect(continuous.arrival.rateRps).toBeCloseTo(0.9 * runs[0].summary.requestsPerSec, 9);
  });

  it('tells the A/B story: static batching queues short requests; one preempted stay in continuous', () => {
    const [, continuous, batch] = runs;
    expect(continuous.summary.outputTokensPerSec).toBeGreaterThan(batch.summary.outputTokensPerSec);
    expect(continuous.byClass.short.ttftMs?.p95 ?? 0).toBeLessThan(
      (batch.byClass.short.ttftMs?.p95 ?? 0) / 3,
    );
    expect(continuous.slots.filter((s) => s.end === 'preempted')).toHaveLength(1);
    expect(continuous.summary.preemptions).toBe(1);
    expect(batch.summary.preemptions).toBe(0);
    // Static batching's rule: nothing starts while a batch is in flight, so every stay of a batch
    // starts at one time, after the previous batch's last stay ended.
    const starts = [...new Set(batch.slots.map((s) => s.startMs))].sort((a, b) => a - b);
    for (let i = 1; i < starts.length; i++) {
      const previous = batch.slots.filter((s) => s.startMs === starts[i - 1]);
      expect(Math.max(...previous.map((s) => s.endMs))).toBeLessThanOrEqual(starts[i]);
    }
  });

  it('keeps every figure consistent with its requests, by the workload’s own definitions', () => {
    for (const run of runs) {
      expect(run.summary).toEqual(summarize(run.requests, { durationMs: run.durationMs, slo: run.slo }));
      expect(run.timeline).toHaveLength(run.steps);
      for (const p of run.timeline) expect(p.kvUsedPages).toBeLessThanOrEqual(p.kvTotalPages);
      for (const s of run.slots) expect(s.slot).toBeLessThan(run.maxBatch);
    }
    for (const run of runs.filter((x) => x.experiment === 'ab')) {
      expect(run.identical).toEqual({ checked: 20, mismatches: 0, firstMismatches: [] });
      expect(run.slowdown).toEqual(slowdown(run.requests.filter((q) => q.class === 'short')));
    }
  });

  it('has the prefix-cache arms and the rate sweep in its variants', () => {
    const cached = makeServeResult({ prefixCache: true }).serve?.runs ?? [];
    expect(cached.map((x) => x.label)).toEqual([
      'saturation (calibration)',
      'continuous, prefix cache off',
      'continuous, prefix cache on',
      'static, prefix cache off',
      'static, prefix cache on',
    ]);
    const [, off, on] = cached;
    expect(on.summary.prefixHitRate).toBeGreaterThan(0.2);
    expect(on.summary.prefillTokensComputed).toBeLessThan(0.8 * off.summary.prefillTokensComputed);
    const sweep = makeServeResult({ sweep: true }).serve?.sweep;
    expect(sweep?.points.map((p) => p.label)).toEqual([
      'synchronous',
      'saturating',
      '3.82 req/s',
      '4.09 req/s',
      '4.36 req/s',
    ]);
    expect(sweep?.points.map((p) => p.meetsSlo)).toEqual([true, false, true, true, true]);
    expect(sweep?.maxRateMeetingSlo).toBeCloseTo(4.36, 2);
  });
});

describe('makeBatchScalingResult', () => {
  it('is a valid batch-suite result with one B-scaling point per batch size', () => {
    const r = makeBatchScalingResult();
    expect(BenchResultSchema.safeParse(JSON.parse(JSON.stringify(r))).success).toBe(true);
    expect(r.spec.suite).toBe('batch');
    expect(r.batchScaling?.map((p) => p.batch)).toEqual([...BATCH_SIZES]);
    for (const p of r.batchScaling ?? []) {
      expect(p.tokensPerSec).toBeCloseTo((p.batch * 1000) / p.stepMs, 9);
      expect(p.ratio).toBeGreaterThan(1);
    }
  });
});

describe('makeFormatsResult', () => {
  const r = makeFormatsResult();
  const formats = r.formats ?? [];

  it('is a valid result of the formats suite, as an imported file would be', () => {
    for (const x of [r, makeFormatsResult(['int8'])]) {
      expect(BenchResultSchema.safeParse(JSON.parse(JSON.stringify(x))).success).toBe(true);
      expect(x.spec.suite).toBe('formats');
      expect(x.spec.workloads.map((w) => w.kind)).toEqual(['formats']);
    }
    // f32 is always measured: it is the baseline of every ratio and the reference of every error.
    const narrowed = makeFormatsResult(['int8']);
    expect(narrowed.formats?.map((f) => f.format)).toEqual(['f32', 'int8']);
    expect(narrowed.quality?.map((q) => q.format)).toEqual(Array(QUALITY_SLICES.length).fill('int8'));
  });

  it('has a prefill and a decode point per format, each carrying its format', () => {
    expect(r.points.map((p) => `${p.weightFormat} ${p.pass}`)).toEqual([
      'f32 prefill',
      'f32 decode',
      'f16 prefill',
      'f16 decode',
      'int8 prefill',
      'int8 decode',
      'int4 prefill',
      'int4 decode',
    ]);
  });

  it('reads its table off the points: fewer bytes, a shorter TPOT, but less than the bytes fell', () => {
    expect(formats.map((f) => f.format)).toEqual(['f32', 'f16', 'int8', 'int4']);
    const f32 = formats[0];
    for (const f of formats) {
      const decode = r.points.find((p) => p.weightFormat === f.format && p.pass === 'decode');
      expect(f.decodeBytesPerToken).toBe(decode?.bytes);
      expect(f.tpotMs).toBe(decode?.tpotMs?.p50);
      expect(f.tpotRatio).toBeCloseTo(f.tpotMs / f32.tpotMs, 12);
      expect(f.tokensPerSec).toBeCloseTo(1000 / f.tpotMs, 9);
    }
    for (let i = 1; i < formats.length; i++) {
      expect(formats[i].decodeBytesPerToken).toBeLessThan(formats[i - 1].decodeBytesPerToken);
      expect(formats[i].tpotMs).toBeLessThan(formats[i - 1].tpotMs);
      // Launches and submits do not shrink with the weights: the time falls by less than the bytes.
      expect(formats[i].tpotMs / f32.tpotMs).toBeGreaterThan(
        formats[i].decodeBytesPerToken / f32.decodeBytesPerToken,
      );
    }
    // f16 halves the linear weights; int8 and int4 add an f32 scale per group of 32.
    expect(formats[1].linearBytes).toBe(f32.linearBytes / 2);
    expect(formats[2].linearBytes).toBeCloseTo((f32.linearBytes / 4) * (1 + 4 / 32), -4);
  });

  it('has every quantized format on every slice, with whole counts behind top-1 and divergence', () => {
    const rows = r.quality ?? [];
    expect(rows.map((q) => `${q.format} ${q.slice}`)).toEqual(
      ['f16', 'int8', 'int4'].flatMap((f) => QUALITY_SLICES.map((s) => `${f} ${s}`)),
    );
    for (const q of rows) {
      const distributions = q.prompts * q.steps;
      const flips = Math.round((1 - q.top1Agreement) * distributions);
      expect(q.top1Agreement).toBeCloseTo((distributions - flips) / distributions, 12);
      expect(q.promptTokens).toHaveLength(q.prompts);
      // Greedy output leaves f32's exactly when some argmax flipped, at a step of the slice.
      expect(q.divergenceStep === null).toBe(flips === 0);
      if (q.divergenceStep !== null) expect(q.divergenceStep).toBeLessThan(distributions);
    }
    // The error grows as the format narrows, on every slice.
    for (const slice of QUALITY_SLICES) {
      const errs = rows.filter((q) => q.slice === slice).map((q) => q.relErr);
      expect(errs).toEqual([...errs].sort((a, b) => a - b));
    }
  });
});
