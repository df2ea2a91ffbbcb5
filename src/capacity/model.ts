import { z } from 'zod';
import { InputError } from '../errors.ts';
import { isPresetName, PRESET_NAMES, PRESETS } from '../model/config.ts';
import { type GgufHeader, type GgufValue, ggufTensorBytes } from '../model/gguf.ts';

/**
 * A model as the capacity estimator sees it: the shape that sets its weights and KV cache, and,
 * when a file says so exactly (a GGUF tensor table), its weight bytes. It is deliberately looser
 * than the engine's ModelConfig: any decoder-only transformer with these fields can be planned
 * for, whether or not this tool can run it.
 */

/** Bytes per weight for each storage format: int8 and int4 carry one f16 scale per 32 weights (as Q8_0, Q4_0). */
export const WEIGHT_DTYPE_BYTES = { f32: 4, f16: 2, bf16: 2, int8: 34 / 32, int4: 18 / 32 } as const;
export type WeightDtype = keyof typeof WEIGHT_DTYPE_BYTES;
export const WEIGHT_DTYPES = Object.keys(WEIGHT_DTYPE_BYTES) as WeightDtype[];

const count = (max: number) => z.number().int('must be a whole number').positive('must be positive').max(max);

export const CapacityModelSchema = z
  .object({
    name: z.string().min(1).max(500),
    layers: count(1024),
    heads: count(1024),
    kvHeads: count(1024),
    headDim: count(4096),
    hidden: count(1 << 20),
    intermediate: count(1 << 22),
    vocab: count(1 << 24),
    tied: z.boolean(),
    /** The model's context length (max_position_embeddings, llama.context_length). */
    contextLength: count(1 << 24),
    /** Exact weight bytes when a file gives them (GGUF); otherwise computed from the shape and a dtype. */
    weightsBytes: z.number().positive().nullable(),
  })
  .strict()
  .superRefine((m, ctx) => {
    if (m.heads % m.kvHeads !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['kvHeads'],
        message: `heads (${m.heads}) must be a multiple of kvHeads (${m.kvHeads})`,
      });
    }
  });
export type CapacityModel = z.infer<typeof CapacityModelSchema>;

/** Validates a model, naming each bad field as `where` calls it (a config.json key, a GGUF key, a form field). */
function checked(
  candidate: Record<string, unknown>,
  source: string,
  names: Partial<Record<string, string>> = {},
) {
  const r = CapacityModelSchema.safeParse(candidate);
  if (r.success) return r.data;
  const text = r.error.issues
    .map((i) => {
      const field = String(i.path[0] ?? '(model)');
      return `${names[field] ?? field}: ${i.message}`;
    })
    .join('; ');
  throw new InputError(`Invalid model from ${source}: ${text}`);
}

/**
 * Parameters of a Llama-style decoder: embeddings, per layer q/k/v/o and the three MLP matrices
 * plus two norms, the final norm, and an LM head unless tied.
 */
export function llamaParameterCount(m: CapacityModel): number {
  const q = m.hidden * m.heads * m.headDim;
  const kv = 2 * m.hidden * m.kvHeads * m.headDim;
  const o = m.heads * m.headDim * m.hidden;
  const mlp = 3 * m.hidden * m.intermediate;
  const perLayer = q + kv + o + mlp + 2 * m.hidden;
  const embed = m.vocab * m.hidden;
  return embed + m.layers * perLayer + m.hidden + (m.tied ? 0 : embed);
}

/** Weight bytes: exact from a file when known, else parameters × the dtype's bytes per weight. */
export function weightsBytes(m: CapacityModel, dtype: WeightDtype): number {
  return m.weightsBytes ?? Math.ceil(llamaParameterCount(m) * WEIGHT_DTYPE_BYTES[dtype]);
}

export function capacityModelFromPreset(name: string): CapacityModel {
  if (!isPresetName(name)) {
    throw new InputError(`model: unknown preset "${name}". Known presets: ${PRESET_NAMES.join(', ')}`);
  }
  const c = PRESETS[name].config;
  return checked(
    {
      name,
      layers: c.numLayers,
      heads: c.numHeads,
      kvHeads: c.numKvHeads,
      headDim: c.headDim,
      hidden: c.hiddenSize,
      intermediate: c.intermediateSize,
      vocab: c.vocabSize,
      tied: c.tieWordEmbeddings,
      contextLength: c.maxSeqLen,
      weightsBytes: null,
    },
    `preset ${name}`,
  );
}

/** The config.json key each field comes from, so an error names what the person can fix. */
const HF_KEYS: Record<string, string> = {
  layers: 'num_hidden_layers',
  heads: 'num_attention_heads',
  kvHeads: 'num_key_value_heads',
  headDim: 'head_dim',
  hidden: 'hidden_size',
  intermediate: 'intermediate_size',
  vocab: 'vocab_size',
  tied: 'tie_word_embeddings',
  contextLength: 'max_position_embeddings',
};

