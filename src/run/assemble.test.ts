import { describe, expect, it } from 'vitest';
import { chooseTimebase, kernelBreakdown, PointSamples } from '../measure/samples.ts';
import { formatSummary } from '../workloads/formats-section.ts';
import type { FusionRecord } from '../workloads/fusion-section.ts';
import { dispatchesPerLayer, fusionSummary } from '../workloads/fusion-section.ts';
import type { PassRecord } from '../workloads/workload.ts';
import { placeKernelRecord, placePass } from './assemble.ts';

const exact = { timestamps: true, quantumNs: null };
const roofs = { fmaGflops: 10, copyGBps: 2, dispatchUs: 10, submitUs: 300 };
const span = (label: string, ms: number) => ({ label, ms, ns: ms * 1e6 });

describe('the clock that places a point', () => {
  it('is the GPU where timestamps exist, are exact and every span was positive', () => {
    expect(chooseTimebase({ wallMs: [3, 4, 5], gpuMs: [1, 2, 3] }, exact)).toEqual({
      timebase: 'gpu',
      samplesMs: [1, 2, 3],
    });
  });

  it('is the wall clock, with the reason, when timestamps are quantized', () => {
    const t = chooseTimebase(
      { wallMs: [3, 4, 5], gpuMs: [1, 2, 3] },
      { timestamps: true, quantumNs: 100_000 },
    );
    expect(t).toEqual({
      timebase: 'wall',
      samplesMs: [3, 4, 5],
      note: 'GPU timestamps are quantized to 100 µs',
    });
  });

  it('treats a zero or negative span as no sample: the point falls back to wall time', () => {
    const s = new PointSamples(true);
    s.add(5, [span('a', 1), span('b', 2)]);
    s.add(6, [span('a', 1), { label: 'b', ms: 0, ns: 0 }]);
    s.add(7, [span('a', 1), span('b', 2)]);
    const r = s.result();
    expect(r.gpuMs).toBeNull();
    expect(r.wallMs).toEqual([5, 6, 7]);
    expect(r.gpuIssue).toContain('a GPU span of 0 ns (pass "b")');
    expect(chooseTimebase(r, exact)).toMatchObject({ timebase: 'wall', samplesMs: [5, 6, 7] });
  });

  it("sums a repetition's spans, and averages them over the steps a sample stands for", () => {
    const s = new PointSamples(true);
    // A generation of 4 steps: TPOT on the GPU is the mean step, (1 + 2 + 3 + 2) / 4 = 2.
    s.add(10, [span('s', 1), span('s', 2), span('s', 3), span('s', 2)], 4);
    expect(s.result()).toEqual({ wallMs: [10], gpuMs: [2] });
  });
});

describe('kernel breakdown', () => {
  it('is the median over profiled runs of each role per step, with the calls the engine recorded', () => {
    const cost = {
      flops: 0,
      bytes: 0,
      bytesAsImplemented: 0,
      dispatches: 3,
      kernels: [
        { role: 'rmsnorm' as const, flops: 0, bytes: 0, bytesAsImplemented: 0, dispatches: 2 },
        { role: 'lm head' as const, flops: 0, bytes: 0, bytesAsImplemented: 0, dispatches: 1 },
      ],
    };
    // Two profiled generations of 2 steps each. rmsnorm per step: run 1 (1+1+3+3)/2 = 4, run 2 (2+2+2+2)/2 = 4.
    const runs = [
      [
        span('rmsnorm', 1),
        span('rmsnorm', 1),
        span('lm head', 5),
        span('rmsnorm', 3),
        span('rmsnorm', 3),
        span('lm head', 7),
      ],
      [
        span('rmsnorm', 2),
        span('rmsnorm', 2),
        span('lm head', 1),
        span('rmsnorm', 2),
        span('rmsnorm', 2),
        span('lm head', 1),
      ],
    ];
    const b = kernelBreakdown(runs, 2, { rmsnorm: 2, 'lm head': 1 }, cost);
    // lm head per step: run 1 (5+7)/2 = 6, run 2 (1+1)/2 = 1; median of two = 3.5.
    expect(b).toEqual([
      { role: 'rmsnorm', medianMs: 4, calls: 2 },
      { role: 'lm head', medianMs: 3.5, calls: 1 },
    ]);
  });
});

