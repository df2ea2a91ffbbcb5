import { z } from 'zod';
import { WeightsError } from '../errors.ts';
import { presetConfig } from './config.ts';
import { loadHfModel } from './hf.ts';
import { type ModelWeights, randomWeights } from './weights.ts';

/**
 * Where a model's weights come from: the one definition, used by the spec schema, the worker API,
 * the CLI and the page. It crosses the worker boundary, so it holds only clonable data.
 */
export const ModelSourceSchema = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('preset'), preset: z.string().min(1), seed: z.number().int().nonnegative() })
    .strict(),
  /** A Hugging Face model folder served same-origin (the CLI serves `--model DIR` this way). */
  z
    .object({ kind: z.literal('url'), baseUrl: z.string().min(1), weightsFile: z.string().min(1).optional() })
    .strict(),
  /** Files the user picked in the page: config.json and model.safetensors, as Blobs. */
  z
    .object({
      kind: z.literal('files'),
      config: z.instanceof(Blob),
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
}

async function fetchOk(url: string): Promise<Response> {
  const res = await fetch(url);
  if (!res.ok) throw new WeightsError(`Could not load ${url}: HTTP ${res.status}`);
  return res;
}

/** Resolves a source to f32 weights: seeded random for presets, parsed and validated safetensors otherwise. */
export async function loadModel(source: ModelSource): Promise<LoadedModel> {
  switch (source.kind) {
    case 'preset':
      return {
        name: source.preset,
        weights: randomWeights(presetConfig(source.preset), source.seed),
        warnings: [],
      };
    case 'url': {
      const base = source.baseUrl.endsWith('/') ? source.baseUrl : `${source.baseUrl}/`;
      const config: unknown = await (await fetchOk(`${base}config.json`)).json();
      const file = source.weightsFile ?? 'model.safetensors';
      const bytes = new Uint8Array(await (await fetchOk(`${base}${file}`)).arrayBuffer());
      const { weights, warnings } = loadHfModel(config, bytes, `${base}${file}`);
      return { name: base, weights, warnings };
    }
    case 'files': {
      const config: unknown = JSON.parse(await source.config.text());
      const bytes = new Uint8Array(await source.weights.arrayBuffer());
      const { weights, warnings } = loadHfModel(config, bytes, source.name);
      return { name: source.name, weights, warnings };
    }
  }
}
