/**
 * Every block type stores its scales as IEEE binary16, little-endian. ggml widens them with
 * GGML_FP16_TO_FP32, which is exact, and so is a lookup in weight-format.ts's table of every half
 * (`f16Values()`), which the type modules index with these bits. (One difference no finite scale
 * meets: a NaN half widens to JavaScript's NaN, without the payload bits C would carry over.)
 */
export function halfBits(src: Uint8Array, at: number): number {
  return src[at] | (src[at + 1] << 8);
}
