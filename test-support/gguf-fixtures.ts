import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Architecture, ModelConfig } from '../src/model/config.ts';
import { writeGguf } from '../src/model/gguf-writer.ts';
import { randomWeights } from '../src/model/weights.ts';
import { type LlamaFtype, llamaQuantize } from './llama-quantize/quantize.ts';

/**
 * Small seeded models of each architecture the engine reads, written as F32 GGUF by the project's
 * writer and quantized by llama.cpp's own quantizer (llama-quantize/quantize.ts) into every block
 * type, as the files people have are made. Inner widths are multiples of 256, so every K-quant
 * applies to every tensor (no fallback types) unless a test wants the fallbacks.
 */

/** Every block type's file type, quantized "pure" (every 2-D tensor in that type), and the Q4_K_M mix. */
export const PURE_FTYPES: readonly LlamaFtype[] = [
  'Q4_0',
  'Q4_1',
  'Q5_0',
  'Q5_1',
  'Q8_0',
  'Q2_K',
  'Q3_K_S',
  'Q4_K_S',
  'Q5_K_S',
  'Q6_K',
];

/**
 * One small model per architecture: d 256, ffn 512, 2 layers, 4 heads (qwen3: of 128, so q is wider
 * than d) over 2 KV heads, a 320-token vocabulary (the writer's SPM stand-in), untied for llama so
 * the head is its own tensor; llama gets Llama 3 RoPE scaling, qwen2 its biases, qwen3 its q/k norms.
 */
export function fixtureConfig(arch: Architecture): ModelConfig {
  const base: ModelConfig = {
    vocabSize: 320,
    hiddenSize: 256,
    intermediateSize: 512,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 64,
    ropeTheta: 10000,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: arch !== 'llama',
    maxSeqLen: 256,
  };
  if (arch === 'llama')
    return {
      ...base,
      ropeTheta: 500000,
      ropeScaling: {
        type: 'llama3',
        factor: 8,
        lowFreqFactor: 1,
        highFreqFactor: 4,
        originalMaxPositions: 64,
      },
    };
  if (arch === 'qwen2') return { ...base, arch, ropeTheta: 1000000, rmsNormEps: 1e-6 };
  return { ...base, arch, headDim: 128, ropeTheta: 1000000, rmsNormEps: 1e-6 };
}

export interface GgufFixture {
  arch: Architecture;
  ftype: LlamaFtype;
  pure: boolean;
  path: string;
}

/** The F32 file of `arch`'s fixture model (seed 21) in `dir`, and each of `ftypes` quantized from it. */
export function makeGgufFixtures(
  dir: string,
  arch: Architecture,
  ftypes: readonly { ftype: LlamaFtype; pure: boolean }[],
): GgufFixture[] {
  const f32 = join(dir, `${arch}-F32.gguf`);
  writeFileSync(
    f32,
    writeGguf(randomWeights(fixtureConfig(arch), 21), { type: 'F32', name: `${arch} fixture` }),
  );
  return ftypes.map(({ ftype, pure }) => {
    const path = join(dir, `${arch}-${ftype}${pure ? '-pure' : ''}.gguf`);
    llamaQuantize(f32, path, ftype, pure);
    return { arch, ftype, pure, path };
  });
}