/**
 * From a Hugging Face config.json of any decoder with the usual fields. A missing head_dim is
 * hidden_size ÷ num_attention_heads, which must divide exactly; a missing num_key_value_heads
 * means MHA (as transformers reads it).
 */
export function capacityModelFromHfConfig(json: unknown, source = 'config.json'): CapacityModel {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InputError(`Invalid model from ${source}: not a JSON object`);
  }
  const cfg = json as Record<string, unknown>;
  // Multimodal and some newer configs nest the language model's fields under text_config.
  const c =
    typeof cfg.text_config === 'object' && cfg.text_config !== null && !('num_hidden_layers' in cfg)
      ? (cfg.text_config as Record<string, unknown>)
      : cfg;
  const hidden = c.hidden_size;
  const heads = c.num_attention_heads;
  let headDim = c.head_dim;
  if (headDim == null && typeof hidden === 'number' && typeof heads === 'number') {
    headDim = hidden / heads;
    if (!Number.isInteger(headDim)) {
      throw new InputError(
        `Invalid model from ${source}: num_attention_heads: hidden_size ${hidden} is not divisible by num_attention_heads ${heads}, and there is no head_dim`,
      );
    }
  }
  return checked(
    {
      name: typeof c._name_or_path === 'string' && c._name_or_path ? c._name_or_path : source,
      layers: c.num_hidden_layers,
      heads,
      kvHeads: c.num_key_value_heads ?? heads,
      headDim,
      hidden,
      intermediate: c.intermediate_size,
      vocab: c.vocab_size,
      tied: c.tie_word_embeddings ?? cfg.tie_word_embeddings ?? false,
      contextLength: c.max_position_embeddings,
      weightsBytes: null,
    },
    source,
    HF_KEYS,
  );
}

function scalar(v: GgufValue | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/**
 * From a GGUF header of any architecture that uses llama.cpp's standard keys
 * (`{arch}.block_count`, `{arch}.attention.head_count_kv`, …). Weight bytes are exact: the sum of
 * the tensor table's sizes in their own block formats.
 */
export function capacityModelFromGguf(h: GgufHeader, source = 'GGUF file'): CapacityModel {
  const arch = h.metadata.get('general.architecture');
  if (typeof arch !== 'string')
    throw new InputError(`Invalid model from ${source}: general.architecture is missing`);
  const key = (k: string) => `${arch}.${k}`;
  const num = (k: string) => scalar(h.metadata.get(key(k)));
  const heads = num('attention.head_count');
  const hidden = num('embedding_length');
  const headDim = num('attention.key_length') ?? (hidden && heads ? hidden / heads : undefined);
  if (headDim !== undefined && !Number.isInteger(headDim)) {
    throw new InputError(
      `Invalid model from ${source}: ${key('attention.head_count')}: ${key('embedding_length')} ${hidden} is not divisible by ${heads}, and there is no ${key('attention.key_length')}`,
    );
  }
  const tokens = h.metadata.get('tokenizer.ggml.tokens');
  const vocab =
    num('vocab_size') ?? (typeof tokens === 'object' && 'length' in tokens ? tokens.length : undefined);
  const bytes = h.tensors.reduce((n, t) => n + ggufTensorBytes(t, source), 0);
  const name = h.metadata.get('general.name');
  return checked(
    {
      name: typeof name === 'string' && name ? name : source,
      layers: num('block_count'),
      heads,
      kvHeads: num('attention.head_count_kv') ?? heads,
      headDim,
      hidden,
      intermediate: num('feed_forward_length'),
      vocab,
      tied: !h.tensors.some((t) => t.name === 'output.weight'),
      contextLength: num('context_length'),
      weightsBytes: bytes > 0 ? bytes : null,
    },
    source,
    {
      layers: key('block_count'),
      heads: key('attention.head_count'),
      kvHeads: key('attention.head_count_kv'),
      headDim: key('attention.key_length'),
      hidden: key('embedding_length'),
      intermediate: key('feed_forward_length'),
      vocab: key('vocab_size'),
      contextLength: key('context_length'),
    },
  );
}

/** Hand-entered dimensions (the CLI's --dims, the page's fields); fields named as given. */
export function capacityModelFromDims(dims: Record<string, unknown>, source = 'dims'): CapacityModel {
  return checked(
    {
      name: source,
      tied: false,
      weightsBytes: null,
      ...dims,
      kvHeads: dims.kvHeads ?? dims.heads,
      headDim:
        dims.headDim ??
        (typeof dims.hidden === 'number' && typeof dims.heads === 'number'
          ? dims.hidden / dims.heads
          : undefined),
    },
    source,
  );
}
