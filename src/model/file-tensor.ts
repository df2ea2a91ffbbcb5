import { WeightsError } from '../errors.ts';
import { formatOfQuantType } from '../quant/formats.ts';
import { ggmlTensorBytes, ggmlTypeName } from '../quant/ggml-types.ts';
import { quantTypeByCode } from '../quant/registry.ts';
import { repackTensor } from '../quant/repack.ts';
import { f16Values, packedLayout, type WeightFormat } from '../weight-format.ts';
import { type ByteSource, syncReader } from './byte-source.ts';

/**
 * A weight matrix W[N, K] left in its file and read a few rows at a time: for the upload, as the GPU
 * holds it (its file's block type kept, F16 as the packed f16 format, F32 and BF16 as f32), and for
 * the CPU reference, dequantized as ggml does. Nothing holds the whole tensor in JS, so a model
 * larger than the page's memory still loads.
 */
export interface FileTensor {
  /** How the GPU holds it: a GGUF block type, 'f16', or 'f32'. */
  readonly format: WeightFormat;
  readonly N: number;
  readonly K: number;
  /** Chunks start and end at multiples of this (a head of rows, for q and k rows put back in HF order). */
  readonly rowStep: number;
  /** Rows [r0, r1) in HF order, as the GPU holds them. */
  rows(r0: number, r1: number): Promise<RowChunk>;
  /** Rows [r0, r1) in HF order, dequantized (ggml's values, bit for bit), read synchronously. */
  f32Rows(r0: number, r1: number): Float32Array<ArrayBuffer>;
}

/** Rows of a weight as the GPU holds them: f32 values, or a packed format's words and scales. */
export type RowChunk =
  | { f32: Float32Array<ArrayBuffer> }
  | { words: Uint32Array<ArrayBuffer>; scales: Float32Array<ArrayBuffer> | Uint32Array<ArrayBuffer> };

/** ggml type codes of the float types (the block types are in src/quant). */
const GGML_FLOAT = { F32: 0, F16: 1, BF16: 30 } as const;

/** `values` as rows of `per` elements, row i moved to rowOf(i) (rows relative to the chunk). */
function moveRows<T extends Float32Array<ArrayBuffer> | Uint32Array<ArrayBuffer>>(
  values: T,
  rows: number,
  rowOf: ((r: number) => number) | undefined,
  make: (n: number) => T,
): T {
  if (!rowOf) return values;
  const per = values.length / rows;
  const out = make(values.length);
  for (let r = 0; r < rows; r++) out.set(values.subarray(r * per, (r + 1) * per), rowOf(r) * per);
  return out;
}

/** Little-endian f32, F16 or BF16 bytes of `count` values as f32. */
function floatsOf(type: number, b: Uint8Array, count: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(count);
  const bits = new Uint32Array(out.buffer);
  if (type === GGML_FLOAT.F32) {
    for (let i = 0, j = 0; i < count; i++, j += 4)
      bits[i] = b[j] | (b[j + 1] << 8) | (b[j + 2] << 16) | (b[j + 3] << 24);
  } else if (type === GGML_FLOAT.F16) {
    const table = f16Values();
    for (let i = 0, j = 0; i < count; i++, j += 2) out[i] = table[b[j] | (b[j + 1] << 8)];
  } else {
    // bf16 is the top half of an f32: widening is a shift.
    for (let i = 0, j = 0; i < count; i++, j += 2) bits[i] = (b[j] << 16) | (b[j + 1] << 24);
  }
  return out;
}

/**
 * Tensor `name` (ggml type `type`, GGUF dims [K, N]) at byte `at` of `source`. `rowOf` puts a row
 * back in HF order within each block of `rowStep` rows (llama's permuted q and k).
 */
export function fileTensor(
  source: ByteSource,
  name: string,
  type: number,
  dims: readonly number[],
  at: number,
  rowOf?: (r: number) => number,
  rowStep = 1,
): FileTensor {
  const [K, N] = dims;
  const rowBytes = ggmlTensorBytes(type, [K], name);
  const quant = quantTypeByCode(type);
  const float = type === GGML_FLOAT.F32 || type === GGML_FLOAT.F16 || type === GGML_FLOAT.BF16;
  if (!quant && !float)
    throw new WeightsError(
      `${source.name}: tensor ${name} has type ${ggmlTypeName(type)}, which this engine does not read`,
    );
  const format: WeightFormat = quant ? formatOfQuantType(quant) : type === GGML_FLOAT.F16 ? 'f16' : 'f32';
  const check = (r0: number, r1: number) => {
    if (!(r0 >= 0 && r1 <= N && r0 <= r1 && r0 % rowStep === 0 && (r1 % rowStep === 0 || r1 === N)))
      throw new WeightsError(
        `${name}: rows ${r0}…${r1} are not a chunk of its ${N} rows in steps of ${rowStep}`,
      );
  };
  // Within a chunk starting at a multiple of rowStep, the permutation maps its rows among themselves.
  const local = rowOf ? (r: number) => rowOf(r) : undefined;
  const toGpu = (bytes: Uint8Array, rows: number): RowChunk => {
    if (quant) {
      const { quants, headers } = repackTensor(quant, bytes, 0, rows, K, name);
      const u32 = (n: number) => new Uint32Array(n);
      return { words: moveRows(quants, rows, local, u32), scales: moveRows(headers, rows, local, u32) };
    }
    if (type === GGML_FLOAT.F16) {
      // Word j of a row holds halves k = 2j (low) and 2j + 1 (high); K is a multiple of 4, so a pair
      // never straddles K, and words past K stay zero (the last group's padding).
      const layout = packedLayout('f16', rows, K);
      const rowWords = layout.groups * 16;
      const words = new Uint32Array(layout.words);
      for (let r = 0; r < rows; r++) {
        const dst = (local ? local(r) : r) * rowWords;
        for (let j = 0, s = 2 * r * K; j < K / 2; j++, s += 4)
          words[dst + j] =
            (bytes[s] | (bytes[s + 1] << 8) | (bytes[s + 2] << 16) | (bytes[s + 3] << 24)) >>> 0;
      }
      return { words, scales: new Float32Array(0) };
    }
    return { f32: moveRows(floatsOf(type, bytes, rows * K), rows, local, (n) => new Float32Array(n)) };
  };
  const toF32 = (bytes: Uint8Array, rows: number): Float32Array<ArrayBuffer> => {
    let values: Float32Array<ArrayBuffer>;
    if (quant) {
      values = new Float32Array(rows * K);
      quant.dequantize(bytes, 0, (rows * K) / quant.blockElems, values, 0);
    } else values = floatsOf(type, bytes, rows * K);
    return moveRows(values, rows, local, (n) => new Float32Array(n));
  };
  return {
    format,
    N,
    K,
    rowStep,
    async rows(r0, r1) {
      check(r0, r1);
      return toGpu(await source.read(at + r0 * rowBytes, (r1 - r0) * rowBytes), r1 - r0);
    },
    f32Rows(r0, r1) {
      check(r0, r1);
      return toF32(syncReader(source)(at + r0 * rowBytes, (r1 - r0) * rowBytes), r1 - r0);
    },
  };
}
