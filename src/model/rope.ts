import type { ModelConfig } from './config.ts';

/**
 * RoPE cos/sin table [maxSeqLen, headDim/2] for the rotate-half form HF Llama uses:
 * angle(pos, i) = pos * theta^(-2i/headDim). Computed once in float64 and rounded to f32,
 * so the GPU and the CPU reference rotate by exactly the same numbers; computing sin/cos of
 * large angles in f32 on the GPU would lose about 1e-4 at position 1000.
 */
export function ropeTable(config: ModelConfig): {
  cos: Float32Array<ArrayBuffer>;
  sin: Float32Array<ArrayBuffer>;
} {
  const half = config.headDim / 2;
  const cos = new Float32Array(config.maxSeqLen * half);
  const sin = new Float32Array(config.maxSeqLen * half);
  for (let i = 0; i < half; i++) {
    const invFreq = 1 / config.ropeTheta ** ((2 * i) / config.headDim);
    for (let pos = 0; pos < config.maxSeqLen; pos++) {
      cos[pos * half + i] = Math.cos(pos * invFreq);
      sin[pos * half + i] = Math.sin(pos * invFreq);
    }
  }
  return { cos, sin };
}
