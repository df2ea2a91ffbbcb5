import { WeightsError } from '../errors.ts';
import { readAsset } from './assets.ts';
import { type ModelConfig, presetConfig, presetFiles } from './config.ts';
import { loadGgufModel } from './gguf-load.ts';
import { presetTokenizer } from './preset-vocab.ts';
import { parseTaskSet, type TaskSlice } from './task-set.ts';
import type { Tokenizer } from './tokenizer/index.ts';
import { type ModelWeights, randomWeights } from './weights.ts';

/** A preset's weights: seeded random, or, for a model trained here, its shipped file. */
export interface PresetModel {
  weights: ModelWeights;
  tokenizer?: Tokenizer;
  warnings: string[];
  /** True where the weights were trained (a shipped file), false where seeded. */
  trained: boolean;
  /** The held-out evaluation set shipped with a trained preset, its recall prompts rebuilt. */
  taskSet?: TaskSlice[];
}

/**
 * The weights of preset `name`: a trained preset reads its GGUF from models/ beside the page (the
 * runtime's asset reader) and must match the shape the preset declares, since the cost model, the
 * capacity sums and the page's summary read that shape without the file; a seeded one draws random
 * weights from `seed`, with its family's vocabulary where the runtime has it.
 */
export async function presetModel(name: string, seed: number): Promise<PresetModel> {
  const config = presetConfig(name);
  const { file, evalFile } = presetFiles(name);
  if (!file) {
    // Without its vocab file (npm run dev, the kit) a preset runs as always, only without text.
    const { tokenizer } = await presetTokenizer(name, config.vocabSize);
    return { weights: randomWeights(config, seed), tokenizer, warnings: [], trained: false };
  }
  const bytes = await readAsset(`models/${file}`);
  if (!bytes) {
    throw new WeightsError(
      `${name} is a model trained here, shipped as models/${file}, and it is not beside this runtime: build the app (npm run build) to copy it into dist/models/`,
    );
  }
  const loaded = loadGgufModel(bytes, file);
  const mismatch = configMismatch(config, loaded.weights.config);
  if (mismatch) throw new WeightsError(`models/${file} does not have preset ${name}'s shape: ${mismatch}`);
  let taskSet: TaskSlice[] | undefined;
  if (evalFile) {
    const set = await readAsset(`models/${evalFile}`);
    if (!set)
      throw new WeightsError(
        `${name}'s evaluation set models/${evalFile} is not beside this runtime: build the app (npm run build)`,
      );
    taskSet = parseTaskSet(set, `models/${evalFile}`);
  }
  return {
    weights: loaded.weights,
    tokenizer: loaded.tokenizer,
    warnings: loaded.warnings,
    trained: true,
    taskSet,
  };
}

/** The first field where the file's config differs from the preset's, as text; undefined if none. */
function configMismatch(want: ModelConfig, got: ModelConfig): string | undefined {
  for (const [key, value] of Object.entries(want)) {
    const have = (got as unknown as Record<string, unknown>)[key];
    // GGUF stores floats as f32: eps 1e-5 reads back as 9.9999997e-6.
    const close =
      typeof have === 'number' &&
      typeof value === 'number' &&
      Math.abs(have - value) <= 1e-6 * Math.abs(value);
    if (!close && JSON.stringify(have) !== JSON.stringify(value))
      return `${key} is ${JSON.stringify(have)} in the file, ${JSON.stringify(value)} in the preset`;
  }
  return undefined;
}
