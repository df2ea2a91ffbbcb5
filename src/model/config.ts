import { z } from 'zod';
import { ConfigError } from '../errors.ts';

/**
 * A Llama-style model's shape. Field names are ours (camelCase); `hf.ts` maps them to and from
 * Hugging Face `config.json` names.
 *
 * Widths that a kernel reads along its reduction axis (hidden, intermediate, head dim) must be
 * multiples of 4, because every kernel reads them as vec4. Output widths (vocab) may be anything.
 */
/** The architectures a model can be: each is Llama plus what it adds (see archFeatures). */
export const ARCHITECTURES = ['llama', 'qwen2', 'qwen3'] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

/**
 * RoPE scaling. `llama3`: Llama 3.1/3.2's per-frequency factors from HF's four `rope_scaling`
 * parameters (rope_type "llama3"); `factors`: the same kind of per-pair divisors given outright, as
 * a llama.cpp file stores them (`rope_freqs.weight`, headDim/2 of them); `linear`: every position
 * divided by `factor` (position interpolation; GGUF rope.scaling.type "linear").
 */
export const RopeScalingSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('llama3'),
      factor: z.number().positive(),
      lowFreqFactor: z.number().positive(),
      highFreqFactor: z.number().positive(),
      originalMaxPositions: z.number().int().positive(),
    })
    .strict(),
  z
    .object({ type: z.literal('factors'), factors: z.array(z.number().positive().finite()).max(128) })
    .strict(),
  z.object({ type: z.literal('linear'), factor: z.number().positive() }).strict(),
]);
export type RopeScaling = z.infer<typeof RopeScalingSchema>;

export const ModelConfigSchema = z
  .object({
    /** What the model adds to Llama (absent: plain llama): qwen2 q/k/v biases, qwen3 per-head q/k RMSNorm. */
    arch: z.enum(ARCHITECTURES).optional(),
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
    /** RoPE frequency scaling; absent: none. */
    ropeScaling: RopeScalingSchema.optional(),
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
    if (c.ropeScaling?.type === 'factors' && c.ropeScaling.factors.length !== c.headDim / 2) {
      ctx.addIssue({
        code: 'custom',
        path: ['ropeScaling'],
        message: `holds ${c.ropeScaling.factors.length} RoPE frequency factors; a head of ${c.headDim} has ${c.headDim / 2} pairs`,
      });
    }
  });

export type ModelConfig = z.infer<typeof ModelConfigSchema>;

/**
 * What an architecture adds to the Llama forward, as the graph plan, the CPU reference, the cost
 * model and the file readers and writers ask it:
 * - `qkvBias`: q, k and v projections add a bias (Qwen2);
 * - `qkNorm`: q and k are RMS-normalized per head, with a weight of headDim, before RoPE (Qwen3);
 * - `neoxRope`: llama.cpp rotates (i, i + headDim/2) pairs, as HF does, so its converter leaves
 *   q/k rows as they are; for `llama` it rotates adjacent pairs and permutes the rows instead.
 */
export function archFeatures(c: Pick<ModelConfig, 'arch'>): {
  qkvBias: boolean;
  qkNorm: boolean;
  neoxRope: boolean;
} {
  const arch = c.arch ?? 'llama';
  return { qkvBias: arch === 'qwen2', qkNorm: arch === 'qwen3', neoxRope: arch !== 'llama' };
}

/** Everything the engine needs to know to build a model: its shape and, for random weights, a seed. */
export interface Preset {
  /** What the preset mirrors, shown to users. */
  readonly description: string;
  readonly config: ModelConfig;
  /**
   * A model trained here and shipped as models/<file> (an F16 GGUF with its tokenizer; train/):
   * its weights come from that file, not from a seed, and the file's config must equal `config`.
   */
  readonly file?: string;
  /** The held-out evaluation set shipped beside `file` (models/<evalFile>; train/ship.py), which the format sweep scores by slice. */
  readonly evalFile?: string;
}

/**
 * Built-in presets. The laptop presets copy the real shapes from each model's Hugging Face
 * config.json, its architecture's additions included (Qwen2.5's q/k/v biases, Qwen3's q/k norms,
 * Llama 3.2's RoPE scaling); the weights are seeded random, so only the cost, not the text, is realistic.
 */
export const PRESETS = {
  'trained-4m': {
    description:
      "A 4.07M-parameter Llama trained here for about 3 hours on 2 CPU cores (Debian's files and generated tasks; docs/trained-model.md): it adds two-digit numbers, recalls a passkey up to 512 tokens back, completes JSON objects, copies strings and writes man-page-like and Python-like text; longer arithmetic and recall 1,024 tokens back are mostly wrong; not a product model",
    file: 'trained-4m.gguf',
    evalFile: 'trained-4m-eval.json',
    config: {
      vocabSize: 4096,
      hiddenSize: 256,
      intermediateSize: 768,
      numLayers: 4,
      numHeads: 8,
      numKvHeads: 2,
      headDim: 32,
      ropeTheta: 10000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 1152,
    },
  },
  'trained-4m-drafter': {
    description:
      "trained-4m's drafter: 1 layer, d 128, the same tokenizer, trained here on the same corpus at sequences of 256 (docs/trained-model.md)",
    file: 'trained-4m-drafter.gguf',
    config: {
      vocabSize: 4096,
      hiddenSize: 128,
      intermediateSize: 256,
      numLayers: 1,
      numHeads: 4,
      numKvHeads: 1,
      headDim: 32,
      ropeTheta: 10000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 1152,
    },
  },
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
    description: 'Shape of Qwen/Qwen2.5-0.5B',
    config: {
      arch: 'qwen2',
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
    description: 'Shape of meta-llama/Llama-3.2-1B',
    config: {
      vocabSize: 128256,
      hiddenSize: 2048,
      intermediateSize: 8192,
      numLayers: 16,
      numHeads: 32,
      numKvHeads: 8,
      headDim: 64,
      ropeTheta: 500000,
      ropeScaling: {
        type: 'llama3',
        factor: 32,
        lowFreqFactor: 1,
        highFreqFactor: 4,
        originalMaxPositions: 8192,
      },
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 2048,
    },
  },
  'qwen3-0.6b': {
    description: 'Shape of Qwen/Qwen3-0.6B',
    config: {
      arch: 'qwen3',
      vocabSize: 151936,
      hiddenSize: 1024,
      intermediateSize: 3072,
      numLayers: 28,
      numHeads: 16,
      numKvHeads: 8,
      headDim: 128,
      ropeTheta: 1000000,
      rmsNormEps: 1e-6,
      tieWordEmbeddings: true,
      maxSeqLen: 2048,
    },
  },
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;

/** A preset's shipped files (a trained preset's GGUF and evaluation set); none for a seeded one or an unknown name. */
export function presetFiles(name: string): Pick<Preset, 'file' | 'evalFile'> {
  return isPresetName(name) ? (PRESETS[name] as Preset) : {};
}

/** The files the trained presets ship in models/ (the build copies them into dist/models/). */
export const TRAINED_FILES: readonly string[] = Object.values(PRESETS as Record<string, Preset>).flatMap(
  (p) => [...(p.file ? [p.file] : []), ...(p.evalFile ? [p.evalFile] : [])],
);

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
  return structuredClone(PRESETS[name].config) as ModelConfig;
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
