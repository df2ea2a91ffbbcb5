import { formatError, maxError } from '../error-figure.ts';
import {
  CancelledError,
  errorRecord,
  InputError,
  ReferenceMismatchError,
  ResultValidationError,
  SpecError,
} from '../errors.ts';
import { type Gpu, rootCause } from '../gpu/device.ts';
import { PipelineCache } from '../gpu/pipelines.ts';
import { DEFAULT_VARIANTS, type KernelVariants } from '../kernels/variants.ts';
import { kvCapacityTokens } from '../kv/cache.ts';
import { autotune, autotunePacked } from '../measure/autotune.ts';
import { type Graph, graphOf } from '../measure/cost.ts';
import { bestPeaks, measurePeaks, type Peaks, probeTimestamps } from '../measure/peaks.ts';
import { DRAM_BOUND_MIN_BYTES } from '../measure/roofline.ts';
import { loadTuning, type TuningStore, tuningKey } from '../measure/tuning-cache.ts';
import { presetConfig } from '../model/config.ts';
import { Model } from '../model/forward.ts';
import { weightBytesOf } from '../model/plan.ts';
import { type LoadedModel, loadModel } from '../model/source.ts';
import { LOGITS_MAX_REL_ERR, validateModel } from '../model/verify.ts';
import {
  type ModelWeights,
  parameterCount,
  quantizeWeights,
  weightFormatOf,
  weightFormatsOf,
} from '../model/weights.ts';
import {
  type BenchResult,
  BenchResultSchema,
  type KernelPoint,
  type Point,
  SCHEMA_VERSION,
} from '../results/schema.ts';
import { assertFits, fitToModel, modelErrors } from '../spec/fit.ts';
import { engineNeeds } from '../spec/needs.ts';
import type { BenchSpec } from '../spec/schema.ts';
import { VALIDATION_TOKENS } from '../spec/workload.ts';
import type { CapacityResult } from '../spec/workloads/capacity.ts';
import type { Quality } from '../spec/workloads/formats.ts';
import { type WorkloadKind, workloadLabel, workloadUnits } from '../spec/workloads/index.ts';
import type { ServeRun } from '../spec/workloads/serve-result.ts';
import type { SpecRun, VerifyPoint } from '../spec/workloads/speculative-result.ts';
import { BYTES, type WeightFormat } from '../weight-format.ts';
import { WORKLOADS } from '../workloads/index.ts';
import { promptTokens } from '../workloads/prompts.ts';
import type { FusionRecord, WorkloadContext, WorkloadRecord } from '../workloads/workload.ts';
import {
  type ClockInfo,
  formatSummary,
  fusionSummary,
  placeKernelRecord,
  placePass,
  placeVerify,
  speculativeResult,
} from './assemble.ts';
import { batchScaling, serveResult } from './serve-assemble.ts';
import { evaluateTargets } from './targets.ts';

/** Sent as the run goes, so a UI or CLI can show progress and draw records as they land. */
export interface Progress {
  /** The workload running ('prefill', 'decode', 'kernels', …), or null while the engine sets up or finishes. */
  workload: WorkloadKind | null;
  /** What is happening now, in words. */
  label: string;
  /** Points finished, over every workload, of `total` (which grows once the kernel suite counts its cases). */
  done: number;
  total: number;
  elapsedMs: number;
  /** Estimated time left, from the points measured so far; null before the first. */
  etaMs: number | null;
  /** A point that just landed: the very object the result will hold. */
  point?: Point;
  kernelPoint?: KernelPoint;
  /** The roofs, once measured, so a live roofline can draw them before the run ends. */
  peaks?: Peaks;
}

export interface RunEnvironment {
  userAgent: string;
  browser: string;
  crossOriginIsolated: boolean;
  toolVersion: string;
  /** Where the engine runs: the browser's worker, or Node on Dawn (with its version and backend). */
  runtime: BenchResult['env']['runtime'];
}

