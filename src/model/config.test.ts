import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { PRESET_NAMES, PRESETS, parseModelConfig, presetConfig } from './config.ts';
import { parameterCount } from './weights.ts';

const tiny = () => ({ ...PRESETS['ci-tiny'].config });

describe('model config schema', () => {
  it('accepts every preset', () => {
    for (const name of PRESET_NAMES)
      expect(parseModelConfig(presetConfig(name))).toEqual(PRESETS[name].config);
  });

  it('counts the parameters of real shapes as Hugging Face does', () => {
    // SmolLM2-135M: 134,515,008 parameters with tied embeddings (HF model card: 135M).
    expect(parameterCount(presetConfig('smollm2-135m'))).toBe(134_515_008);
    // Llama-3.2-1B: 1,235,814,400 parameters with tied embeddings.
    expect(parameterCount(presetConfig('llama-3.2-1b'))).toBe(1_235_814_400);
  });

  it.each([
    ['hiddenSize', 130, /hiddenSize: must be a multiple of 4/],
    ['numLayers', 0, /numLayers/],
    ['numKvHeads', 3, /numKvHeads: numHeads \(4\) must be a multiple of numKvHeads \(3\)/],
    ['rmsNormEps', -1, /rmsNormEps/],
    ['headDim', 6, /headDim: must be a multiple of 4/],
    ['vocabSize', 1.5, /vocabSize/],
    ['tieWordEmbeddings', 'yes', /tieWordEmbeddings/],
  ])('rejects %s = %s and names the field', (field, value, message) => {
    const bad = { ...tiny(), [field]: value };
    expect(() => parseModelConfig(bad)).toThrow(ConfigError);
    expect(() => parseModelConfig(bad)).toThrow(message);
  });

  it('rejects unknown and missing fields', () => {
    expect(() => parseModelConfig({ ...tiny(), hidden_size: 128 })).toThrow(/hidden_size/);
    const { ropeTheta: _, ...missing } = tiny();
    expect(() => parseModelConfig(missing)).toThrow(/ropeTheta/);
  });

  it('names the known presets when given an unknown one', () => {
    expect(() => presetConfig('gpt-5')).toThrow(/Unknown preset "gpt-5".*ci-tiny/);
  });
});