describe('placing a pass', () => {
  const record: PassRecord = {
    type: 'pass',
    pass: 'decode',
    tokens: 1,
    depth: 16,
    batch: 2,
    reps: 3,
    samples: { wallMs: [20, 10, 30], gpuMs: [8, 4, 6] },
    latency: { ttftMs: [50, 60, 70], tpotMs: [20, 10, 30], itlMs: [10, 20, 30, 40] },
    cost: { flops: 2e6, bytes: 4e6, bytesAsImplemented: 5e6, dispatches: 40, kernels: [] },
    weightFormat: 'int4',
    kernels: [],
  };

  it('places by the GPU median and reports both clocks, tokens/s by the wall clock', () => {
    const p = placePass(record, roofs, exact, { mode: 'paged', pageSize: 16, dtype: 'f32', window: null });
    expect(p.timebase).toBe('gpu');
    expect([p.medianMs, p.wallMedianMs, p.gpuMedianMs]).toEqual([6, 20, 6]);
    expect(p.samplesMs).toEqual([8, 4, 6]);
    // Two sequences, one token each per TPOT of 20 ms: 100 tokens/s.
    expect(p.tokensPerSec).toBeCloseTo(100, 12);
    // 4 MB in 6 ms: 0.667 GB/s; floors: compute 0.2 ms, bandwidth 2 ms, overhead 40 · 10 µs = 0.4 ms (no submit on the GPU clock).
    expect(p.bound).toBe('bandwidth');
    expect(p.gbps).toBeCloseTo(4e6 / 6e6, 12);
    expect(p.predictedMs).toBeCloseTo(2 + 0.4, 12);
    expect(p.tpotMs).toEqual({ p50: 20, p95: 29, p99: 29.8 });
    expect(p.itlMs?.p50).toBe(25);
    expect(p.itlSamplesMs).toEqual([10, 20, 30, 40]);
    // Placement is by compulsory bytes; the bytes as implemented ride along.
    expect(p.bytesAsImplemented).toBe(5e6);
  });

  it('places a kernel whose launch outweighs its work as overhead-bound', () => {
    const k = placeKernelRecord(
      {
        type: 'kernel',
        name: 'residual add',
        variant: 'elementwise',
        shape: { M: 1, K: 128, N: 128 },
        samples: { wallMs: [0.5, 0.5, 0.5], gpuMs: [0.02, 0.02, 0.02] },
        cost: { flops: 128, bytes: 1536 },
      },
      roofs,
      exact,
    );
    // 1536 B at 2 GB/s is 0.77 µs; one dependent dispatch is 10 µs: overhead, at 10 / 20 = 50%.
    expect(k.bound).toBe('overhead');
    expect(k.roofPct).toBeCloseTo(50, 9);
  });
});

describe('the format sweep table', () => {
  const small = {
    vocabSize: 10,
    hiddenSize: 32,
    intermediateSize: 64,
    numLayers: 1,
    numHeads: 2,
    numKvHeads: 1,
    headDim: 16,
    ropeTheta: 10000,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: true,
    maxSeqLen: 64,
  };
  const pass = (weightFormat: 'f32' | 'int4', kind: 'prefill' | 'decode', ms: number[]): PassRecord => ({
    type: 'pass',
    pass: kind,
    tokens: kind === 'prefill' ? 8 : 1,
    depth: kind === 'prefill' ? 0 : 8,
    batch: 1,
    reps: 3,
    samples: { wallMs: ms, gpuMs: null },
    latency: kind === 'prefill' ? { ttftMs: ms } : { ttftMs: ms, tpotMs: ms, itlMs: ms },
    cost: {
      flops: 1e6,
      bytes: weightFormat === 'f32' ? 8e5 : 2e5,
      bytesAsImplemented: 0,
      dispatches: 20,
      kernels: [],
    },
    kernels: [],
    weightFormat,
  });
  it('reads each format’s TPOT and prefill medians and divides by f32’s', () => {
    const kv = { mode: 'paged', pageSize: 16, dtype: 'f32', window: null } as const;
    const points = [
      pass('f32', 'prefill', [40, 50, 60]),
      pass('f32', 'decode', [10, 12, 14]),
      pass('int4', 'prefill', [45, 55, 65]),
      pass('int4', 'decode', [3, 4, 5]),
    ].map((r) => placePass(r, roofs, exact, kv));
    const rows = formatSummary(points, small);
    expect(rows.map((r) => r.format)).toEqual(['f32', 'int4']);
    const [f32, int4] = rows;
    expect(int4.tpotMs).toBe(4);
    expect(int4.tpotRatio).toBeCloseTo(4 / 12, 12);
    expect(int4.tokensPerSec).toBeCloseTo(250, 12);
    expect(int4.prefillRatio).toBeCloseTo(55 / 50, 12);
    expect(int4.decodeBytesPerToken).toBe(2e5);
    expect(f32.tpotRatio).toBe(1);
    // Linear weights by hand: q 32×32, k and v 16×32, o 32×32, gate and up 64×32, down 32×64 and
    // the tied head 10×32. f32: 4 B a weight. int4: a row of K = 32 is one group (16 B + a 4 B
    // scale); down's K = 64 is two.
    const rowsOf32 = 32 + 16 + 16 + 32 + 64 + 64 + 10;
    expect(f32.linearBytes).toBe(4 * (rowsOf32 * 32 + 32 * 64));
    expect(int4.linearBytes).toBe(20 * rowsOf32 + 40 * 32);
  });
});

