import { CancelledError, errorRecord } from '../errors.ts';
import { type Gpu, rootCause } from '../gpu/device.ts';
import { graphOf } from '../measure/cost.ts';
import type { TuningStore } from '../measure/tuning-cache.ts';
import type { Model } from '../model/forward.ts';
import type { Tokenizer } from '../model/tokenizer/index.ts';
import { promptLogits } from '../model/verify.ts';
import type { BenchResult } from '../results/schema.ts';
import type { Generation } from '../spec/prompt.ts';
import type { BenchSpec } from '../spec/schema.ts';
import { workloadUnits } from '../spec/workloads/index.ts';
import { buildResult, measureRoofsAgain, type RunEnd } from './build-result.ts';
import { RecordCollector } from './collect.ts';
import { generateGreedy } from './generate.ts';
import { type PreparedRun, prepareRun } from './prepare.ts';
import { type Progress, ProgressReporter } from './progress.ts';
import { EngineSetup, type RunEnvironment } from './setup.ts';

export type { Progress, RunEnvironment };

export interface RunOptions {
  onProgress?: (p: Progress) => void;
  /** Aborting it cancels the run at the next check; the finished records are kept. */
  signal?: AbortSignal;
  /** Where the autotuner's winners are kept; without one, nothing is cached. */
  tuningStore?: TuningStore;
  /**
   * Tokens whose next-token logits are taken from the run's own model once every workload is done
   * (the peers' agreement prompt): the very model that was timed, its pipelines already built.
   * Outside every timed span; its failure is the probe's, never the run's.
   */
  probe?: { tokens: number[]; onDone: (outcome: ProbeOutcome) => void };
}

/** What a run's probe gave: a logits row per token, or why there is none. */
export type ProbeOutcome = { logits: number[][] } | { error: string };

async function probe(model: Model | null, tokens: number[]): Promise<ProbeOutcome> {
  if (!model) return { error: 'this run builds no model' };
  try {
    const V = model.config.vocabSize;
    const logits = await promptLogits(model, tokens);
    return { logits: tokens.map((_, i) => Array.from(logits.subarray(i * V, (i + 1) * V))) };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

/**
 * The text the run's model generates from `spec.generate`'s prompt after the workloads, streamed as
 * progress: the very model that was timed, outside every timed span. A failure is a warning, never
 * the run's (a cancel still cancels).
 */
async function generateAfterWorkloads(
  model: Model | null,
  prepared: PreparedRun,
  progress: ProgressReporter,
  warnings: string[],
  signal: AbortSignal,
): Promise<Generation | undefined> {
  const settings = prepared.spec.generate;
  if (!settings || !prepared.generateIds) return undefined;
  if (!model) {
    warnings.push('No text was generated from the prompt: this run builds no model.');
    return undefined;
  }
  const label = 'Generating text from the prompt';
  progress.send(null, label);
  try {
    const g = await generateGreedy(
      model,
      prepared.loaded.tokenizer as Tokenizer,
      prepared.generateIds,
      settings,
      (generated) => progress.send(null, label, { generated }),
      signal,
    );
    return { prompt: settings.prompt, ...g };
  } catch (e) {
    if (signal.aborted) throw e;
    warnings.push(`No text was generated from the prompt: ${(e as Error).name}: ${(e as Error).message}`);
    return undefined;
  }
}

/**
 * Runs a benchmark: loads the model and fits the workloads to it (bad input rejects here, before
 * anything is measured), sets up the engine (roofs, kernel families, the model validated against
 * the CPU reference), runs each workload through its engine, then builds the result from every
 * record: passes and kernels placed on the roofline once, as they land, and each workload's own
 * section from its collector. A cancel, a lost device or any error ends the run with its finished
 * records kept and the error named.
 */
export async function runBench(
  gpu: Gpu,
  spec: BenchSpec,
  env: RunEnvironment,
  options: RunOptions = {},
): Promise<BenchResult> {
  const signal = options.signal ?? new AbortController().signal;
  const progress = new ProgressReporter(options.onProgress);
  // A cancel that came first is honoured at the first check inside the try below, as a cancelled result.
  const prepared = await prepareRun(gpu, spec);
  const warnings = prepared.warnings;
  progress.expect(prepared.spec.workloads.reduce((n, w) => n + workloadUnits(w), 0));
  const engine = new EngineSetup(gpu, prepared, options.probe?.tokens.length ?? 0);
  const records = new RecordCollector();
  const end: RunEnd = { status: 'complete' };
  try {
    await engine.setUp(env, options.tuningStore, progress, warnings, signal);
    await records.runWorkloads(gpu, prepared, engine, progress, warnings, signal);
    if (options.probe) options.probe.onDone(await probe(engine.model, options.probe.tokens));
    end.generation = await generateAfterWorkloads(engine.model, prepared, progress, warnings, signal);
  } catch (e) {
    // A cancel is a cancel whatever call noticed it; otherwise a lost device is the root cause.
    const cause = signal.aborted ? (signal.reason ?? e) : await rootCause(gpu, e);
    end.status = cause instanceof CancelledError ? 'cancelled' : 'failed';
    end.error = errorRecord(cause);
  } finally {
    if (engine.model) end.graph = graphOf(engine.model);
    engine.model?.destroy();
  }
  const peaksAfter =
    end.status === 'complete' && engine.peaks
      ? await measureRoofsAgain(gpu, engine, progress, warnings)
      : null;
  const result = buildResult(gpu, env, prepared, engine, records, end, peaksAfter, warnings);
  progress.send(null, end.status === 'complete' ? 'Done' : `${end.error?.name}: ${end.error?.message}`);
  return result;
}
