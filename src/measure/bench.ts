import { ResultValidationError, SpecError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import { PipelineCache } from '../gpu/pipelines.ts';
import { GpuProfiler, type Span, type Timing, timerQuantumNs } from '../gpu/profiler.ts';
import { DEFAULT_VARIANTS, type KernelVariants } from '../kernels/variants.ts';
import { presetConfig } from '../model/config.ts';
import { Model } from '../model/forward.ts';
import { compare, referenceForward } from '../model/reference.ts';
import { type LoadedModel, loadModel } from '../model/source.ts';
import { LOGITS_MAX_REL_ERR } from '../model/verify.ts';
import { parameterCount } from '../model/weights.ts';
import { type BenchResult, BenchResultSchema, type Point, SCHEMA_VERSION } from '../results/schema.ts';
import { autotune } from './autotune.ts';
import { decodeCost, type PassCost, prefillCost } from './cost.ts';
import { runKernelSuite } from './kernel-suite.ts';
import { bestPeaks, measurePeaks, type Peaks } from './peaks.ts';
import { placeKernel, placeOnRoofline } from './roofline.ts';
import type { BenchSpec } from './spec.ts';
import { percentile, percentiles, summarize } from './stats.ts';
import { evaluateTargets } from './targets.ts';
import { loadTuning, saveTuning } from './tuning-cache.ts';

/** Sent after every phase and point, so a UI or CLI can show progress and draw points as they land. */
export interface Progress {
  phase: 'peaks' | 'model' | 'validate' | 'prefill' | 'decode' | 'kernels' | 'done';
  /** Points finished, of `total`. */
  done: number;
  total: number;
  label: string;
  elapsedMs: number;
  /** Estimated time left, from the points measured so far; null before the first. */
  etaMs: number | null;
  point?: Point;
  /** The measured roofs, once known, so a live roofline can draw them before the run ends. */
  peaks?: Peaks;
}

export interface RunEnvironment {
  userAgent: string;
  browser: string;
  crossOriginIsolated: boolean;
  toolVersion: string;
}

export interface RunOptions {
  onProgress?: (p: Progress) => void;
  /** Polled between repetitions; when true the run stops and returns what it finished. */
  shouldStop?: () => boolean;
}

class Cancelled extends Error {}

/** Deterministic prompt tokens, different per sequence, so no two prompts share a prefix by accident. */
function promptTokens(n: number, vocab: number, salt: number): number[] {
  return Array.from({ length: n }, (_, i) => (i * 7919 + salt * 104729 + 13) % vocab);
}

const sumMs = (spans: readonly Span[]) => spans.reduce((a, s) => a + s.ms, 0);

/** Median GPU time per kernel role over several profiled passes, joined with the cost model's counts. */
function kernelBreakdown(profiled: Span[][], cost: PassCost): Point['kernels'] {
  if (profiled.length === 0 || profiled[0].length === 0) return [];
  return cost.kernels.map((k) => {
    const perRun = profiled.map((spans) =>
      spans.filter((s) => s.label === k.role).reduce((a, s) => a + s.ms, 0),
    );
    return {
      name: k.role,
      medianMs: percentile(perRun, 50),
      flops: k.flops,
      bytes: k.bytes,
      calls: k.dispatches,
    };
  });
}

/** Average cost of several passes (decode steps at growing depths). */
function meanCost(costs: PassCost[]): PassCost {
  const n = costs.length;
  const first = costs[0];
  return {
    flops: costs.reduce((a, c) => a + c.flops, 0) / n,
    bytes: costs.reduce((a, c) => a + c.bytes, 0) / n,
    dispatches: first.dispatches,
    kernels: first.kernels.map((k, i) => ({
      ...k,
      flops: costs.reduce((a, c) => a + c.kernels[i].flops, 0) / n,
      bytes: costs.reduce((a, c) => a + c.kernels[i].bytes, 0) / n,
    })),
  };
}

/** Drops sweep values the model cannot hold; for a named suite with a warning, for explicit values with an error. */
function fitSweeps(spec: BenchSpec, maxSeqLen: number, warnings: string[]) {
  const fits = (need: number) => need <= maxSeqLen;
  const prefill = spec.prefill.filter((L) => fits(L));
  const depths = spec.depths.filter((d) => fits(d + spec.gen));
  const droppedL = spec.prefill.filter((L) => !fits(L));
  const droppedD = spec.depths.filter((d) => !fits(d + spec.gen));
  if (droppedL.length + droppedD.length > 0) {
    const what = [
      droppedL.length ? `prefill lengths ${droppedL.join(', ')}` : '',
      droppedD.length ? `decode depths ${droppedD.join(', ')} (+${spec.gen} generated)` : '',
    ]
      .filter(Boolean)
      .join(' and ');
    if (spec.suite === 'custom') throw new SpecError(`${what} exceed the model's maxSeqLen of ${maxSeqLen}`);
    warnings.push(`Skipped ${what}: beyond the model's maxSeqLen of ${maxSeqLen}.`);
  }
  return { prefill, depths };
}

/**
 * Runs a benchmark: measures the roofs, builds and validates the model against the CPU reference,
 * then sweeps prefill over prompt lengths and decode over context depths. Every point is placed on
 * the roofline. A cancel or a lost device ends the run early with its finished points kept.
 */
export async function runBench(gpu: Gpu, spec: BenchSpec, env: RunEnvironment, options: RunOptions = {}) {
  const t0 = performance.now();
  const warnings: string[] = [];
  const points: Point[] = [];
  const allSpans: Span[] = [];
  const latency = { ttft: [] as number[], tpot: [] as number[], itl: [] as number[], e2e: [] as number[] };
  let done = 0;
  let total = spec.prefill.length + spec.depths.length;
  const report = (phase: Progress['phase'], label: string, point?: Point) => {
    const elapsedMs = performance.now() - t0;
    const etaMs = done > 0 ? ((performance.now() - pointsStart) / done) * (total - done) : null;
    options.onProgress?.({ phase, done, total, label, elapsedMs, etaMs, point, peaks: measuredPeaks });
  };
  let pointsStart = t0;
  let measuredPeaks: Peaks | undefined;
  const checkStop = () => {
    if (options.shouldStop?.()) throw new Cancelled('Cancelled by the user');
  };

  if (gpu.adapter.isFallbackAdapter) {
    warnings.push('Fallback (software) adapter: these numbers measure a CPU emulation, not a GPU.');
  }
  if (!gpu.hasTimestamps)
    warnings.push('No timestamp-query: GPU times are unavailable, only wall-clock times.');

  report('peaks', 'Measuring the roofs (FMA, copy bandwidth, dispatch and submit overhead)');
  const peaks: Peaks = await measurePeaks(gpu, new PipelineCache(gpu));
  measuredPeaks = peaks;

  report('model', 'Loading and compiling the model');
  const tLoad = performance.now();
  // The kernel suite needs only the shapes: a preset's config, without generating its weights.
  const loaded: LoadedModel =
    spec.suite === 'kernels' && spec.model.kind === 'preset'
      ? {
          name: spec.model.preset,
          weights: { config: presetConfig(spec.model.preset), tensors: new Map() },
          warnings: [],
        }
      : await loadModel(spec.model);
  const loadMs = performance.now() - tLoad;
  warnings.push(...loaded.warnings);
  const config = loaded.weights.config;
  const sweeps = fitSweeps(spec, config.maxSeqLen, warnings);
  const weightBytes = parameterCount(config) * 4;
  total = sweeps.prefill.length + sweeps.depths.length;
  const maxPrefill = Math.max(8, ...sweeps.prefill);
  const maxDecode = Math.max(0, ...sweeps.depths.map((d) => d + spec.gen));
  // Room for the largest prompt or a whole batch at the deepest context, plus a page per sequence.
  const capacityTokens = Math.max(maxPrefill, spec.batch * maxDecode) + 2 * spec.batch * spec.pageSize + 64;
  const pipelines = new PipelineCache(gpu);
  let tuning: BenchResult['tuning'];
  let variants: KernelVariants = DEFAULT_VARIANTS;
  if (spec.autotune) {
    report('model', 'Autotuning: validating and timing each kernel family on this device');
    const key = JSON.stringify([
      gpu.adapter,
      env.browser,
      config.hiddenSize,
      config.intermediateSize,
      spec.batch,
    ]);
    const cached = await loadTuning(key);
    const tuned = cached ?? (await autotune(gpu, pipelines, config, spec.batch));
    if (!cached) await saveTuning(key, tuned);
    variants = tuned.variants;
    tuning = { enabled: true, cached: Boolean(cached), searchMs: tuned.searchMs, choices: tuned.choices };
  } else {
    tuning = { enabled: false, cached: false, searchMs: 0, choices: [] };
  }
  let status: BenchResult['status'] = 'complete';
  let error: string | undefined;
  const validation: BenchResult['validation'] = { maxAbsErr: 0, maxRelErr: 0, passed: false, checks: [] };
  let kernelPoints: BenchResult['kernelPoints'];
  if (spec.suite === 'kernels') {
    pointsStart = performance.now();
    try {
      const suite = await runKernelSuite(gpu, pipelines, config, variants, peaks, {
        shouldStop: options.shouldStop,
        onProgress: (p) => {
          done = p.done;
          total = p.total;
          report('kernels', p.label);
        },
      });
      kernelPoints = suite.points;
      if (suite.skipped.length > 0)
        warnings.push(`Skipped, over this device's buffer limits: ${suite.skipped.join('; ')}`);
      validation.checks.push({
        name: `${suite.checked} kernel shapes checked against the CPU reference before timing`,
        maxAbsErr: 0,
        maxRelErr: 0,
        passed: suite.failures.length === 0,
      });
      validation.passed = suite.failures.length === 0;
      if (!validation.passed) throw new Error(`Kernel validation failed: ${suite.failures.join('; ')}`);
      if (options.shouldStop?.()) throw new Cancelled('Cancelled by the user');
    } catch (e) {
      ({ status, error } = stopped(e, kernelPoints?.length ?? 0, total));
    }
  } else {
    const model = await Model.create(
      gpu,
      loaded.weights,
      {
        kv: { mode: spec.kvMode, pageSize: spec.pageSize, capacityTokens },
        maxBatch: spec.batch,
        pipelines,
        variants,
      },
      loaded.name,
    );
    if (weightBytes < 64 * 1024 * 1024 && sweeps.depths.length > 0) {
      warnings.push(
        `The weights (${(weightBytes / 2 ** 20).toFixed(1)} MiB) may fit in a GPU's last-level cache: decode then measures cache bandwidth, not DRAM.`,
      );
    }
    const profiler = new GpuProfiler(gpu);

    try {
      report('validate', 'Checking prefill and decode logits against the CPU reference');
      Object.assign(validation, await validate(model, loaded.weights));
      if (!validation.passed) {
        throw new Error(
          `Validation failed: GPU logits differ from the CPU reference (max rel err ${validation.maxRelErr.toExponential(2)} > ${LOGITS_MAX_REL_ERR}); no timing was done.`,
        );
      }
      pointsStart = performance.now();
      const timed = (perKernel: boolean): Timing => {
        profiler.reset();
        return { profiler, perKernel };
      };
      const passSpans = async () => {
        const spans = await profiler.read();
        allSpans.push(...spans);
        return spans;
      };

      for (const L of sweeps.prefill) {
        const tokens = promptTokens(L, config.vocabSize, L);
        const wall: number[] = [];
        const gpuMs: number[] = [];
        const profiled: Span[][] = [];
        const profiledReps = spec.profile ? spec.reps : 1;
        for (let r = 0; r < spec.warmup + spec.reps + profiledReps; r++) {
          checkStop();
          const perKernel = r >= spec.warmup + spec.reps;
          const seq = model.createSequence();
          const start = performance.now();
          await model.prefill([{ seq, tokens }], 'none', timed(perKernel));
          const ms = performance.now() - start;
          const spans = await passSpans();
          model.freeSequence(seq);
          if (perKernel) profiled.push(spans);
          else if (r >= spec.warmup) {
            wall.push(ms);
            gpuMs.push(sumMs(spans));
          }
        }
        const cost = prefillCost(config, L);
        const point = makePoint(
          spec,
          'prefill',
          L,
          0,
          wall,
          gpuMs,
          L,
          cost,
          peaks,
          kernelBreakdown(profiled, cost),
        );
        points.push(point);
        done++;
        report('prefill', `prefill L=${L}`, point);
      }

      /**
       * Fills each sequence's cache to `depth` with a prompt (distinct per sequence) and returns the
       * first generated tokens; at depth 0 the first token comes from a decode step on a seed token.
       */
      const firstTokens = async (seqs: number[], depth: number): Promise<number[]> => {
        if (depth > 0) {
          const prompts = seqs.map((seq, b) => ({
            seq,
            tokens: promptTokens(depth, config.vocabSize, depth + 31 * b),
          }));
          return (await model.prefill(prompts, 'none')).map((f) => f.nextToken);
        }
        const seeds = seqs.map((seq, b) => ({ seq, token: promptTokens(1, config.vocabSize, 7 + b)[0] }));
        return (await model.decode(seeds)).nextTokens;
      };

      for (const depth of sweeps.depths) {
        const B = spec.batch;
        const steps: number[] = [];
        const gpuMs: number[] = [];
        for (let r = 0; r < spec.warmup + spec.reps; r++) {
          checkStop();
          const measured = r >= spec.warmup;
          const seqs = Array.from({ length: B }, () => model.createSequence());
          const start = performance.now();
          let tokens = await firstTokens(seqs, depth);
          const arrivals = [performance.now()];
          for (let s = 1; s < spec.gen; s++) {
            const stepStart = performance.now();
            const result = await model.decode(
              seqs.map((seq, b) => ({ seq, token: tokens[b] })),
              { timing: timed(false) },
            );
            const now = performance.now();
            tokens = result.nextTokens;
            arrivals.push(now);
            const spans = await passSpans();
            if (measured) {
              steps.push(now - stepStart);
              gpuMs.push(sumMs(spans));
            }
          }
          for (const seq of seqs) model.freeSequence(seq);
          if (measured) {
            const last = arrivals[arrivals.length - 1];
            latency.ttft.push(arrivals[0] - start);
            latency.tpot.push((last - arrivals[0]) / (spec.gen - 1));
            latency.e2e.push(last - start);
            for (let i = 1; i < arrivals.length; i++) latency.itl.push(arrivals[i] - arrivals[i - 1]);
          }
        }
        // One more short generation with every kernel in its own timed pass, for the breakdown.
        const profiled: Span[][] = [];
        const seqs = Array.from({ length: B }, () => model.createSequence());
        let tokens = await firstTokens(seqs, depth);
        const profiledSteps = spec.profile ? Math.max(3, spec.gen - 1) : 3;
        for (let s = 0; s < profiledSteps; s++) {
          checkStop();
          const result = await model.decode(
            seqs.map((seq, b) => ({ seq, token: tokens[b] })),
            { timing: timed(true) },
          );
          tokens = result.nextTokens;
          profiled.push(await passSpans());
        }
        for (const seq of seqs) model.freeSequence(seq);
        // Measured step s (1 … gen−1) finds depth + s − 1 tokens cached (s when the first token came
        // from a decode step at depth 0 rather than from a prefill).
        const stepCosts = Array.from({ length: spec.gen - 1 }, (_, i) =>
          decodeCost(config, Array(B).fill(depth > 0 ? depth + i : i + 1)),
        );
        const cost = meanCost(stepCosts);
        const point = makePoint(
          spec,
          'decode',
          1,
          depth,
          steps,
          gpuMs,
          B,
          cost,
          peaks,
          kernelBreakdown(profiled, cost),
        );
        points.push(point);
        done++;
        report('decode', `decode depth=${depth}${B > 1 ? ` ×${B}` : ''}`, point);
      }
    } catch (e) {
      ({ status, error } = stopped(e, points.length, total));
    } finally {
      profiler.destroy();
      model.destroy();
    }
  }

  // Roofs measured once can come out low on a busy machine, which would flatter every percentage:
  // measure them again after the sweep, keep the best of both, and place every point against that.
  let finalPeaks = peaks;
  if (status === 'complete') {
    report('peaks', 'Measuring the roofs again, to keep the best of before and after');
    finalPeaks = bestPeaks(peaks, await measurePeaks(gpu, new PipelineCache(gpu)));
    for (const p of points) {
      Object.assign(p, placeOnRoofline(p.flops, p.bytes, p.dispatches, p.medianMs, finalPeaks));
    }
    for (const k of kernelPoints ?? [])
      Object.assign(k, placeKernel(k.flops, k.bytes, k.medianMs, finalPeaks));
  }

  const adapter = gpu.adapter;
  const result: BenchResult = {
    schemaVersion: SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    tool: { name: 'webgpu-inference-bench', version: env.toolVersion },
    status,
    ...(error ? { error } : {}),
    env: {
      userAgent: env.userAgent,
      browser: env.browser,
      adapter: {
        vendor: adapter.vendor,
        architecture: adapter.architecture,
        device: adapter.device,
        description: adapter.description,
        isFallbackAdapter: adapter.isFallbackAdapter,
      },
      features: gpu.features,
      limits: gpu.limits,
      timestamps: { supported: gpu.hasTimestamps, quantumNs: timerQuantumNs(allSpans) },
      crossOriginIsolated: env.crossOriginIsolated,
    },
    model: { preset: loaded.name, config, params: parameterCount(config), weightBytes },
    peaks: finalPeaks,
    coldStart: { compileMs: pipelines.compileMs, loadMs },
    tuning,
    points,
    ...(kernelPoints ? { kernelPoints } : {}),
    latency: {
      ttftMs: percentiles(latency.ttft),
      tpotMs: percentiles(latency.tpot),
      itlMs: percentiles(latency.itl),
      e2eMs: percentiles(latency.e2e),
    },
    validation,
    warnings,
  };
  result.targets = evaluateTargets(result);
  if (result.env.timestamps.quantumNs && result.env.timestamps.quantumNs >= 1e5) {
    result.warnings.push(
      `GPU timestamps are quantized to ${result.env.timestamps.quantumNs / 1000} µs; per-kernel times below that are coarse.`,
    );
  }
  const checked = BenchResultSchema.safeParse(result);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new ResultValidationError(
      `Engine produced an invalid result at ${issue.path.join('.')}: ${issue.message}`,
    );
  }
  done = total;
  report('done', status === 'complete' ? 'Done' : (error ?? status));
  return checked.data;
}

