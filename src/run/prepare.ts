import { InputError, SpecError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import { DRAM_BOUND_MIN_BYTES } from '../measure/roofline.ts';
import { presetConfig } from '../model/config.ts';
import { type LoadedModel, loadModel } from '../model/source.ts';
import { parameterCount } from '../model/weights.ts';
import { assertFits, fitToModel, fitToWidths, modelErrors, taskSliceErrors } from '../spec/fit.ts';
import { type EngineNeeds, engineNeeds } from '../spec/needs.ts';
import { fitToPrompt, promptUnfit } from '../spec/prompt.ts';
import type { BenchSpec } from '../spec/schema.ts';
import { BYTES } from '../weight-format.ts';
import { checkGenerationFits, promptIds } from './generate.ts';

/** A spec made ready to run: its model loaded, its workloads fitted to the model, the engine sized. */
export interface PreparedRun {
  loaded: LoadedModel;
  /** The spec with the values the model cannot hold dropped (a named suite) or rejected (typed values). */
  spec: BenchSpec;
  needs: EngineNeeds;
  loadMs: number;
  warnings: string[];
  /** The prompt text's tokens (`spec.prompt`), which the sweeps cut their prompts from; absent without one. */
  promptTokens?: number[];
  /** The ids of the prompt to generate from after the workloads (`spec.generate`). */
  generateIds?: number[];
}

/**
 * Before any measurement: the model and the fit of the spec to it. Bad input (a spec the model
 * cannot hold, a broken model file) rejects here, before anything is timed.
 */
export async function prepareRun(gpu: Gpu, spec: BenchSpec): Promise<PreparedRun> {
  const warnings: string[] = [];
  if (gpu.adapter.isFallbackAdapter) {
    warnings.push('Fallback (software) adapter: these numbers measure a CPU emulation, not a GPU.');
  }
  if (!gpu.hasTimestamps) warnings.push('No timestamp-query: every point is timed by the wall clock only.');

  const tLoad = performance.now();
  const loaded: LoadedModel =
    !engineNeeds(spec).model && spec.model.kind === 'preset'
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
  const unusable = modelErrors(spec, config);
  if (unusable.length > 0) throw new SpecError(unusable.join('; '));
  for (const d of fitted.dropped) warnings.push(`Skipped ${d.message}.`);
  // The task table scores a held-out set: only a trained preset ships one.
  if (spec.workloads.some((w) => w.kind === 'tasks') && !loaded.taskSet) {
    throw new SpecError(
      `the tasks workload scores a model's held-out set, and ${loaded.name} has none (a trained preset such as trained-4m has)`,
    );
  }
  const slices = taskSliceErrors(
    spec,
    (loaded.taskSet ?? []).map((s) => s.name),
    loaded.name,
  );
  if (slices.length > 0) throw new SpecError(slices.join('; '));
  const widths = fitToWidths(fitted.spec, config);
  if (widths.errors.length > 0) throw new SpecError(widths.errors.join('; '));
  for (const d of widths.dropped) warnings.push(`Skipped ${d}.`);
  fitted.spec = widths.spec;
  if (fitted.spec.workloads.length === 0) {
    throw new InputError(
      `Nothing of the ${spec.suite} suite fits this model's maxSeqLen of ${config.maxSeqLen}.`,
    );
  }
  // A prompt text: the sweeps' prompts are cut from its tokens, so each L and depth needs as many.
  let promptTokens: number[] | undefined;
  if (fitted.spec.prompt) {
    promptTokens = promptIds(loaded.tokenizer, fitted.spec.prompt.text, loaded.name);
    const short = promptUnfit(fitted.spec.workloads, promptTokens.length);
    if (fitted.spec.suite === 'custom') assertFits(short);
    for (const d of short) warnings.push(`Skipped ${d.message}.`);
    fitted.spec = { ...fitted.spec, workloads: fitToPrompt(fitted.spec.workloads, promptTokens.length) };
    if (fitted.spec.workloads.length === 0) {
      throw new InputError(
        `Nothing of the ${spec.suite} suite fits the prompt text's ${promptTokens.length} tokens: give a longer text, or --prefill and --depth values it holds.`,
      );
    }
  }
  let generateIds: number[] | undefined;
  if (fitted.spec.generate) {
    generateIds = promptIds(loaded.tokenizer, fitted.spec.generate.prompt, loaded.name);
    checkGenerationFits(generateIds.length, fitted.spec.generate.maxTokens, config.maxSeqLen);
  }
  const needs = engineNeeds(fitted.spec);
  // The generation runs on the run's model after the workloads: its prompt and tokens in one sequence.
  if (generateIds && fitted.spec.generate) {
    needs.maxPrompt = Math.max(needs.maxPrompt, generateIds.length);
    needs.maxContextTokens = Math.max(
      needs.maxContextTokens,
      generateIds.length + fitted.spec.generate.maxTokens,
    );
  }
  const f32Bytes = parameterCount(config) * BYTES.f32;
  if (needs.model && f32Bytes < DRAM_BOUND_MIN_BYTES && needs.decodeContext > 0) {
    warnings.push(
      `The weights (${(f32Bytes / 2 ** 20).toFixed(1)} MiB in f32) may fit in a GPU's last-level cache (up to ${DRAM_BOUND_MIN_BYTES / 2 ** 20} MiB on some): decode then measures cache bandwidth, not DRAM.`,
    );
  }
  return { loaded, spec: fitted.spec, needs, loadMs, warnings, promptTokens, generateIds };
}
