import { ResultValidationError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { Graph } from '../measure/cost.ts';
import { bestPeaks, measurePeaks, type Peaks } from '../measure/peaks.ts';
import { weightBytesOf, weightTypeSummary } from '../model/plan.ts';
import { parameterCount, weightFormatOf, weightFormatsOf } from '../model/weights.ts';
import { type BenchResult, BenchResultSchema, SCHEMA_VERSION } from '../results/schema.ts';
import type { Generation } from '../spec/prompt.ts';
import type { RecordCollector } from './collect.ts';
import type { PreparedRun } from './prepare.ts';
import type { ProgressReporter } from './progress.ts';
import type { EngineSetup, RunEnvironment } from './setup.ts';
import { evaluateTargets } from './targets.ts';

/** The clocks, named as the result names them. */
const CLOCKS = {
  gpu: 'GPU timestamps (timestamp-query): begin to end of the compute passes, on the GPU',
  wall: 'performance.now() in the engine worker: submit, GPU work and readback, what a user waits for',
} as const;

/** Roofs of a run that stopped before measuring them. */
const NO_PEAKS: Peaks = {
  fmaGflops: 0,
  copyGBps: 0,
  dispatchUs: 0,
  emptyDispatchUs: 0,
  submitUs: 0,
  trials: [],
};

/** How the run ended. */
export interface RunEnd {
  status: BenchResult['status'];
  error?: BenchResult['error'];
  /** The graph the run's model really ran, if it was built. */
  graph?: Graph;
  /** The text the run's model generated after the workloads (`spec.generate`), if it did. */
  generation?: Generation;
}

/**
 * The roofs again, after the workloads: targets are judged against the best of both, so a roof
 * measured low on a busy machine cannot flatter them. The points keep their one placement.
 */
export async function measureRoofsAgain(
  gpu: Gpu,
  engine: EngineSetup,
  progress: ProgressReporter,
  warnings: string[],
): Promise<Peaks> {
  const peaks = engine.peaks as Peaks;
  progress.send(null, 'Measuring the roofs again, to judge the targets against the best of before and after');
  const after = await measurePeaks(gpu, engine.pipelines, undefined, peaks);
  const drift = (a: number, b: number) => Math.abs(a - b) / Math.max(a, b);
  if (drift(peaks.fmaGflops, after.fmaGflops) > 0.2 || drift(peaks.copyGBps, after.copyGBps) > 0.2) {
    warnings.push(
      `The roofs moved by more than 20% during the run (FMA ${peaks.fmaGflops.toFixed(1)} → ${after.fmaGflops.toFixed(1)} GFLOP/s, copy ${peaks.copyGBps.toFixed(2)} → ${after.copyGBps.toFixed(2)} GB/s): this machine was busy or throttling, and percentages of the roof are uncertain by as much.`,
    );
  }
  return after;
}

/**
 * The BenchResult: the run's spec and environment, the model, the roofs, every placed point and
 * each workload's own section (its collector's), the targets judged against the best roofs, the
 * validation and warnings; checked against the one result schema before it leaves the engine.
 */
export function buildResult(
  gpu: Gpu,
  env: RunEnvironment,
  prepared: PreparedRun,
  engine: EngineSetup,
  records: RecordCollector,
  end: RunEnd,
  peaksAfter: Peaks | null,
  warnings: string[],
): BenchResult {
  const { spec, loaded } = prepared;
  const config = loaded.weights.config;
  const { weights, clock } = engine;
  const peaks = engine.peaks ?? NO_PEAKS;
  const adapter = gpu.adapter;
  const result: Omit<BenchResult, 'targets'> = {
    schemaVersion: SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    tool: { name: 'webgpu-inference-bench', version: env.toolVersion },
    status: end.status,
    ...(end.error ? { error: end.error } : {}),
    spec: {
      suite: spec.suite,
      kv: spec.kv,
      autotune: spec.autotune,
      weights: spec.weights,
      fuse: spec.fuse,
      workloads: spec.workloads,
      ...(spec.prompt && prepared.promptTokens
        ? { prompt: { ...spec.prompt, tokens: prepared.promptTokens.length } }
        : {}),
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
      ...(({ types, bitsPerWeight }) => ({ weightTypes: types, bitsPerWeight }))(
        weightTypeSummary(config, weightFormatsOf(weights)),
      ),
      ...(end.graph ? { graph: end.graph } : {}),
    },
    peaks,
    peaksAfter,
    coldStart: { compileMs: engine.pipelines.compileMs, loadMs: prepared.loadMs },
    tuning: engine.tuning,
    points: records.points,
    ...(records.kernelPoints.length > 0 ? { kernelPoints: records.kernelPoints } : {}),
    ...(end.generation ? { generation: end.generation } : {}),
    ...records.sections(spec.workloads, prepared, peaks, clock),
    validation: engine.validation,
    warnings,
  };
  const judged = peaksAfter && engine.peaks ? bestPeaks(engine.peaks, peaksAfter) : result.peaks;
  const full: BenchResult = { ...result, targets: evaluateTargets(result, judged) };
  const checked = BenchResultSchema.safeParse(full);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new ResultValidationError(
      `Engine produced an invalid result at ${issue.path.join('.')}: ${issue.message}`,
    );
  }
  return checked.data;
}
