import { finiteError } from '../error-figure.ts';
import { ReferenceMismatchError } from '../errors.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import { KernelRig } from '../kernels/rig.ts';
import { type SuiteCase, suiteCases } from '../measure/kernel-suite.ts';
import { KernelTimer } from '../measure/kernel-timer.ts';
import type { WorkloadEngine, WorkloadRunner } from './workload.ts';

/**
 * The kernel suite: each kernel alone at the shapes the model really uses. Every case is first
 * checked against the CPU reference on its own inputs (sampled rows for large outputs); only a
 * case that passes is timed, in both clocks, one submit per sample. A case that fails is not
 * timed; the suite finishes the others, then fails with every mismatch named. Cases over the
 * device's buffer limits are skipped with a warning.
 */
export const kernelSuite: WorkloadRunner<'kernels'> = async (ctx, w) => {
  const limit = Math.min(ctx.gpu.limits.maxStorageBufferBindingSize, ctx.gpu.limits.maxBufferSize);
  const all = suiteCases({ gpu: ctx.gpu, pipelines: ctx.pipelines }, ctx.config, ctx.variants);
  const label = (c: SuiteCase) => `${c.name} ${JSON.stringify(c.shape)}`;
  const cases = all.filter((c) => c.kase.bufferBytes <= limit);
  const skipped = all.filter((c) => c.kase.bufferBytes > limit).map(label);
  if (skipped.length > 0) ctx.warn(`Skipped, over this device's buffer limits: ${skipped.join('; ')}`);
  const failures: string[] = [];
  let maxAbsErr = 0;
  let maxRelErr = 0;
  const profiler = new GpuProfiler(ctx.gpu, 1);
  try {
    for (const [i, c] of cases.entries()) {
      ctx.signal.throwIfAborted();
      ctx.progress(i, cases.length, label(c));
      const rig = new KernelRig(ctx.gpu, `kernel suite: ${c.name}`);
      try {
        const { setup, call, check } = await c.kase.prepare(rig);
        await rig.run(...setup);
        const result = await check();
        maxAbsErr = Math.max(maxAbsErr, result.maxAbsErr);
        maxRelErr = Math.max(maxRelErr, result.maxRelErr);
        if (!result.passed) {
          failures.push(
            `${label(c)} (${c.kase.variant}): maxAbsErr ${result.maxAbsErr}, first mismatches ${JSON.stringify(result.mismatches.slice(0, 3))}`,
          );
          continue;
        }
        const samples = await new KernelTimer(rig, profiler, w).samples(call);
        ctx.emit({
          type: 'kernel',
          name: c.name,
          variant: c.kase.variant,
          shape: c.shape,
          samples,
          cost: c.cost,
        });
      } finally {
        rig.destroy();
      }
    }
    ctx.progress(cases.length, cases.length, 'kernel suite done');
  } finally {
    profiler.destroy();
  }
  ctx.check({
    name: `${cases.length} kernel shapes checked against the CPU reference before timing`,
    maxAbsErr: finiteError(maxAbsErr),
    maxRelErr: finiteError(maxRelErr),
    passed: failures.length === 0,
  });
  if (failures.length > 0) {
    throw new ReferenceMismatchError(
      `Kernels differ from the CPU reference, so they were not timed: ${failures.join('; ')}`,
    );
  }
};

/** The kernel suite's engine: its points are the run's generic ones, so it collects no section of its own. */
export const kernelsEngine: WorkloadEngine<'kernels'> = {
  run: kernelSuite,
  describe: () => '',
  collect: () => ({}),
  targets: () => [],
};
