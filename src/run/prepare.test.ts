import { describe, expect, it } from 'vitest';
import { SpecError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import { taskSliceErrors } from '../spec/fit.ts';
import { specFromOptions } from '../spec/options.ts';
import { prepareRun } from './prepare.ts';

/**
 * What prepareRun refuses before anything is measured (no GPU is touched before these checks: the
 * adapter is read only for its warnings).
 */
const gpu = { adapter: { isFallbackAdapter: false }, hasTimestamps: true } as unknown as Gpu;
const tiny = { kind: 'preset', preset: 'ci-tiny', seed: 0 } as const;

describe('prepareRun', () => {
  it('refuses a task table for a model without a held-out set, naming the model', async () => {
    const spec = specFromOptions(tiny, {});
    const withTasks = { ...spec, workloads: [...spec.workloads, { kind: 'tasks' as const, taskTokens: 64 }] };
    await expect(prepareRun(gpu, withTasks)).rejects.toThrow(SpecError);
    await expect(prepareRun(gpu, withTasks)).rejects.toThrow(/ci-tiny has none/);
  });

  it('refuses a held-out slice the model does not have, listing the ones it has', async () => {
    const trained = { kind: 'preset', preset: 'trained-4m', seed: 0 } as const;
    const spec = specFromOptions(trained, { suite: 'formats', taskSlices: ['json', 'poetry'] });
    expect(spec.workloads[0]).toMatchObject({ kind: 'formats', taskSlices: ['json', 'poetry'] });
    expect(taskSliceErrors(spec, ['add-2digit', 'json', 'prose'], 'trained-4m')).toEqual([
      "--task-slices: poetry is not a slice of trained-4m's held-out set (add-2digit, json, prose)",
    ]);
    expect(taskSliceErrors(spec, [], 'ci-tiny')).toEqual([
      "--task-slices: json, poetry are not a slice of ci-tiny's held-out set (it has none)",
    ]);
    // Named in the quick suite's task table too.
    const quick = specFromOptions(trained, { taskSlices: ['json'] });
    expect(quick.workloads.at(-1)).toEqual({ kind: 'tasks', taskTokens: 64, taskSlices: ['json'] });
    expect(taskSliceErrors(quick, ['json'], 'trained-4m')).toEqual([]);
  });

  it("refuses a run format the model's rows cannot hold, and skips it from a named suite's sweep", async () => {
    await expect(prepareRun(gpu, specFromOptions(tiny, { weights: ['q4_k'] }))).rejects.toThrow(
      'q4_k: Q4_K stores each row as whole blocks of 256 weights, and this model has rows of 128 and 344 weights',
    );
    const sweep = await prepareRun(gpu, specFromOptions(tiny, { suite: 'formats' }));
    expect(sweep.spec.workloads[0]).toMatchObject({
      kind: 'formats',
      formats: ['f32', 'f16', 'int8', 'int4'],
    });
    expect(sweep.warnings.filter((w) => w.startsWith('Skipped q'))).toHaveLength(3);
  });
});
