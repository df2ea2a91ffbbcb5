import { InternalError } from '../errors.ts';
import {
  BYTES,
  isQuantFormat,
  type PackedFormat,
  type PackedTensor,
  packedLayout,
  packTensor,
  type QuantFormat,
  type RunWeightFormat,
  unpackTensor,
  type WeightFormat,
} from '../weight-format.ts';
import { QUANT_TYPES, quantLayout, quantTypeByName } from './registry.ts';
import { repackTensor, unpackBlocks } from './repack.ts';
import type { QuantType } from './types.ts';

/**
 * The bridge between the engine's weight formats (src/weight-format.ts) and the GGUF block types
 * (this folder): a format's type, and the sizes of a weight on the GPU whatever its format, as the
 * kernels bind it, the memory plan allocates it and the cost model counts it.
 */

/** The block type of a GGUF format ('q4_k' → Q4_K). */
export function quantTypeOf(format: QuantFormat): QuantType {
  const type = quantTypeByName(format.toUpperCase());
  if (!type) throw new InternalError(`no block type is registered for ${format}`);
  return type;
}

/** The format of a block type (Q4_K → 'q4_k'). */
export function formatOfQuantType(type: QuantType): QuantFormat {
  const format = type.name.toLowerCase();
  if (!isQuantFormat(format)) throw new InternalError(`${type.name} is not among QUANT_FORMATS`);
  return format;
}

/** Every registered type's format, in the registry's order; the registry test checks it is QUANT_FORMATS. */
export function registeredQuantFormats(): QuantFormat[] {
  return QUANT_TYPES.map(formatOfQuantType);
}

/** A packed weight on the GPU: u32 words of its weights buffer, 4-byte elements of its second buffer. */
export interface GpuWeightLayout {
  /** u32 words of the weights buffer (packed words, or every block's quant bytes). */
  words: number;
  /** 4-byte elements of the second buffer (f32 scales, or block header words); 0 for f16. */
  scales: number;
  /** Both buffers' bytes. */
  bytes: number;
}

/** The GPU layout of a W[N, K] in a packed format. */
export function gpuLayout(format: PackedFormat, N: number, K: number, name = 'tensor'): GpuWeightLayout {
  if (!isQuantFormat(format)) return packedLayout(format, N, K);
  const q = quantLayout(quantTypeOf(format), N, K, name);
  return { words: q.quantBytes / 4, scales: q.headerBytes / 4, bytes: q.gpuBytes };
}

/** Bytes a W[N, K] takes in `format` on the GPU (the cost model's and the memory plan's count). */
export function weightBytes(format: WeightFormat, N: number, K: number): number {
  return format === 'f32' ? N * K * BYTES.f32 : gpuLayout(format, N, K).bytes;
}

/**
 * Bits per weight of a format as its file stores it (GGUF's own figure: Q4_K 4.5, Q6_K 6.5625), or
 * for the project's formats as the GPU holds them (int4 with its f32 scale per 32: 5).
 */
export function bitsPerWeight(format: WeightFormat): number {
  if (format === 'f32') return 32;
  if (isQuantFormat(format)) {
    const t = quantTypeOf(format);
    return (8 * t.blockBytes) / t.blockElems;
  }
  const layout = packedLayout(format, 1, 32);
  return (8 * layout.bytes) / 32;
}

/**
 * W[N, K] as the kernels see it, whatever the packed format: the project's formats dequantized
 * exactly (unpackTensor), a GGUF type's blocks put back together and dequantized as ggml does.
 */
export function dequantizePacked(p: PackedTensor): Float32Array<ArrayBuffer> {
  if (!isQuantFormat(p.format)) return unpackTensor(p as Parameters<typeof unpackTensor>[0]);
  const type = quantTypeOf(p.format);
  const blocks = (p.N * p.K) / type.blockElems;
  const bytes = unpackBlocks(
    type,
    { quants: p.words, headers: p.scales as Uint32Array<ArrayBuffer> },
    blocks,
  );
  const out = new Float32Array(p.N * p.K);
  type.dequantize(bytes, 0, blocks, out, 0);
  return out;
}

/**
 * W[N, K] (row-major f32) quantized on load into `format`: the project's own packing, or a GGUF
 * type's blocks as ggml's reference quantizer makes them (the type module's `quantize`), laid out
 * for the GPU as a file's would be. A row that is not a whole number of blocks is refused.
 */
export function quantizeTensor(
  format: Exclude<RunWeightFormat, 'f32'>,
  w: Float32Array,
  N: number,
  K: number,
  name = 'tensor',
): PackedTensor {
  if (!isQuantFormat(format)) return packTensor(format, w, N, K, name);
  const type = quantTypeOf(format);
  if (!type.quantize) throw new InternalError(`${type.name} has no quantizer`);
  const layout = quantLayout(type, N, K, name);
  const bytes = new Uint8Array(layout.fileBytes);
  type.quantize(w, 0, N * layout.blocksPerRow, bytes, 0);
  const { quants, headers } = repackTensor(type, bytes, 0, N, K, name);
  return { format, N, K, words: quants, scales: headers };
}
