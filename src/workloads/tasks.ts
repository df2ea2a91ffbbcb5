import { InternalError } from '../errors.ts';
import type { TaskQuality } from '../spec/workloads/formats.ts';
import { pickSlices, taskQuality, taskTableFormat } from './task-quality.ts';
import type { WorkloadEngine, WorkloadRunner } from './workload.ts';

/** One slice's row of the run's model on its held-out set. */
export type TasksRecord = { type: 'tasks'; taskQuality: TaskQuality };

/**
 * The run's model on its held-out set: one variant, the run's own weights (a trained preset's f16
 * file is scored in f16, as the run's points ran it), nothing to compare against.
 */
export const taskScores: WorkloadRunner<'tasks', TasksRecord> = async (ctx, w) => {
  // prepareRun refuses a tasks workload on a model without a held-out set, before anything runs.
  if (!ctx.taskSet || !ctx.tokenizer) throw new InternalError(`${ctx.modelName} has no held-out set`);
  await taskQuality(
    ctx,
    [{ format: taskTableFormat(ctx, 'The task table') }],
    pickSlices(ctx.taskSet, w.taskSlices),
    ctx.tokenizer,
    w.taskTokens,
    (slice) => ctx.progress(0, 1, `task quality: the ${slice} slice`),
    (row) => ctx.emit({ type: 'tasks', taskQuality: row }),
  );
  ctx.progress(1, 1, 'task quality by slice');
};

export const tasksEngine: WorkloadEngine<'tasks', TasksRecord> = {
  run: taskScores,
  describe: (r) => `${r.taskQuality.metric} on the ${r.taskQuality.slice} slice`,
  collect: (records) => ({ tasks: records.map((r) => r.taskQuality) }),
  // The targets are judged at f32 by the format sweep; a sample of the run's own format sets none.
  targets: () => [],
};
