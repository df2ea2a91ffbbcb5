import { ConfigError, WeightsError } from '../errors.ts';
/**
 * Hugging Face Llama layout: our ModelConfig to and from `config.json`, and our weights to and from
 * the tensors of a `model.safetensors` that `LlamaForCausalLM.from_pretrained` loads. Tensor names
 * and [out, in] shapes already follow HF (see `tensorSpecs`), so only presence and shape are checked.
 */
import { type Architecture, type ModelConfig, parseModelConfig, type RopeScaling } from './config.ts';
import { type NamedTensor, parseSafetensors, serializeSafetensors } from './safetensors.ts';
import { elementCount, get, type ModelWeights, tensorSpecs } from './weights.ts';

/** Defaults we apply when an HF config omits a field; they are the defaults of transformers' LlamaConfig. */
const HF_DEFAULTS = {
  /** LlamaConfig defaults to untied; tied models (SmolLM2, Qwen2.5, Llama 3.2) say so explicitly. */
  tieWordEmbeddings: false,
  rmsNormEps: 1e-6,
  ropeTheta: 10000,
  hiddenAct: 'silu',
  /** Cap on the KV-cache length taken from max_position_embeddings (often 8k–128k, far past a benchmark's needs). */
  maxSeqLenCap: 2048,
} as const;

/** The KV-cache length cap on a checkpoint's context length (HF's max_position_embeddings, GGUF's context_length). */
export const MAX_SEQ_LEN_CAP = HF_DEFAULTS.maxSeqLenCap;

/**
 * `model_type`s whose checkpoints compute what our forward computes, each with the architecture it
 * is (Mistral is Llama; its sliding window is warned about, see fromHfConfig).
 */
const HF_MODEL_TYPES: Record<string, Architecture> = {
  llama: 'llama',
  mistral: 'llama',
  qwen2: 'qwen2',
  qwen3: 'qwen3',
};

/** transformers' class for each architecture, as config.json's `architectures` names it. */
const HF_CLASSES: Record<Architecture, string> = {
  llama: 'LlamaForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
};

/** HF's `rope_scaling` object for our RoPE scaling (null when none). */
function hfRopeScaling(s: RopeScaling | undefined): Record<string, unknown> | null {
  if (!s) return null;
  if (s.type === 'linear') return { rope_type: 'linear', factor: s.factor };
  if (s.type === 'llama3')
    return {
      rope_type: 'llama3',
      factor: s.factor,
      low_freq_factor: s.lowFreqFactor,
      high_freq_factor: s.highFreqFactor,
      original_max_position_embeddings: s.originalMaxPositions,
    };
  // Per-pair factors (from a GGUF) have no HF rope_scaling form.
  throw new ConfigError(
    'RoPE frequency factors read from a GGUF file have no Hugging Face rope_scaling form; save it as GGUF',
  );
}

/** transformers maps both names to nn.SiLU, the gate activation of SwiGLU. */
const SILU_NAMES: readonly string[] = ['silu', 'swish'];

