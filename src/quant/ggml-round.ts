import { f32ToF16Bits } from '../weight-format.ts';

/**
 * The roundings ggml's reference quantizers (ggml-quants.c, `quantize_row_*_ref`) use, for the
 * quantizers here that must give their bytes exactly. Every operation there is in f32 (x86-64 SSE,
 * no contraction into FMA in libggml-base), and a JavaScript double rounded once to f32
 * (Math.fround) gives the same result for +, −, ×, ÷ and √ of f32 operands: a double holds the
 * exact result to more than twice f32's precision, so the second rounding cannot differ.
 */

/** C's roundf: halves away from zero (JavaScript's Math.round takes −2.5 to −2). */
export function roundf(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

/**
 * ggml's nearest_int: adds 1.5 · 2^23 in f32, so the FPU rounds to the nearest integer with ties
 * to even (2.5 → 2, 3.5 → 4), then reads the integer back from the mantissa. Valid for |x| < 2^22,
 * which ggml asserts.
 */
export function nearestInt(x: number): number {
  return Math.fround(x + 12582912) - 12582912;
}

/** GGML_FP32_TO_FP16 stored little-endian at byte `at`: round to nearest even, as F16C does. */
export function putHalf(out: Uint8Array, at: number, x: number): void {
  const h = f32ToF16Bits(x);
  out[at] = h & 0xff;
  out[at + 1] = h >>> 8;
}
