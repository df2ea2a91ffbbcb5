import { describe, expect, it } from 'vitest';
import { ConfigError, SafetensorsError, WeightsError } from '../errors.ts';
import { type ModelConfig, PRESET_NAMES, PRESETS } from './config.ts';
import {
  fromHfConfig,
  loadHfModel,
  saveHfModel,
  toHfConfig,
  weightsFromTensors,
  weightsToTensors,
} from './hf.ts';
import { parseSafetensors } from './safetensors.ts';
import { elementCount, randomWeights, tensorSpecs } from './weights.ts';

const tiny: ModelConfig = { ...PRESETS['ci-tiny'].config };

/** HuggingFaceTB/SmolLM2-135M config.json as published (no head_dim; 8k positions). */
const smollm2Config = {
  architectures: ['LlamaForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 0,
  eos_token_id: 0,
  hidden_act: 'silu',
  hidden_size: 576,
  initializer_range: 0.041666666666666664,
  intermediate_size: 1536,
  is_llama_config: true,
  max_position_embeddings: 8192,
  model_type: 'llama',
  num_attention_heads: 9,
  num_hidden_layers: 30,
  num_key_value_heads: 3,
  pretraining_tp: 1,
  rms_norm_eps: 1e-5,
  rope_interleaved: false,
  rope_scaling: null,
  rope_theta: 100000,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.40.1',
  use_cache: true,
  vocab_size: 49152,
};

/** Qwen/Qwen2.5-0.5B config.json: qwen2 model_type, sliding window present but switched off. */
const qwen25Config = {
  architectures: ['Qwen2ForCausalLM'],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151643,
  hidden_act: 'silu',
  hidden_size: 896,
  initializer_range: 0.02,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  max_window_layers: 24,
  model_type: 'qwen2',
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.40.1',
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

/** Index of the first element whose bits differ, or -1; far faster than a deep equal over 100k elements. */
function firstBitDifference(a: Float32Array, b: Float32Array): number {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  if (x.length !== y.length) return Math.min(x.length, y.length);
  return x.findIndex((v, i) => v !== y[i]);
}

function errorOf(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    if (e instanceof Error) return e;
  }
  throw new Error('expected a throw');
}

describe('toHfConfig / fromHfConfig', () => {
  it('writes a LlamaForCausalLM config with our shape', () => {
    expect(toHfConfig(tiny)).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      hidden_size: 128,
      intermediate_size: 344,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 32,
      rms_norm_eps: 1e-5,
      rope_theta: 10000,
      vocab_size: 509,
      tie_word_embeddings: true,
      max_position_embeddings: 1024,
      hidden_act: 'silu',
      attention_bias: false,
      mlp_bias: false,
      rope_scaling: null,
      torch_dtype: 'float32',
    });
  });

  it.each(PRESET_NAMES)('round-trips preset %s without warnings', (name) => {
    const config = { ...PRESETS[name].config };
    expect(fromHfConfig(toHfConfig(config))).toEqual({ config, warnings: [] });
    const untied = { ...config, tieWordEmbeddings: false };
    expect(fromHfConfig(toHfConfig(untied)).config).toEqual(untied);
  });

  it('reads the real SmolLM2-135M config as the smollm2-135m preset shape', () => {
    const { config, warnings } = fromHfConfig(smollm2Config);
    expect(config).toEqual({ ...PRESETS['smollm2-135m'].config, maxSeqLen: config.maxSeqLen });
    // 8192 positions are capped, since the benchmark sizes its KV cache by maxSeqLen.
    expect(config.maxSeqLen).toBe(2048);
    expect(warnings).toEqual([]);
  });

  it('reads Qwen2.5-0.5B as qwen2 (its q/k/v biases part of the architecture), no warnings', () => {
    const { config, warnings } = fromHfConfig(qwen25Config, { maxSeqLen: 512 });
    expect(config).toEqual({ ...PRESETS['qwen2.5-0.5b'].config, maxSeqLen: 512 });
    expect(warnings).toEqual([]);
  });

  it('reads llama3 and linear rope_scaling, refuses yarn, and warns about a sliding window shorter than maxSeqLen', () => {
    const llama3 = {
      ...smollm2Config,
      rope_scaling: { factor: 32.0, rope_type: 'llama3', original_max_position_embeddings: 8192 },
    };
    const read = fromHfConfig(llama3);
    expect(read.warnings).toEqual([]);
    // HF's defaults for the two it omits: low 1, high 4.
    expect(read.config.ropeScaling).toEqual({
      type: 'llama3',
      factor: 32,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxPositions: 8192,
    });
    expect(toHfConfig(read.config).rope_scaling).toEqual({
      rope_type: 'llama3',
      factor: 32,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 8192,
    });
    const linear = { ...smollm2Config, rope_scaling: { type: 'linear', factor: 2 } };
    expect(fromHfConfig(linear).config.ropeScaling).toEqual({ type: 'linear', factor: 2 });
    const yarn = { ...smollm2Config, rope_scaling: { rope_type: 'yarn', factor: 4 } };
    expect(() => fromHfConfig(yarn)).toThrow(
      /rope_scaling type "yarn" is not supported \(llama3 and linear are\)/,
    );

    const mistral = { ...smollm2Config, model_type: 'mistral', sliding_window: 4096 };
    expect(fromHfConfig(mistral).warnings).toEqual([]);
    expect(fromHfConfig(mistral, { maxSeqLen: 8192 }).warnings).toEqual([
      expect.stringMatching(/sliding_window 4096 is ignored/),
    ]);
  });

  it('fills HF Llama defaults for omitted fields', () => {
    const minimal = {
      model_type: 'llama',
      hidden_size: 64,
      intermediate_size: 128,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      vocab_size: 100,
      head_dim: null,
    };
    expect(fromHfConfig(minimal).config).toEqual({
      vocabSize: 100,
      hiddenSize: 64,
      intermediateSize: 128,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 4,
      headDim: 16,
      ropeTheta: 10000,
      rmsNormEps: 1e-6,
      tieWordEmbeddings: false,
      maxSeqLen: 2048,
    });
    expect(fromHfConfig({ ...minimal, max_position_embeddings: 256 }).config.maxSeqLen).toBe(256);
  });

  it.each([
    ['num_key_value_heads that does not divide the heads', { num_key_value_heads: 4 }, /numKvHeads/],
    ['a non-SiLU activation', { hidden_act: 'gelu' }, /hidden_act "gelu"/],
    ['attention biases', { attention_bias: true }, /attention_bias is true/],
    ['MLP biases', { mlp_bias: true }, /mlp_bias is true/],
    ['a missing required field', { hidden_size: undefined }, /missing required field hidden_size/],
    ['a field of the wrong type', { vocab_size: '49152' }, /vocab_size must be a number/],
    ['a non-Llama model_type', { model_type: 'gemma' }, /model_type "gemma" is not a Llama-family model/],
    ['a head_dim the kernels cannot read as vec4', { head_dim: 66 }, /headDim/],
  ])('rejects %s, naming the field', (_, patch, problem) => {
    const error = errorOf(() => fromHfConfig({ ...smollm2Config, ...patch }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(problem);
  });

  it('rejects a config that is not an object', () => {
    expect(() => fromHfConfig([1])).toThrow(ConfigError);
  });
});

describe('weightsFromTensors / weightsToTensors', () => {
  const weights = randomWeights(tiny, 3);
  const asMap = (w = weights) => new Map(weightsToTensors(w).map((t) => [t.name, t]));

  it('lists tensors in HF order, without lm_head when tied', () => {
    const names = weightsToTensors(weights).map((t) => t.name);
    expect(names).toEqual(tensorSpecs(tiny).map((s) => s.name));
    expect(names).not.toContain('lm_head.weight');
  });

  it('ignores extra tensors, including a tied model’s saved lm_head', () => {
    const tensors = asMap();
    tensors.set('lm_head.weight', {
      name: 'lm_head.weight',
      shape: [509, 128],
      data: new Float32Array(509 * 128),
    });
    tensors.set('model.rotary_emb.inv_freq', { name: 'inv_freq', shape: [16], data: new Float32Array(16) });
    const loaded = weightsFromTensors(tiny, tensors, 'test');
    expect([...loaded.tensors.keys()]).toEqual(tensorSpecs(tiny).map((s) => s.name));
  });

  it('names the first missing tensor', () => {
    const tensors = asMap();
    tensors.delete('model.layers.1.mlp.down_proj.weight');
    tensors.delete('model.norm.weight');
    const error = errorOf(() => weightsFromTensors(tiny, tensors, 'ckpt'));
    expect(error).toBeInstanceOf(WeightsError);
    expect(error.message).toBe(
      'ckpt: missing tensor "model.layers.1.mlp.down_proj.weight" with shape [128, 344] (and 1 more)',
    );
  });

  it('requires lm_head when untied', () => {
    const untied = { ...tiny, tieWordEmbeddings: false };
    expect(() => weightsFromTensors(untied, asMap(), 'ckpt')).toThrow(/missing tensor "lm_head.weight"/);
  });

  it('names a tensor with the wrong shape, with expected and found shapes', () => {
    const tensors = asMap();
    const q = tensors.get('model.layers.0.self_attn.q_proj.weight')!;
    tensors.set(q.name, { ...q, shape: [64, 256] });
    const error = errorOf(() => weightsFromTensors(tiny, tensors, 'ckpt'));
    expect(error).toBeInstanceOf(WeightsError);
    expect(error.message).toBe(
      'ckpt: tensor "model.layers.0.self_attn.q_proj.weight" has shape [64, 256], expected [128, 128]',
    );
  });
});

describe('saveHfModel / loadHfModel', () => {
  it.each([true, false])('round-trips random weights exactly (tied: %s)', (tied) => {
    const config = { ...tiny, tieWordEmbeddings: tied };
    const weights = randomWeights(config, 11);
    const saved = saveHfModel(weights);

    const tensorsInFile = parseSafetensors(saved.safetensors);
    expect(tensorsInFile.has('lm_head.weight')).toBe(!tied);
    const headerLength = new DataView(saved.safetensors.buffer).getUint32(0, true);
    expect((8 + headerLength) % 8).toBe(0);

    const loaded = loadHfModel(saved.configJson, saved.safetensors, 'round trip');
    expect(loaded.warnings).toEqual([]);
    expect(loaded.weights.config).toEqual(config);
    expect([...loaded.weights.tensors.keys()]).toEqual([...weights.tensors.keys()]);
    for (const spec of tensorSpecs(config)) {
      const got = loaded.weights.tensors.get(spec.name)!;
      expect(got.length).toBe(elementCount(spec.shape));
      expect(firstBitDifference(got, weights.tensors.get(spec.name)!), spec.name).toBe(-1);
    }
    // A parsed object loads the same as the text.
    expect(loadHfModel(JSON.parse(saved.configJson), saved.safetensors, 'x').weights.config).toEqual(config);
  });

  it('names the checkpoint in config, safetensors and tensor errors', () => {
    const saved = saveHfModel(randomWeights(tiny, 1));
    expect(() => loadHfModel('{', saved.safetensors, 'my-model')).toThrow(
      /my-model config.json: not valid JSON/,
    );
    expect(() => loadHfModel(saved.configJson, saved.safetensors.subarray(0, 4), 'my-model')).toThrow(
      SafetensorsError,
    );
    const wider = JSON.stringify({ ...JSON.parse(saved.configJson), intermediate_size: 348 });
    expect(() => loadHfModel(wider, saved.safetensors, 'my-model')).toThrow(
      /my-model safetensors: tensor "model.layers.0.mlp.gate_proj.weight" has shape \[344, 128\], expected \[348, 128\]/,
    );
  });
});
