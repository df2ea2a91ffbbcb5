import { InputError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import type { KernelVariants } from '../kernels/variants.ts';
import { Model } from '../model/forward.ts';
import { presetModel } from '../model/preset-weights.ts';
import { type ModelWeights, truncatedWeights } from '../model/weights.ts';
import { type DrafterSpec, drafterLabel, parseDrafterSpec } from '../spec/drafter.ts';
import { type Drafter, ngramDrafter, oracleDrafter } from './drafters.ts';
import { modelDrafter } from './model-drafter.ts';

/** Why a draft model cannot run beside the target: errors that mean "it does not fit". */
const DOES_NOT_FIT = new Set(['GpuOutOfMemoryError', 'DeviceLimitError', 'KvCacheExhaustedError']);

/**
 * The draft model a drafter names (`model:PRESET`: that preset's weights, seeded or trained;
 * `truncated:N`: the target's first N layers), on the target's device with its own paged KV cache
 * of `capacityTokens` and the target's kernel families; null for drafters without a model. A
 * vocabulary that differs from the target's, or a draft that does not fit beside the target, is
 * bad input and says so.
 */
export async function createDraftModel(
  text: string,
  target: {
    gpu: Gpu;
    weights: ModelWeights;
    pipelines: PipelineCache;
    variants: KernelVariants;
    pageSize: number;
  },
  o: { seed: number; capacityTokens: number },
): Promise<Model | null> {
  const spec = parseDrafterSpec(text);
  if (typeof spec === 'string') throw new InputError(spec);
  if (spec.kind !== 'model' && spec.kind !== 'truncated') return null;
  const vocab = target.weights.config.vocabSize;
  if (spec.kind === 'truncated' && spec.layers >= target.weights.config.numLayers) {
    throw new InputError(
      `truncated:${spec.layers} keeps ${spec.layers} layers of a ${target.weights.config.numLayers}-layer target: a truncated draft needs fewer layers than the target`,
    );
  }
  const weights =
    spec.kind === 'model'
      ? (await presetModel(spec.preset, o.seed)).weights
      : truncatedWeights(target.weights, spec.layers);
  if (weights.config.vocabSize !== vocab) {
    throw new InputError(
      `draft ${text} has a vocabulary of ${weights.config.vocabSize} tokens and the target ${vocab}: a draft must share the target's vocabulary`,
    );
  }
  try {
    return await Model.create(
      target.gpu,
      weights,
      {
        kv: { mode: 'paged', pageSize: target.pageSize, capacityTokens: o.capacityTokens },
        maxBatch: 1,
        pipelines: target.pipelines,
        variants: target.variants,
      },
      `draft ${text}`,
    );
  } catch (e) {
    if (e instanceof Error && DOES_NOT_FIT.has(e.name)) {
      throw new InputError(`draft ${text} does not fit in GPU memory beside the target: ${e.message}`);
    }
    throw e;
  }
}

/**
 * A fresh drafter for one prompt. The oracle needs the target's own greedy continuation
 * (`reference`, from plain decode of the same prompt); a model drafter needs its draft model.
 */
export function makeDrafter(
  spec: DrafterSpec,
  draft: Model | null | undefined,
  o: { promptLength: number; reference: readonly number[]; vocab: number; seed: number },
): Drafter {
  switch (spec.kind) {
    case 'ngram':
      return ngramDrafter(spec.minN, spec.maxN);
    case 'oracle':
      return oracleDrafter({
        promptLength: o.promptLength,
        reference: o.reference,
        p: spec.p,
        vocab: o.vocab,
        seed: o.seed,
      });
    case 'model':
    case 'truncated':
      if (!draft) throw new InputError(`no draft model was built for ${drafterLabel(spec)}`);
      return modelDrafter(draft, drafterLabel(spec));
  }
}
