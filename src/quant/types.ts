/**
 * One ggml block type (a GGUF tensor type) as this engine holds it: one module per type under
 * src/quant/, listed once in registry.ts. A module holds the type's block layout and sizer, ggml's
 * CPU dequantization (written from ggml-quants.c's `dequantize_row_*`), the repack into the GPU's
 * layout, and the WGSL snippet the packed GEMV and matmul kernels read it through.
 *
 * **The GPU layout** keeps every byte of every block and only moves them for alignment: each block's
 * quant bytes (the `quants` ranges of the file's block, in order) go to the quants buffer, a whole
 * number of 16-byte vectors per block; its other bytes (scales, mins, high-bit masks: the `header`
 * ranges) go to the headers buffer, a whole number of u32 words per block, zero padded. Block b of
 * row n is at index n · blocksPerRow + b in both. So the GPU holds the file's bits per weight, plus at
 * most the header's padding (2 bytes a block: Q4_0 20/18, Q8_0 36/34, Q6_K 212/210).
 */
export interface QuantType {
  /** ggml's name, as llama.cpp prints it ('Q4_K'). */
  readonly name: string;
  /** ggml's type code: the GGUF tensor-info field (enum ggml_type). */
  readonly ggml: number;
  /** Weights per block along a row (32, or 256 for the K-quants). */
  readonly blockElems: number;
  /** Bytes per block in the file (sizeof(block_q4_K) …). */
  readonly blockBytes: number;
  /** Byte ranges [from, to) of a file block that form its quants, in the order they are laid out on the GPU. */
  readonly quants: readonly (readonly [from: number, to: number])[];
  /** Byte ranges [from, to, at) of a file block copied to byte `at` of its header words. */
  readonly header: readonly (readonly [from: number, to: number, at: number])[];
  /** u32 words of header per block on the GPU. */
  readonly headerWords: number;
  /**
   * ggml's dequantization of `blocks` consecutive blocks starting at byte `offset` of `src`, into
   * `out` from `outOffset`: bit for bit what dequantize_row_<type> writes (f32, same rounding).
   */
  dequantize(src: Uint8Array, offset: number, blocks: number, out: Float32Array, outOffset: number): void;
  /**
   * For the types this engine can also make (`--weights q8_0|q4_0|q4_k`): ggml's reference quantizer
   * (`quantize_row_<type>_ref`, what llama-quantize runs without an importance matrix) of `blocks`
   * blocks of f32 from `offset` of `src`, written from byte `outOffset` of `out`, bit for bit.
   */
  quantize?(src: Float32Array, offset: number, blocks: number, out: Uint8Array, outOffset: number): void;
}