/** How an early stop is recorded: a cancel keeps its points quietly, anything else says what failed. */
function stopped(
  e: unknown,
  finished: number,
  total: number,
): { status: BenchResult['status']; error: string } {
  if (e instanceof Cancelled) {
    return {
      status: 'cancelled',
      error: `Cancelled after ${finished} of ${total} points; the finished points are kept.`,
    };
  }
  const err = e as Error;
  return {
    status: 'failed',
    error: `${err.name}: ${err.message}${finished ? ` (${finished} finished points kept)` : ''}`,
  };
}

/** Checks prefill (4 prompt tokens) and one decode step through the KV cache against the CPU reference. */
async function validate(model: Model, weights: Parameters<typeof referenceForward>[0]) {
  const vocab = weights.config.vocabSize;
  const tokens = promptTokens(5, vocab, 99);
  const want = referenceForward(weights, tokens); // [5, vocab]
  const seq = model.createSequence();
  const [prefill] = await model.prefill([{ seq, tokens: tokens.slice(0, 4) }], 'all');
  const step = await model.decode([{ seq, token: tokens[4] }], { logits: true });
  model.freeSequence(seq);
  const check = (name: string, got: Float32Array, ref: Float64Array) => {
    const scale = ref.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    const c = compare(got, ref, { atol: LOGITS_MAX_REL_ERR * scale, rtol: 0 });
    return { name, maxAbsErr: c.maxAbsErr, maxRelErr: c.maxRelErr, passed: c.passed };
  };
  const checks = [
    check(
      'prefill logits, 4 tokens (all kernels of the prefill path)',
      prefill.logits!,
      want.subarray(0, 4 * vocab),
    ),
    check(
      'decode logits, 1 step through the paged KV cache (GEMV, decode attention)',
      step.logits!,
      want.subarray(4 * vocab),
    ),
  ];
  return {
    maxAbsErr: Math.max(...checks.map((c) => c.maxAbsErr)),
    maxRelErr: Math.max(...checks.map((c) => c.maxRelErr)),
    passed: checks.every((c) => c.passed),
    checks,
  };
}

