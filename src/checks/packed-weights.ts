import { quantTypeOf } from '../quant/formats.ts';
import { repackTensor } from '../quant/repack.ts';
import { mulberry32 } from '../random.ts';
import {
  f32ToF16Bits,
  isQuantFormat,
  type PackedFormat,
  type PackedTensor,
  packTensor,
  type QuantFormat,
  unpackTensor,
} from '../weight-format.ts';

/**
 * Byte offsets of the f16 fields (d, and dmin or m) in one block of each GGUF type, as ggml-common.h
 * lays its block structs out: the kernel checks fill every other byte of a block at random (every
 * bit pattern of quants, scales and masks is a valid block) but these with sane scales.
 */
const HALVES: Record<QuantFormat, readonly number[]> = {
  q4_0: [0],
  q4_1: [0, 2],
  q5_0: [0],
  q5_1: [0, 2],
  q8_0: [0],
  q2_k: [80, 82],
  q3_k: [108],
  q4_k: [0, 2],
  q5_k: [0, 2],
  q6_k: [208],
};

/**
 * Seeded random blocks of a GGUF type, [N, K], as a file would hold them: random bytes, with each
 * f16 scale between 2⁻¹⁰ and 2⁻⁶ (and a random sign on the "_1" types' mins), so every dequantized
 * weight is O(0.01…1) whatever the type's integer ranges.
 */
export function seededBlocks(
  format: QuantFormat,
  N: number,
  K: number,
  seed: number,
): Uint8Array<ArrayBuffer> {
  const type = quantTypeOf(format);
  const blocks = (N * K) / type.blockElems;
  const bytes = new Uint8Array(blocks * type.blockBytes);
  const rand = mulberry32(seed);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rand() * 256);
  for (let b = 0; b < blocks; b++) {
    for (const at of HALVES[format]) {
      const sign = at > 0 && format.endsWith('_1') && rand() < 0.5 ? -1 : 1;
      const h = f32ToF16Bits(sign * 2 ** (-10 + 4 * rand()));
      bytes[b * type.blockBytes + at] = h & 0xff;
      bytes[b * type.blockBytes + at + 1] = h >> 8;
    }
  }
  return bytes;
}

/**
 * A seeded W[N, K] in `format` and its exact dequantization (what the kernels must compute with): the
 * project's formats pack seeded f32 weights (packTensor); a GGUF type takes seeded random blocks
 * (seededBlocks), repacked as a file's are on load and dequantized as ggml does.
 */
export function seededPacked(
  format: PackedFormat,
  N: number,
  K: number,
  seed: number,
  f32: (n: number) => Float32Array,
): { packed: PackedTensor; unpacked: Float32Array<ArrayBuffer> } {
  if (!isQuantFormat(format)) {
    const packed = packTensor(format, f32(N * K), N, K, 'case weights');
    return { packed, unpacked: unpackTensor(packed) };
  }
  const type = quantTypeOf(format);
  const blocks = seededBlocks(format, N, K, seed);
  const { quants, headers } = repackTensor(type, blocks, 0, N, K, 'case weights');
  const unpacked = new Float32Array(N * K);
  type.dequantize(blocks, 0, (N * K) / type.blockElems, unpacked, 0);
  return { packed: { format, N, K, words: quants, scales: headers }, unpacked };
}
