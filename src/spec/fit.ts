import { SpecError } from '../errors.ts';
import type { ModelConfig } from '../model/config.ts';
import type { BenchSpec } from './schema.ts';
import { type Unfit, windowErrors } from './workload.ts';
import { descriptorOf, type Workload } from './workloads/index.ts';

/**
 * Fitting a spec to a model: the one maxSeqLen rule, applied through each workload's descriptor.
 * Drops the sweep values a model of `maxSeqLen` cannot hold. For a named suite that is a warning
 * (the suite was not written for this model); for values a person typed it is an error. A
 * workload left with no values is dropped.
 */
export function fitToModel(
  spec: BenchSpec,
  maxSeqLen: number,
): { spec: BenchSpec; dropped: Unfit[]; errors: Unfit[] } {
  const unfit = spec.workloads.flatMap((w) => descriptorOf(w).unfit(w, maxSeqLen));
  if (spec.suite === 'custom') return { spec, dropped: [], errors: unfit };
  // An imported trace is what a person gave: a request it holds that the model cannot is an error.
  const traced = unfit.filter((u) => u.option === 'trace');
  if (traced.length > 0) return { spec, dropped: [], errors: traced };
  const workloads = spec.workloads.flatMap((w): Workload[] => {
    const fitted = descriptorOf(w).fit(w, maxSeqLen);
    return fitted ? [fitted] : [];
  });
  return { spec: { ...spec, workloads }, dropped: unfit, errors: [] };
}

/** Throws a SpecError for values a person asked for that the model cannot hold. */
export function assertFits(errors: readonly Unfit[]): void {
  if (errors.length > 0) throw new SpecError(errors.map((e) => e.message).join('; '));
}

/**
 * Problems of a spec with a model that no dropping of values mends, found before anything is
 * measured: the run's window against the model (`--window`), and each workload's own (a draft
 * model whose vocabulary differs from the target's, a KV head count that does not divide the heads).
 */
export function modelErrors(spec: BenchSpec, config: ModelConfig): string[] {
  return [
    ...windowErrors(spec.kv.window, spec.kv.pageSize, config.maxSeqLen),
    ...workloadModelErrors(spec, config),
  ];
}

/** The workloads' own problems with the model, as `modelErrors` finds them (the window's left out). */
export function workloadModelErrors(spec: BenchSpec, config: ModelConfig): string[] {
  return spec.workloads.flatMap((w) => descriptorOf(w).modelErrors(w, config, spec.kv));
}