export interface RunOptions {
  onProgress?: (p: Progress) => void;
  /** Aborting it cancels the run at the next check; the finished records are kept. */
  signal?: AbortSignal;
  /** Where the autotuner's winners are kept; without one, nothing is cached. */
  tuningStore?: TuningStore;
}

/** The clocks, named as the result names them. */
const CLOCKS = {
  gpu: 'GPU timestamps (timestamp-query): begin to end of the compute passes, on the GPU',
  wall: 'performance.now() in the engine worker: submit, GPU work and readback, what a user waits for',
} as const;

/**
 * Runs a benchmark: measures the roofs, loads the model and fits the workloads to it, picks the
 * kernel families for this device, validates the model against the CPU reference, then runs each
 * workload in turn. Every record a workload emits is placed on the roofline once, here, against the
 * roofs measured before the workloads; the same Point object is streamed and kept. A cancel, a lost
 * device or any error ends the run with its finished records kept and the error named. Bad input
 * (a spec the model cannot hold, a broken model file) rejects before anything is measured.
 */
export async function runBench(
  gpu: Gpu,
  spec: BenchSpec,
  env: RunEnvironment,
  options: RunOptions = {},
): Promise<BenchResult> {
  const t0 = performance.now();
  const signal = options.signal ?? new AbortController().signal;
  const warnings: string[] = [];
  const points: Point[] = [];
  const kernelPoints: KernelPoint[] = [];
  let capacity: CapacityResult | undefined;
  const verifyCurve: VerifyPoint[] = [];
  const specRuns: SpecRun[] = [];
  const serveRuns: ServeRun[] = [];
  const quality: Quality[] = [];
  const fusionRecords: FusionRecord[] = [];
  const pipelines = new PipelineCache(gpu);
  let peaks: Peaks | undefined;
  let unitsDone = 0;
  /** Points of the fitted workloads; the kernel suite adds its cases once it counts them. */
  let unitsTotal = 0;
  let firstUnitAt: number | undefined;
  const report = (workload: WorkloadKind | null, label: string, extra: Partial<Progress> = {}) => {
    const now = performance.now();
    const etaMs =
      unitsDone > 0 && firstUnitAt !== undefined
        ? ((now - firstUnitAt) / unitsDone) * Math.max(0, unitsTotal - unitsDone)
        : null;
    options.onProgress?.({
      workload,
      label,
      done: unitsDone,
      total: unitsTotal,
      elapsedMs: now - t0,
      etaMs,
      ...(peaks ? { peaks } : {}),
      ...extra,
    });
  };

  if (gpu.adapter.isFallbackAdapter) {
    warnings.push('Fallback (software) adapter: these numbers measure a CPU emulation, not a GPU.');
  }
  if (!gpu.hasTimestamps) warnings.push('No timestamp-query: every point is timed by the wall clock only.');

  // Before any measurement: the model and the fit of the spec to it (bad input rejects here). A
  // cancel that came first is honoured at the first check inside the try below, as a cancelled result.
  const tLoad = performance.now();
  const needs0 = engineNeeds(spec);
  const loaded: LoadedModel =
    !needs0.model && spec.model.kind === 'preset'
      ? // The kernel suite needs only the shapes: a preset's config, without generating its weights.
        {
          name: spec.model.preset,
          weights: { config: presetConfig(spec.model.preset), tensors: new Map() },
          warnings: [],
        }
      : await loadModel(spec.model);
  const loadMs = performance.now() - tLoad;
  const config = loaded.weights.config;
  warnings.push(...loaded.warnings);
  const fitted = fitToModel(spec, config.maxSeqLen);
  assertFits(fitted.errors);
  const badDrafters = modelErrors(spec, config);
  if (badDrafters.length > 0) throw new SpecError(badDrafters.join('; '));
  for (const d of fitted.dropped) warnings.push(`Skipped ${d.message}.`);
  if (fitted.spec.workloads.length === 0) {
    throw new InputError(
      `Nothing of the ${spec.suite} suite fits this model's maxSeqLen of ${config.maxSeqLen}.`,
    );
  }
  const run = fitted.spec;
  const needs = engineNeeds(run);
  unitsTotal = run.workloads.reduce((n, w) => n + workloadUnits(w), 0);
  const f32Bytes = parameterCount(config) * BYTES.f32;
  if (needs.model && f32Bytes < DRAM_BOUND_MIN_BYTES && run.workloads.some((w) => w.kind === 'decode')) {
    warnings.push(
      `The weights (${(f32Bytes / 2 ** 20).toFixed(1)} MiB in f32) may fit in a GPU's last-level cache (up to ${DRAM_BOUND_MIN_BYTES / 2 ** 20} MiB on some): decode then measures cache bandwidth, not DRAM.`,
    );
  }

  let status: BenchResult['status'] = 'complete';
  let error: BenchResult['error'];
  let clock: ClockInfo = { timestamps: gpu.hasTimestamps, quantumNs: null };
  let tuning: BenchResult['tuning'] = { enabled: false, cached: false, searchMs: 0, choices: [] };
  const validation: BenchResult['validation'] = { maxAbsErr: 0, maxRelErr: 0, passed: false, checks: [] };
  let model: Model | null = null;
  /** The graph the run's model really ran, once it was built. */
  let graph: Graph | undefined;
  // The run's format applies on load (a quantized GGUF keeps its own tensors' types).
  let weights: ModelWeights = loaded.weights;
  try {
    report(null, 'Measuring the roofs (FMA, copy bandwidth, dispatch and submit overhead)');
    peaks = await measurePeaks(gpu, pipelines, signal);
    clock = { timestamps: gpu.hasTimestamps, ...(await probeTimestamps(gpu, pipelines)) };
    if (clock.quantumNs !== null) {
      warnings.push(
        `GPU timestamps are quantized to ${clock.quantumNs / 1000} µs here: every point is placed by the wall clock.`,
      );
    }

    if (needs.model && run.weights !== 'f32') {
      report(null, `Quantizing the weights to ${run.weights}`);
      weights = quantizeWeights(loaded.weights, run.weights, (fraction) =>
        report(null, `Quantizing the weights to ${run.weights} (${Math.round(fraction * 100)}%)`),
      );
    }
    const format = weightFormatOf(weights);
    // The format the packed kernels are searched for: the model's, or its first packed tensor's when mixed.
    const packedFormat = [...(weights.packed?.values() ?? [])][0]?.format;

    let variants: KernelVariants = DEFAULT_VARIANTS;
    if (run.autotune && needs.kernels) {
      report(null, 'Autotuning: validating and timing each kernel family on this device');
      const key = tuningKey({
        adapter: gpu.adapter,
        browser: env.browser,
        toolVersion: env.toolVersion,
        config,
        gemvBatches: needs.gemvBatches,
        decodeContext: needs.decodeContext,
        weightFormat: format,
        fused: run.fuse,
      });
      const store = options.tuningStore;
      const cached = store ? await loadTuning(key, store) : undefined;
      const tuned =
        cached ??
        (await autotune(gpu, pipelines, config, needs.gemvBatches, signal, {
          format: packedFormat,
          decodeContext: needs.decodeContext,
          fused: run.fuse,
        }));
      if (!cached) await store?.put(key, tuned);
      variants = tuned.variants;
      tuning = { enabled: true, cached: Boolean(cached), searchMs: tuned.searchMs, choices: tuned.choices };
    }

    if (needs.model) {
      report(null, 'Building the model');
      model = await Model.create(
        gpu,
        weights,
        {
          kv: {
            mode: run.kv.mode,
            pageSize: run.kv.pageSize,
            capacityTokens: kvCapacityTokens(run.kv.mode, run.kv.pageSize, config.maxSeqLen, {
              sequences: needs.maxSequences,
              tokens: needs.maxContextTokens,
            }),
          },
          maxBatch: needs.maxBatch,
          pipelines,
          variants,
          fuse: run.fuse,
        },
        loaded.name,
      );
      signal.throwIfAborted();
      report(null, 'Checking prefill and decode logits against the CPU reference');
      Object.assign(
        validation,
        await validateModel(model, weights, promptTokens(VALIDATION_TOKENS, config.vocabSize, 99)),
      );
      if (!validation.passed) {
        throw new ReferenceMismatchError(
          `GPU logits differ from the CPU reference (max rel err ${formatError(validation.maxRelErr)}, bound ${LOGITS_MAX_REL_ERR}); nothing was timed.`,
        );
      }
    }

    // The format sweep builds a model per format: each packed format gets its packed kernels
    // searched once (the f32 ops keep the run's choice), and the search is recorded with the rest.
    const byFormat = new Map<WeightFormat, KernelVariants>();
    const variantsFor = async (f: WeightFormat): Promise<KernelVariants> => {
      if (f === 'f32' || f === packedFormat || !run.autotune) return variants;
      const known = byFormat.get(f);
      if (known) return known;
      report(current, `Autotuning the ${f} kernels`);
      const tuned = await autotunePacked(gpu, pipelines, config, needs.gemvBatches, f, signal, {
        fused: run.fuse,
      });
      const v = { ...variants, ...tuned.variants };
      byFormat.set(f, v);
      tuning?.choices.push(...tuned.choices);
      if (tuning) tuning.searchMs += tuned.searchMs;
      return v;
    };
    const roofs = peaks;
    let current: WorkloadKind | null = null;
    const emit = (record: WorkloadRecord) => {
      // The one placement: against the roofs measured before the workloads, never redone.
      if (record.type === 'pass') {
        const point = placePass(record, roofs, clock, run.kv);
        points.push(point);
        report(
          current,
          `${record.pass} ${record.pass === 'prefill' ? `L=${record.tokens}` : `depth=${record.depth}`}`,
          {
            point,
          },
        );
      } else if (record.type === 'capacity') {
        capacity = record.result;
        report(current, 'capacity probe: admission counted and checked');
      } else if (record.type === 'verify') {
        verifyCurve.push(placeVerify(record, roofs, clock));
        report(current, `verify k=${record.k} at depth ${record.depth}`);
      } else if (record.type === 'serveRun') {
        serveRuns.push(record.run);
        report(current, `load test: ${record.run.label} done`);
      } else if (record.type === 'quality') {
        quality.push(record.quality);
        report(current, `${record.quality.format}: error on the ${record.quality.slice} slice`);
      } else if (record.type === 'fusion') {
        fusionRecords.push(record);
        report(current, `${record.graph} graph: dispatches recorded`);
      } else if (record.type === 'specRun') {
        specRuns.push(record.run);
        report(current, `speculative ${record.run.label} on ${record.run.promptClass} prompts`);
      } else {
        const kernelPoint = placeKernelRecord(record, roofs, clock);
        kernelPoints.push(kernelPoint);
        report(current, `${record.name} ${record.variant}`, { kernelPoint });
      }
    };
    for (const w of run.workloads) {
      signal.throwIfAborted();
      current = w.kind;
      const before = unitsDone;
      let ownTotal = workloadUnits(w);
      const ctx: WorkloadContext = {
        gpu,
        config,
        weights,
        loadedWeights: loaded.weights,
        weightFormat: format,
        weightFormats: weightFormatsOf(weights),
        variantsFor: (f) => variantsFor(f),
        kv: run.kv,
        model,
        pipelines,
        variants,
        roofs,
        signal,
        emit,
        warn: (message) => warnings.push(message),
        check: (c) => {
          validation.checks.push(c);
          validation.maxAbsErr = maxError([validation.maxAbsErr, c.maxAbsErr]);
          validation.maxRelErr = maxError([validation.maxRelErr, c.maxRelErr]);
          validation.passed = validation.checks.every((x) => x.passed);
        },
        progress: (done, total, label) => {
          firstUnitAt ??= performance.now();
          unitsTotal += total - ownTotal;
          ownTotal = total;
          unitsDone = before + done;
          report(w.kind, label);
        },
      };
      report(w.kind, `Starting the ${workloadLabel(w)}`);
      await WORKLOADS[w.kind](ctx, w as never);
    }
  } catch (e) {
    // A cancel is a cancel whatever call noticed it; otherwise a lost device is the root cause.
    const cause = signal.aborted ? (signal.reason ?? e) : await rootCause(gpu, e);
    status = cause instanceof CancelledError ? 'cancelled' : 'failed';
    error = errorRecord(cause);
  } finally {
    graph = model ? graphOf(model) : undefined;
    model?.destroy();
  }

  // The roofs again, after the workloads: targets are judged against the best of both, so a roof
  // measured low on a busy machine cannot flatter them. The points keep their one placement.
  let peaksAfter: Peaks | null = null;
  if (status === 'complete' && peaks) {
    report(null, 'Measuring the roofs again, to judge the targets against the best of before and after');
    peaksAfter = await measurePeaks(gpu, pipelines);
    const drift = (a: number, b: number) => Math.abs(a - b) / Math.max(a, b);
    if (
      drift(peaks.fmaGflops, peaksAfter.fmaGflops) > 0.2 ||
      drift(peaks.copyGBps, peaksAfter.copyGBps) > 0.2
    ) {
      warnings.push(
        `The roofs moved by more than 20% during the run (FMA ${peaks.fmaGflops.toFixed(1)} → ${peaksAfter.fmaGflops.toFixed(1)} GFLOP/s, copy ${peaks.copyGBps.toFixed(2)} → ${peaksAfter.copyGBps.toFixed(2)} GB/s): this machine was busy or throttling, and percentages of the roof are uncertain by as much.`,
      );
    }
  }

  const adapter = gpu.adapter;
  const result: Omit<BenchResult, 'targets'> = {
    schemaVersion: SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    tool: { name: 'webgpu-inference-bench', version: env.toolVersion },
    status,
    ...(error ? { error } : {}),
    spec: {
      suite: run.suite,
      kv: run.kv,
      autotune: run.autotune,
      weights: run.weights,
      fuse: run.fuse,
      workloads: run.workloads,
    },
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
      timestamps: { supported: gpu.hasTimestamps, quantumNs: clock.quantumNs },
      clocks: { ...CLOCKS },
      crossOriginIsolated: env.crossOriginIsolated,
      runtime: env.runtime,
    },
    model: {
      preset: loaded.name,
      config,
      params: parameterCount(config),
      weightBytes: weightBytesOf(config, weightFormatsOf(weights)),
      weightFormat: weightFormatOf(weights),
      ...(graph ? { graph } : {}),
    },
    peaks: peaks ?? { fmaGflops: 0, copyGBps: 0, dispatchUs: 0, emptyDispatchUs: 0, submitUs: 0, trials: [] },
    peaksAfter,
    coldStart: { compileMs: pipelines.compileMs, loadMs },
    tuning,
    points,
    ...(kernelPoints.length > 0 ? { kernelPoints } : {}),
    ...(capacity ? { capacity } : {}),
    ...(run.workloads.some((w) => w.kind === 'spec') && (verifyCurve.length > 0 || specRuns.length > 0)
      ? { speculative: speculativeResult(verifyCurve, specRuns) }
      : {}),
    ...(serveRuns.length > 0 ? { serve: serveResult(serveRuns) } : {}),
    ...(run.workloads.some((w) => w.kind === 'formats')
      ? { formats: formatSummary(points, config), quality }
      : {}),
    ...(run.workloads.some((w) => w.kind === 'fusion')
      ? { fusion: fusionSummary(points, fusionRecords) }
      : {}),
    ...(run.suite === 'batch' && peaks && points.length > 1
      ? { batchScaling: batchScaling(points, peaks) }
      : {}),
    validation,
    warnings,
  };
  const judged = peaksAfter && peaks ? bestPeaks(peaks, peaksAfter) : result.peaks;
  const full: BenchResult = { ...result, targets: evaluateTargets(result, judged) };
  const checked = BenchResultSchema.safeParse(full);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new ResultValidationError(
      `Engine produced an invalid result at ${issue.path.join('.')}: ${issue.message}`,
    );
  }
  report(null, status === 'complete' ? 'Done' : `${error?.name}: ${error?.message}`);
  return checked.data;
}