/** A config.json for `LlamaForCausalLM` with exactly our model's shape, weights stored as f32. */
export function toHfConfig(config: ModelConfig): Record<string, unknown> {
  return {
    architectures: [HF_CLASSES[config.arch ?? 'llama']],
    model_type: config.arch ?? 'llama',
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numKvHeads,
    head_dim: config.headDim,
    hidden_act: 'silu',
    max_position_embeddings: config.maxSeqLen,
    rms_norm_eps: config.rmsNormEps,
    rope_theta: config.ropeTheta,
    rope_scaling: hfRopeScaling(config.ropeScaling),
    // Qwen2 has its q/k/v biases whatever this says; Llama and Qwen3 have none.
    attention_bias: false,
    mlp_bias: false,
    tie_word_embeddings: config.tieWordEmbeddings,
    torch_dtype: 'float32',
    // Random weights come with no tokenizer, so there are no special tokens to name.
    bos_token_id: null,
    eos_token_id: null,
    initializer_range: 0.02,
    pretraining_tp: 1,
    use_cache: true,
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Our RoPE scaling from HF's `rope_scaling` (null or absent: none); kinds we cannot compute are refused. */
function ropeScalingFromHf(v: unknown, bad: (problem: string) => Error): RopeScaling | undefined {
  if (v == null) return undefined;
  if (!isRecord(v)) throw bad(`rope_scaling must be an object or null, got ${JSON.stringify(v)}`);
  const kind = v.rope_type ?? v.type;
  const field = (name: string, fallback?: number) => {
    const x = v[name] ?? fallback;
    if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0)
      throw bad(`rope_scaling.${name} must be a positive number, got ${JSON.stringify(x)}`);
    return x;
  };
  if (kind === 'default') return undefined;
  if (kind === 'linear') return { type: 'linear', factor: field('factor') };
  if (kind === 'llama3')
    return {
      type: 'llama3',
      factor: field('factor'),
      lowFreqFactor: field('low_freq_factor', 1),
      highFreqFactor: field('high_freq_factor', 4),
      originalMaxPositions: field('original_max_position_embeddings', 8192),
    };
  throw bad(`rope_scaling type ${JSON.stringify(kind)} is not supported (llama3 and linear are)`);
}

/**
 * Reads a Llama-family HF config.json (llama, mistral, qwen2, qwen3) into our ModelConfig. Features
 * we cannot compute exactly are rejected (non-SiLU activation, Llama attention or MLP biases, RoPE
 * scaling other than llama3 and linear); a sliding window we do not apply is reported in `warnings`.
 */
export function fromHfConfig(
  json: unknown,
  opts: { maxSeqLen?: number; source?: string } = {},
): { config: ModelConfig; warnings: string[] } {
  const source = opts.source ?? 'Hugging Face config.json';
  const bad = (problem: string) => new ConfigError(`Invalid ${source}: ${problem}`);
  if (!isRecord(json)) throw bad('not a JSON object');

  // Field readers: a missing or null optional field takes its default; a present one must have the right type.
  const num = (field: string, fallback?: number): number => {
    const v = json[field] ?? fallback;
    if (v === undefined) throw bad(`missing required field ${field}`);
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw bad(`${field} must be a number, got ${JSON.stringify(v)}`);
    }
    return v;
  };
  const bool = (field: string, fallback: boolean): boolean => {
    const v = json[field] ?? fallback;
    if (typeof v !== 'boolean') throw bad(`${field} must be true or false, got ${JSON.stringify(v)}`);
    return v;
  };

  const modelType = json.model_type;
  if (typeof modelType !== 'string' || !Object.hasOwn(HF_MODEL_TYPES, modelType)) {
    throw bad(
      `model_type ${JSON.stringify(modelType)} is not a Llama-family model (supported: ${Object.keys(HF_MODEL_TYPES).join(', ')})`,
    );
  }
  const arch = HF_MODEL_TYPES[modelType];
  const hiddenAct = json.hidden_act ?? HF_DEFAULTS.hiddenAct;
  if (typeof hiddenAct !== 'string' || !SILU_NAMES.includes(hiddenAct)) {
    throw bad(`hidden_act ${JSON.stringify(hiddenAct)} is not supported (the SwiGLU MLP needs silu)`);
  }
  // Qwen2's q/k/v biases are part of its architecture; any other bias is not modelled.
  for (const field of arch === 'qwen2' ? ['mlp_bias'] : ['attention_bias', 'mlp_bias']) {
    if (bool(field, false)) throw bad(`${field} is true, but ${arch} has no such biases here`);
  }

  const hiddenSize = num('hidden_size');
  const numHeads = num('num_attention_heads');
  const positions = num('max_position_embeddings', HF_DEFAULTS.maxSeqLenCap);
  const ropeScaling = ropeScalingFromHf(json.rope_scaling, bad);
  const candidate = {
    ...(arch === 'llama' ? {} : { arch }),
    vocabSize: num('vocab_size'),
    hiddenSize,
    intermediateSize: num('intermediate_size'),
    numLayers: num('num_hidden_layers'),
    numHeads,
    numKvHeads: num('num_key_value_heads', numHeads),
    // Derived outside `num`, so a bad num_attention_heads is reported by the schema, not as a bad head_dim.
    headDim: json.head_dim == null ? hiddenSize / numHeads : num('head_dim'),
    ropeTheta: num('rope_theta', HF_DEFAULTS.ropeTheta),
    ...(ropeScaling ? { ropeScaling } : {}),
    rmsNormEps: num('rms_norm_eps', HF_DEFAULTS.rmsNormEps),
    tieWordEmbeddings: bool('tie_word_embeddings', HF_DEFAULTS.tieWordEmbeddings),
    maxSeqLen: opts.maxSeqLen ?? Math.min(positions, HF_DEFAULTS.maxSeqLenCap),
  };
  // Range and consistency checks (multiples of 4, GQA divisibility) live in one place, the zod schema.
  const config = parseModelConfig(candidate, `model config from ${source}`);

  const warnings: string[] = [];
  // Mistral sets sliding_window to use it; Qwen2 sets it but turns it off with use_sliding_window: false.
  // A window at least as long as the longest sequence we run masks nothing, so it needs no warning.
  const window = json.sliding_window;
  if (typeof window === 'number' && json.use_sliding_window !== false && window < config.maxSeqLen) {
    warnings.push(
      `sliding_window ${window} is ignored: attention spans the full context, so positions past ${window} differ`,
    );
  }
  return { config, warnings };
}

