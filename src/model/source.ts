import { z } from 'zod';
import { WeightsError } from '../errors.ts';
import { blobSource, bytesSource } from './byte-source.ts';
import { loadGgufModel } from './gguf-load.ts';
import { loadHfModel } from './hf.ts';
import { presetModel } from './preset-weights.ts';
import type { TaskSlice } from './task-set.ts';
import type { Tokenizer } from './tokenizer/index.ts';
import type { ModelWeights } from './weights.ts';

/**
 * Where a model's weights come from: the one definition, used by the spec schema, the worker API,
 * the CLI and the page. It crosses the worker boundary, so it holds only clonable data.
 */
export const ModelSourceSchema = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('preset'), preset: z.string().min(1), seed: z.number().int().nonnegative() })
    .strict(),
  /**
   * A Hugging Face model folder served same-origin (the CLI serves `--model DIR` this way), or,
   * when `weightsFile` ends in .gguf, that llama.cpp file alone (it holds its own config).
   */
  z
    .object({ kind: z.literal('url'), baseUrl: z.string().min(1), weightsFile: z.string().min(1).optional() })
    .strict(),
  /**
   * Files the user picked in the page, as Blobs: config.json and model.safetensors, or a GGUF file
   * alone (`name` ending in .gguf, no config).
   */
  z
    .object({
      kind: z.literal('files'),
      config: z.instanceof(Blob).optional(),
      weights: z.instanceof(Blob),
      name: z.string(),
    })
    .strict(),
]);
export type ModelSource = z.infer<typeof ModelSourceSchema>;

export interface LoadedModel {
  name: string;
  weights: ModelWeights;
  warnings: string[];
  /** The file's own tokenizer (a GGUF that has one), or a preset's (its family's vocabulary, or a trained preset's file's). */
  tokenizer?: Tokenizer;
  /** A trained preset's held-out evaluation set (the format sweep scores it by slice). */
  taskSet?: TaskSlice[];
}

async function fetchOk(url: string): Promise<Response> {
  const res = await fetch(url);
  if (!res.ok) throw new WeightsError(`Could not load ${url}: HTTP ${res.status}`);
  return res;
}

/** A GGUF file is told by its name, as the page's picker and the CLI's --model see it. */
export function isGgufName(name: string): boolean {
  return name.toLowerCase().endsWith('.gguf');
}

/**
 * Resolves a source to weights: a preset's (seeded random f32, or a trained preset's shipped GGUF), parsed and validated safetensors
 * (f32) or GGUF (f32 and packed tensors as the file stores them) otherwise.
 */
export async function loadModel(source: ModelSource): Promise<LoadedModel> {
  switch (source.kind) {
    case 'preset': {
      const { weights, warnings, tokenizer, taskSet } = await presetModel(source.preset, source.seed);
      return { name: source.preset, weights, warnings, tokenizer, taskSet };
    }
    case 'url': {
      const base = source.baseUrl.endsWith('/') ? source.baseUrl : `${source.baseUrl}/`;
      const file = source.weightsFile ?? 'model.safetensors';
      if (isGgufName(file)) {
        const bytes = new Uint8Array(await (await fetchOk(`${base}${file}`)).arrayBuffer());
        const { weights, warnings, tokenizer } = loadGgufModel(bytes, file);
        return { name: file, weights, warnings, tokenizer };
      }
      const config: unknown = await (await fetchOk(`${base}config.json`)).json();
      const bytes = new Uint8Array(await (await fetchOk(`${base}${file}`)).arrayBuffer());
      const { weights, warnings } = loadHfModel(config, bytes, `${base}${file}`);
      return { name: base, weights, warnings };
    }
    case 'files': {
      if (isGgufName(source.name)) {
        // Read in slices, never whole, where the host reads a File synchronously (the page's engine
        // worker): a gigabyte file goes to the GPU a few MiB at a time. Elsewhere it is read whole.
        const sliced = blobSource(source.weights, source.name);
        const file = sliced.readSync
          ? sliced
          : bytesSource(new Uint8Array(await source.weights.arrayBuffer()), source.name);
        const { weights, warnings, tokenizer } = loadGgufModel(file, source.name);
        return { name: source.name, weights, warnings, tokenizer };
      }
      if (!source.config) throw new WeightsError(`${source.name}: a safetensors model needs its config.json`);
      const config: unknown = JSON.parse(await source.config.text());
      const bytes = new Uint8Array(await source.weights.arrayBuffer());
      const { weights, warnings } = loadHfModel(config, bytes, source.name);
      return { name: source.name, weights, warnings };
    }
  }
}
