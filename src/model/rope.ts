import type { ModelConfig } from './config.ts';

/**
 * The rotary inverse frequency of each pair i < headDim/2, in float64: theta^(-2i/headDim), then
 * the config's scaling.
 * - llama3 (HF's `_compute_llama3_parameters`): pairs whose wavelength 2π/f is shorter than
 *   originalMaxPositions / highFreqFactor keep f; those longer than originalMaxPositions /
 *   lowFreqFactor get f / factor; in between, f · ((1 − s) / factor + s) with s = (originalMaxPositions
 *   / wavelength − lowFreqFactor) / (highFreqFactor − lowFreqFactor).
 * - factors (a GGUF's rope_freqs.weight, which llama.cpp's converter computes from the same
 *   formula): f / factors[i], as llama.cpp's RoPE divides by its frequency factors.
 * - linear: f / factor (every position divided by factor).
 */
export function ropeInverseFrequencies(
  config: Pick<ModelConfig, 'headDim' | 'ropeTheta' | 'ropeScaling'>,
): Float64Array {
  const half = config.headDim / 2;
  const out = new Float64Array(half);
  const s = config.ropeScaling;
  for (let i = 0; i < half; i++) {
    const f = 1 / config.ropeTheta ** ((2 * i) / config.headDim);
    if (!s) out[i] = f;
    else if (s.type === 'linear') out[i] = f / s.factor;
    else if (s.type === 'factors') out[i] = f / s.factors[i];
    else {
      const wavelength = (2 * Math.PI) / f;
      const highWavelength = s.originalMaxPositions / s.highFreqFactor;
      const lowWavelength = s.originalMaxPositions / s.lowFreqFactor;
      if (wavelength < highWavelength) out[i] = f;
      else if (wavelength > lowWavelength) out[i] = f / s.factor;
      else {
        const smooth =
          (s.originalMaxPositions / wavelength - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
        out[i] = f * ((1 - smooth) / s.factor + smooth);
      }
    }
  }
  return out;
}

/**
 * RoPE cos/sin table [maxSeqLen, headDim/2] for the rotate-half form HF Llama uses:
 * angle(pos, i) = pos · ropeInverseFrequencies(config)[i]. Computed once in float64 and rounded to
 * f32, so the GPU and the CPU reference rotate by exactly the same numbers; computing sin/cos of
 * large angles in f32 on the GPU would lose about 1e-4 at position 1000.
 */
export function ropeTable(config: ModelConfig): {
  cos: Float32Array<ArrayBuffer>;
  sin: Float32Array<ArrayBuffer>;
} {
  const half = config.headDim / 2;
  const cos = new Float32Array(config.maxSeqLen * half);
  const sin = new Float32Array(config.maxSeqLen * half);
  const invFreq = ropeInverseFrequencies(config);
  for (let i = 0; i < half; i++) {
    for (let pos = 0; pos < config.maxSeqLen; pos++) {
      cos[pos * half + i] = Math.cos(pos * invFreq[i]);
      sin[pos * half + i] = Math.sin(pos * invFreq[i]);
    }
  }
  return { cos, sin };
}

/**
 * Llama 3's RoPE frequency factors as llama.cpp's converter writes them into `rope_freqs.weight`
 * (headDim/2 divisors, f32): 1 for short wavelengths, `factor` for long ones, 1 / ((1 − s) / factor
 * + s) between. What the GGUF writer stores for a llama3-scaled model.
 */
export function llama3FreqFactors(
  config: Pick<ModelConfig, 'headDim' | 'ropeTheta' | 'ropeScaling'>,
): number[] {
  const s = config.ropeScaling;
  if (s?.type !== 'llama3') throw new Error('llama3FreqFactors needs llama3 RoPE scaling');
  const plain = ropeInverseFrequencies({ ...config, ropeScaling: undefined });
  const scaled = ropeInverseFrequencies(config);
  return Array.from(plain, (f, i) => Math.fround(f / scaled[i]));
}