function makePoint(
  spec: BenchSpec,
  pass: Point['pass'],
  tokens: number,
  depth: number,
  samplesMs: number[],
  gpuMs: number[],
  tokensPerPass: number,
  cost: PassCost,
  peaks: Peaks,
  kernels: Point['kernels'],
): Point {
  const s = summarize(samplesMs);
  const placement = placeOnRoofline(cost.flops, cost.bytes, cost.dispatches, s.median, peaks);
  const gpuValid = gpuMs.length > 0 && gpuMs.some((v) => v > 0);
  return {
    pass,
    tokens,
    depth,
    batch: pass === 'decode' ? spec.batch : 1,
    pageSize: spec.pageSize,
    kvMode: spec.kvMode,
    reps: spec.reps,
    samplesMs,
    medianMs: s.median,
    p95Ms: s.p95,
    stddevMs: s.stddev,
    ci95Ms: s.ci95,
    cv: s.cv,
    highVariance: s.highVariance,
    driftPct: s.driftPct,
    gpuMedianMs: gpuValid ? percentile(gpuMs, 50) : null,
    tokensPerSec: s.median > 0 ? tokensPerPass / (s.median / 1000) : 0,
    flops: cost.flops,
    bytes: cost.bytes,
    dispatches: cost.dispatches,
    ...placement,
    kernels,
  };
}