/** A loosely typed tensor as a parser hands it over; only shape and data matter here. */
export interface ShapedTensor {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

function shapeText(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/**
 * Picks out the tensors `config` needs, checking each is present with exactly the expected shape.
 * Anything else in the file (rotary inv_freq buffers, a tied model's saved lm_head) is ignored:
 * the forward pass never reads it.
 */
export function weightsFromTensors(
  config: ModelConfig,
  tensors: ReadonlyMap<string, ShapedTensor>,
  source: string,
): ModelWeights {
  const specs = tensorSpecs(config);
  const missing = specs.filter((s) => !tensors.has(s.name));
  if (missing.length > 0) {
    const first = missing[0];
    const more = missing.length > 1 ? ` (and ${missing.length - 1} more)` : '';
    throw new WeightsError(
      `${source}: missing tensor "${first.name}" with shape ${shapeText(first.shape)}${more}`,
    );
  }
  const out = new Map<string, Float32Array>();
  for (const spec of specs) {
    const t = tensors.get(spec.name)!;
    const sameShape = t.shape.length === spec.shape.length && t.shape.every((n, i) => n === spec.shape[i]);
    if (!sameShape) {
      throw new WeightsError(
        `${source}: tensor "${spec.name}" has shape ${shapeText(t.shape)}, expected ${shapeText(spec.shape)}`,
      );
    }
    if (t.data.length !== elementCount(spec.shape)) {
      throw new WeightsError(
        `${source}: tensor "${spec.name}" holds ${t.data.length} values, shape ${shapeText(spec.shape)} needs ${elementCount(spec.shape)}`,
      );
    }
    out.set(spec.name, t.data);
  }
  return { config, tensors: out };
}

/** Every tensor in HF order with HF names; a tied model has no lm_head.weight, as HF saves it. */
export function weightsToTensors(w: ModelWeights): NamedTensor[] {
  return tensorSpecs(w.config).map((spec) => ({
    name: spec.name,
    shape: spec.shape,
    data: get(w, spec.name),
  }));
}

/**
 * Loads weights from an HF config (a parsed object or the config.json text) and a safetensors file.
 * `source` names the checkpoint in every error.
 */
export function loadHfModel(
  configJson: unknown,
  safetensorsBytes: Uint8Array,
  source: string,
  opts: { maxSeqLen?: number } = {},
): { weights: ModelWeights; warnings: string[] } {
  let json = configJson;
  if (typeof configJson === 'string') {
    try {
      json = JSON.parse(configJson);
    } catch (e) {
      throw new ConfigError(
        `Invalid ${source} config.json: not valid JSON (${e instanceof Error ? e.message : String(e)})`,
      );
    }
  }
  const { config, warnings } = fromHfConfig(json, { ...opts, source: `${source} config.json` });
  const tensors = parseSafetensors(safetensorsBytes, `${source} safetensors`);
  return { weights: weightsFromTensors(config, tensors, `${source} safetensors`), warnings };
}

/** A config.json text and a model.safetensors that `LlamaForCausalLM.from_pretrained` loads as f32. */
export function saveHfModel(w: ModelWeights): { configJson: string; safetensors: Uint8Array } {
  return {
    configJson: `${JSON.stringify(toHfConfig(w.config), null, 2)}\n`,
    safetensors: serializeSafetensors(weightsToTensors(w)),
  };
}
