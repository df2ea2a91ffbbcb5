import { type GgufType, writeGguf } from '../model/gguf-writer.ts';
import type { ModelWeights } from '../model/weights.ts';
import { ggmlTypeName } from '../quant/ggml-types.ts';
import type { RunWeightFormat } from '../weight-format.ts';

/** The GGUF tensor type of each weight format (int8 and int4 come back through the lossless Q8_0/Q4_0 repack). */
export const GGUF_TYPE: Record<RunWeightFormat, GgufType> = {
  f32: 'F32',
  f16: 'F16',
  int8: 'Q8_0',
  int4: 'Q4_0',
  // Quantized from the same f32 weights by the same rules as the run's, so both engines hold the same blocks.
  q8_0: 'Q8_0',
  q4_0: 'Q4_0',
  q4_k: 'Q4_K',
};

/**
 * The run's model as the GGUF file both engines load: its weights in the run's format, with the
 * tokenizer block llama.cpp needs. Throws (with the writer's reason) where llama.cpp's format
 * cannot hold the model, e.g. a Q4_0 row that is not a whole number of 32-value blocks.
 */
export function peerGguf(
  weights: ModelWeights,
  format: RunWeightFormat,
  name: string,
): { bytes: Uint8Array<ArrayBuffer>; fileType: GgufType; fileName: string } {
  const type = GGUF_TYPE[format];
  return {
    bytes: writeGguf(weights, { type, tokenizer: true, name }),
    fileType: type,
    fileName: `${name}-${type}.gguf`,
  };
}

/** The name of a GGML tensor type code, as a GGUF header stores it. */
export function ggmlName(code: number): string {
  return ggmlTypeName(code);
}
