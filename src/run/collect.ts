import { maxError } from '../error-figure.ts';
import type { Gpu } from '../gpu/device.ts';
import type { Peaks } from '../measure/peaks.ts';
import type { ClockInfo } from '../measure/samples.ts';
import { weightFormatOf, weightFormatsOf } from '../model/weights.ts';
import type { KernelPoint, Point } from '../results/schema.ts';
import { type Workload, type WorkloadKind, workloadLabel, workloadUnits } from '../spec/workloads/index.ts';
import { ENGINES } from '../workloads/index.ts';
import { promptTokens } from '../workloads/prompts.ts';
import type { KernelRecord, PassRecord, WorkloadContext } from '../workloads/workload.ts';
import { placeKernelRecord, placePass } from './assemble.ts';
import type { PreparedRun } from './prepare.ts';
import type { ProgressReporter } from './progress.ts';
import type { EngineSetup } from './setup.ts';

type OwnRecord = { type: string };

/**
 * What the workloads hand over as they run. Passes and kernels are placed on the roofline once,
 * as they land, against the roofs measured before the workloads, and the very Point streamed is
 * the one kept; every other record is kept, by the kind of the workload that emitted it, for that
 * workload's collector.
 */
export class RecordCollector {
  readonly points: Point[] = [];
  readonly kernelPoints: KernelPoint[] = [];
  private readonly own = new Map<WorkloadKind, OwnRecord[]>();

  /** Runs each workload of the fitted spec in turn, each through its engine (src/workloads/). */
  async runWorkloads(
    gpu: Gpu,
    prepared: PreparedRun,
    engine: EngineSetup,
    progress: ProgressReporter,
    warnings: string[],
    signal: AbortSignal,
  ): Promise<void> {
    const { spec, loaded } = prepared;
    const roofs = engine.peaks as Peaks;
    const weights = engine.weights;
    const validation = engine.validation;
    for (const w of spec.workloads) {
      signal.throwIfAborted();
      const counted = progress.workload(progress.unitsDone, workloadUnits(w));
      const ctx: WorkloadContext<OwnRecord> = {
        gpu,
        config: loaded.weights.config,
        modelName: loaded.name,
        weights,
        loadedWeights: loaded.weights,
        tokenizer: loaded.tokenizer,
        taskSet: loaded.taskSet,
        weightFormat: weightFormatOf(weights),
        weightFormats: weightFormatsOf(weights),
        variantsFor: (f) =>
          engine.variantsFor(f, signal, () => progress.send(w.kind, `Autotuning the ${f} kernels`)),
        promptTokens: (n, salt) =>
          prepared.promptTokens
            ? prepared.promptTokens.slice(0, n)
            : promptTokens(n, loaded.weights.config.vocabSize, salt),
        kv: spec.kv,
        model: engine.model,
        pipelines: engine.pipelines,
        variants: engine.variants,
        roofs,
        signal,
        emit: (record) => this.take(w.kind, record, roofs, engine.clock, prepared, progress),
        warn: (message) => warnings.push(message),
        check: (c) => {
          validation.checks.push(c);
          validation.maxAbsErr = maxError([validation.maxAbsErr, c.maxAbsErr]);
          validation.maxRelErr = maxError([validation.maxRelErr, c.maxRelErr]);
          validation.passed = validation.checks.every((x) => x.passed);
        },
        progress: (done, total, label) => {
          counted(done, total);
          progress.send(w.kind, label);
        },
      };
      progress.send(w.kind, `Starting the ${workloadLabel(w)}`);
      await ENGINES[w.kind].run(ctx, w as never);
    }
  }

  private take(
    kind: WorkloadKind,
    record: PassRecord | KernelRecord | OwnRecord,
    roofs: Peaks,
    clock: ClockInfo,
    prepared: PreparedRun,
    progress: ProgressReporter,
  ): void {
    if (isPass(record)) {
      const point = placePass(record, roofs, clock, prepared.spec.kv);
      this.points.push(point);
      const where = record.pass === 'prefill' ? `L=${record.tokens}` : `depth=${record.depth}`;
      progress.send(kind, `${record.pass} ${where}`, { point });
    } else if (isKernel(record)) {
      const kernelPoint = placeKernelRecord(record, roofs, clock);
      this.kernelPoints.push(kernelPoint);
      progress.send(kind, `${record.name} ${record.variant}`, { kernelPoint });
    } else {
      const mine = this.own.get(kind) ?? [];
      mine.push(record);
      this.own.set(kind, mine);
      progress.send(kind, ENGINES[kind].describe(record));
    }
  }

  /**
   * Each workload's own section, from its records (all workloads of one kind together) and the
   * run's points: every kind in the spec is collected, whether or not it finished.
   */
  sections(workloads: readonly Workload[], prepared: PreparedRun, peaks: Peaks, clock: ClockInfo) {
    const kinds = [...new Set(workloads.map((w) => w.kind))];
    return Object.assign(
      {},
      ...kinds.map((kind) =>
        ENGINES[kind].collect(this.own.get(kind) ?? [], {
          workloads: workloads.filter((w) => w.kind === kind) as never,
          points: this.points,
          config: prepared.loaded.weights.config,
          peaks,
          clock,
        }),
      ),
    );
  }
}

function isPass(r: { type: string }): r is PassRecord {
  return r.type === 'pass';
}

function isKernel(r: { type: string }): r is KernelRecord {
  return r.type === 'kernel';
}