describe('the fusion table', () => {
  const kv = { mode: 'paged', pageSize: 16, dtype: 'f32', window: null } as const;
  const pass = (
    graph: 'fused' | 'unfused' | undefined,
    kind: 'prefill' | 'decode',
    ms: number[],
  ): PassRecord => ({
    type: 'pass',
    pass: kind,
    tokens: kind === 'prefill' ? 256 : 1,
    depth: kind === 'prefill' ? 0 : 16,
    batch: 1,
    reps: 3,
    samples: { wallMs: ms, gpuMs: null },
    latency: kind === 'prefill' ? { ttftMs: ms } : { ttftMs: ms, tpotMs: ms, itlMs: ms },
    cost: { flops: 1e6, bytes: 1e5, bytesAsImplemented: 0, dispatches: 20, kernels: [] },
    kernels: [],
    weightFormat: 'f32',
    ...(graph ? { graph } : {}),
  });
  // What the engine records for a 2-layer model: unfused, 16 per layer plus the embedding, the
  // final norm, the LM head and argmax; fused, 6 per layer plus the embedding, LM head and argmax.
  const unfusedCalls = {
    embedding: 1,
    rmsnorm: 5,
    'qkv proj': 6,
    rope: 4,
    'kv write': 2,
    attention: 2,
    'o proj': 2,
    'residual add': 4,
    'gate/up proj': 4,
    swiglu: 2,
    'down proj': 2,
    'lm head': 1,
    argmax: 1,
  };
  const fusedCalls = {
    embedding: 1,
    'qkv proj': 2,
    'rope + kv write': 2,
    attention: 2,
    'o proj': 2,
    'gate/up proj': 2,
    'down proj': 2,
    'lm head': 1,
    argmax: 1,
  };
  const record = (graph: 'fused' | 'unfused', calls: Record<string, number>): FusionRecord => ({
    type: 'fusion',
    graph,
    fused: graph === 'fused',
    layers: 2,
    prefill: { tokens: 256, dispatches: calls },
    decode: { depth: 16, dispatches: calls },
  });

  it('counts dispatches per layer from the recorded roles, without those outside the layers', () => {
    expect(dispatchesPerLayer(unfusedCalls, 2, false)).toEqual({ total: 36, perLayer: 16 });
    expect(dispatchesPerLayer(fusedCalls, 2, true)).toEqual({ total: 15, perLayer: 6 });
    // A role the engine did not record counts as none; an uneven count is not rounded away.
    expect(dispatchesPerLayer({ embedding: 1, 'qkv proj': 3, 'lm head': 1 }, 2, true)).toEqual({
      total: 5,
      perLayer: 1.5,
    });
  });

  it('reads each graph’s TTFT and TPOT p50 and divides by the unfused graph’s', () => {
    const points = [
      // The sweep's own points carry no graph and are not read.
      pass(undefined, 'decode', [1, 1, 1]),
      pass('fused', 'prefill', [300, 320, 400]),
      pass('fused', 'decode', [6, 7, 9]),
      pass('unfused', 'prefill', [380, 400, 410]),
      pass('unfused', 'decode', [9, 10, 30]),
    ].map((r) => placePass(r, roofs, exact, kv));
    expect(points.map((p) => p.graph)).toEqual([undefined, 'fused', 'fused', 'unfused', 'unfused']);
    const rows = fusionSummary(points, [record('fused', fusedCalls), record('unfused', unfusedCalls)]);
    expect(rows).toEqual([
      {
        graph: 'fused',
        fused: true,
        prefillDispatches: 15,
        decodeDispatches: 15,
        prefillPerLayer: 6,
        decodePerLayer: 6,
        prefillTokens: 256,
        decodeDepth: 16,
        prefillMs: 320,
        tpotMs: 7,
        prefillRatio: 320 / 400,
        tpotRatio: 7 / 10,
      },
      {
        graph: 'unfused',
        fused: false,
        prefillDispatches: 36,
        decodeDispatches: 36,
        prefillPerLayer: 16,
        decodePerLayer: 16,
        prefillTokens: 256,
        decodeDepth: 16,
        prefillMs: 400,
        tpotMs: 10,
        prefillRatio: 1,
        tpotRatio: 1,
      },
    ]);
  });

  it('has no ratio without an unfused row, and leaves out a graph without both points', () => {
    const points = [pass('fused', 'prefill', [3, 3, 3]), pass('fused', 'decode', [1, 2, 3])].map((r) =>
      placePass(r, roofs, exact, kv),
    );
    const rows = fusionSummary(points, [record('fused', fusedCalls), record('unfused', unfusedCalls)]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ graph: 'fused', tpotMs: 2, tpotRatio: null, prefillRatio: null });
  });
});
