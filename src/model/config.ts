import { z } from 'zod';
import { ConfigError } from '../errors.ts';

/**
 * A Llama-style model's shape. Field names are ours (camelCase); `hf.ts` maps them to and from
 * Hugging Face `config.json` names.
 *
 * Widths that a kernel reads along its reduction axis (hidden, intermediate, head dim) must be
 * multiples of 4, because every kernel reads them as vec4. Output widths (vocab) may be anything.
 */
export const ModelConfigSchema = z
  .object({
    vocabSize: z
      .number()
      .int()
      .min(2)
      .max(1 << 20),
    hiddenSize: z
      .number()
      .int()
      .min(4)
      .max(1 << 15)
      .refine((v) => v % 4 === 0, 'must be a multiple of 4 (kernels read it as vec4)'),
    intermediateSize: z
      .number()
      .int()
      .min(4)
      .max(1 << 17)
      .refine((v) => v % 4 === 0, 'must be a multiple of 4 (kernels read it as vec4)'),
    numLayers: z.number().int().min(1).max(256),
    numHeads: z.number().int().min(1).max(256),
    numKvHeads: z.number().int().min(1).max(256),
    headDim: z
      .number()
      .int()
      .min(4)
      .max(256)
      .refine((v) => v % 4 === 0, 'must be a multiple of 4 (vec4 reads; RoPE needs it even)'),
    ropeTheta: z.number().positive(),
    rmsNormEps: z.number().positive().max(1e-2),
    tieWordEmbeddings: z.boolean(),
    /** Longest sequence (prompt plus generated tokens) the engine will size its caches for. */
    maxSeqLen: z
      .number()
      .int()
      .min(1)
      .max(1 << 17),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.numHeads % c.numKvHeads !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['numKvHeads'],
        message: `numHeads (${c.numHeads}) must be a multiple of numKvHeads (${c.numKvHeads}) for grouped-query attention`,
      });
    }
  });

export type ModelConfig = z.infer<typeof ModelConfigSchema>;

/** Everything the engine needs to know to build a model: its shape and, for random weights, a seed. */
export interface Preset {
  /** What the preset mirrors, shown to users. */
  readonly description: string;
  readonly config: ModelConfig;
}

/**
 * Built-in presets. The laptop presets copy the real shapes from each model's Hugging Face
 * config.json; the weights are seeded random, so only the cost, not the text, is realistic.
 * Qwen2.5's q/k/v biases and Llama 3.2's RoPE scaling are not modelled (plain Llama RoPE).
 */
export const PRESETS = {
  'ci-tiny': {
    description: 'Tiny Llama for tests on a software adapter (odd-ish widths on purpose)',
    config: {
      vocabSize: 509,
      hiddenSize: 128,
      intermediateSize: 344,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 32,
      ropeTheta: 10000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 1024,
    },
  },
  'smollm2-135m': {
    description: 'Shape of HuggingFaceTB/SmolLM2-135M',
    config: {
      vocabSize: 49152,
      hiddenSize: 576,
      intermediateSize: 1536,
      numLayers: 30,
      numHeads: 9,
      numKvHeads: 3,
      headDim: 64,
      ropeTheta: 100000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 2048,
    },
  },
  'smollm2-360m': {
    description: 'Shape of HuggingFaceTB/SmolLM2-360M',
    config: {
      vocabSize: 49152,
      hiddenSize: 960,
      intermediateSize: 2560,
      numLayers: 32,
      numHeads: 15,
      numKvHeads: 5,
      headDim: 64,
      ropeTheta: 100000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 2048,
    },
  },
  'qwen2.5-0.5b': {
    description: 'Shape of Qwen/Qwen2.5-0.5B (without q/k/v biases)',
    config: {
      vocabSize: 151936,
      hiddenSize: 896,
      intermediateSize: 4864,
      numLayers: 24,
      numHeads: 14,
      numKvHeads: 2,
      headDim: 64,
      ropeTheta: 1000000,
      rmsNormEps: 1e-6,
      tieWordEmbeddings: true,
      maxSeqLen: 2048,
    },
  },
  'llama-3.2-1b': {
    description: 'Shape of meta-llama/Llama-3.2-1B (without llama3 RoPE scaling)',
    config: {
      vocabSize: 128256,
      hiddenSize: 2048,
      intermediateSize: 8192,
      numLayers: 16,
      numHeads: 32,
      numKvHeads: 8,
      headDim: 64,
      ropeTheta: 500000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 2048,
    },
  },
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;

export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

/** Validates an untrusted config and names each offending field in the error. */
export function parseModelConfig(input: unknown, source = 'model config'): ModelConfig {
  const parsed = ModelConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new ConfigError(`Invalid ${source}: ${problems.join('; ')}`);
}

export function presetConfig(name: string): ModelConfig {
  if (!isPresetName(name)) {
    throw new ConfigError(`Unknown preset "${name}". Known presets: ${PRESET_NAMES.join(', ')}`);
  }
  return { ...PRESETS[name].config };
}

/** Widths derived once from a config, so no module recomputes them differently. */
export function dims(c: ModelConfig) {
  return {
    d: c.hiddenSize,
    ffn: c.intermediateSize,
    vocab: c.vocabSize,
    layers: c.numLayers,
    heads: c.numHeads,
    kvHeads: c.numKvHeads,
    headDim: c.headDim,
    qWidth: c.numHeads * c.headDim,
    kvWidth: c.numKvHeads * c.headDim,
    /** Query heads that share one KV head. */
    groupSize: c.numHeads / c.numKvHeads,
  };
}
