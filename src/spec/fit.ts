import { SpecError } from '../errors.ts';
import type { ModelConfig } from '../model/config.ts';
import { linearNames, linearShape } from '../model/weights.ts';
import { quantTypeOf } from '../quant/formats.ts';
import { isQuantFormat, type RunWeightFormat } from '../weight-format.ts';
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

/**
 * Why the model's linear layers cannot be put in `format`, or null when they can: a GGUF block type
 * stores each row as whole blocks (32 weights, 256 for Q4_K), and a row of another width has no
 * such form (llama-quantize would put that tensor in another type; this engine does not switch
 * types behind a label). The project's own formats pack any preset's widths.
 */
export function formatWidthError(format: RunWeightFormat, config: ModelConfig): string | null {
  if (!isQuantFormat(format)) return null;
  const type = quantTypeOf(format);
  const widths = [...new Set(linearNames(config).map((name) => linearShape(config, name)[1]))];
  const odd = widths.filter((K) => K % type.blockElems !== 0);
  if (odd.length === 0) return null;
  return `${format}: ${type.name} stores each row as whole blocks of ${type.blockElems} weights, and this model has rows of ${odd.join(' and ')} weights`;
}

/**
 * Fitting a spec's weight formats to the model's widths (formatWidthError). The run's own format
 * (`--weights`) is an error when it does not fit; a format sweep's list follows fitToModel's rule:
 * a format that does not fit is dropped with a warning for a named suite (the formats suite lists
 * every format by default), an error in a custom spec.
 */
export function fitToWidths(
  spec: BenchSpec,
  config: ModelConfig,
): { spec: BenchSpec; dropped: string[]; errors: string[] } {
  const errors: string[] = [];
  const own = formatWidthError(spec.weights, config);
  if (own) errors.push(own);
  const dropped: string[] = [];
  const workloads = spec.workloads.map((w) => {
    if (w.kind !== 'formats') return w;
    const unfit = w.formats.flatMap((f) => {
      const why = formatWidthError(f, config);
      return why ? [{ format: f, why }] : [];
    });
    if (unfit.length === 0) return w;
    (spec.suite === 'custom' ? errors : dropped).push(...unfit.map((u) => u.why));
    const left = w.formats.filter((f) => !unfit.some((u) => u.format === f));
    // f32 is the sweep's reference and always fits.
    return { ...w, formats: left.length > 0 ? left : (['f32'] as RunWeightFormat[]) };
  });
  return { spec: { ...spec, workloads }, dropped, errors };
}

/** The slices a spec names (`--task-slices`) that the model's held-out set does not have, as messages. */
export function taskSliceErrors(spec: BenchSpec, slices: readonly string[], model: string): string[] {
  return spec.workloads.flatMap((w) => {
    const named = 'taskSlices' in w ? (w.taskSlices ?? []) : [];
    const unknown = named.filter((n) => !slices.includes(n));
    if (unknown.length === 0) return [];
    const have = slices.length > 0 ? slices.join(', ') : 'it has none';
    return [
      `--task-slices: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a slice of ${model}'s held-out set (${have})`,
    ];
  });
}
