import { InputError } from '../errors.ts';
import { blockQuantBytes, quantLayout } from './registry.ts';
import type { QuantType } from './types.ts';

/** A tensor in the GPU layout (see types.ts): both buffers hold little-endian u32 words. */
export interface RepackedTensor {
  /** Every block's quant bytes, blockQuantBytes(type) per block, block n · blocksPerRow + b of row n. */
  readonly quants: Uint32Array<ArrayBuffer>;
  /** Every block's header bytes in headerWords words, zero padded, in the same block order. */
  readonly headers: Uint32Array<ArrayBuffer>;
}

/** The host's byte order, so the word copies below move bytes, never swap them. */
const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * From this length on, a range is copied with one `subarray` + `set`; shorter ones cost more in the
 * call and the view's allocation than in the copy (the 16- and 32-byte quants of the 32-weight
 * types: about 3× slower than the word loop below, measured on 100 MB).
 */
const SET_FROM = 96;

/**
 * Copies one range of `length` bytes from each of `count` blocks: block b's bytes at
 * srcAt + b · srcStride of `src` go to dstAt + b · dstStride of `dst`. Ranges that are whole words
 * move 4 bytes at a time through DataViews (unaligned reads are fine there); the rest byte by byte.
 */
function copyRange(
  src: Uint8Array,
  srcAt: number,
  srcStride: number,
  dst: Uint8Array,
  dstAt: number,
  dstStride: number,
  count: number,
  length: number,
): void {
  if (length >= SET_FROM) {
    for (let b = 0; b < count; b++) {
      const s = srcAt + b * srcStride;
      dst.set(src.subarray(s, s + length), dstAt + b * dstStride);
    }
  } else if (length % 4 === 0) {
    const from = new DataView(src.buffer, src.byteOffset, src.byteLength);
    const to = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
    for (let b = 0; b < count; b++) {
      const s = srcAt + b * srcStride;
      const t = dstAt + b * dstStride;
      for (let i = 0; i < length; i += 4)
        to.setUint32(t + i, from.getUint32(s + i, HOST_LITTLE_ENDIAN), HOST_LITTLE_ENDIAN);
    }
  } else {
    for (let b = 0; b < count; b++) {
      const s = srcAt + b * srcStride;
      const t = dstAt + b * dstStride;
      for (let i = 0; i < length; i++) dst[t + i] = src[s + i];
    }
  }
}

/**
 * The file's [N, K] tensor at byte `offset` of `bytes`, in `type`'s GPU layout: each block's quant
 * ranges, in order, to the quants buffer; its header ranges to their places in its header words.
 * Words are read on the GPU as little-endian u32, which a Uint32Array is on every host WebGPU runs on.
 */
export function repackTensor(
  type: QuantType,
  bytes: Uint8Array,
  offset: number,
  N: number,
  K: number,
  name = 'tensor',
): RepackedTensor {
  const layout = quantLayout(type, N, K, name);
  checkExtent(bytes, offset, layout.fileBytes, name);
  const blocks = N * layout.blocksPerRow;
  const quants = new Uint32Array(layout.quantBytes / 4);
  const headers = new Uint32Array(layout.headerBytes / 4);
  const q = new Uint8Array(quants.buffer);
  const h = new Uint8Array(headers.buffer);
  const quantStride = blockQuantBytes(type);
  const headerStride = type.headerWords * 4;
  let at = 0;
  for (const [from, to] of type.quants) {
    copyRange(bytes, offset + from, type.blockBytes, q, at, quantStride, blocks, to - from);
    at += to - from;
  }
  for (const [from, to, dst] of type.header) {
    copyRange(bytes, offset + from, type.blockBytes, h, dst, headerStride, blocks, to - from);
  }
  return { quants, headers };
}

/**
 * The file's blocks back from the GPU layout: repackTensor's inverse, so whatever holds a weight
 * only as packed buffers can still dequantize it exactly on the CPU.
 */
export function unpackBlocks(
  type: QuantType,
  packed: RepackedTensor,
  blocks: number,
): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(blocks * type.blockBytes);
  const q = new Uint8Array(packed.quants.buffer, packed.quants.byteOffset, packed.quants.byteLength);
  const h = new Uint8Array(packed.headers.buffer, packed.headers.byteOffset, packed.headers.byteLength);
  const quantStride = blockQuantBytes(type);
  const headerStride = type.headerWords * 4;
  let at = 0;
  for (const [from, to] of type.quants) {
    copyRange(q, at, quantStride, out, from, type.blockBytes, blocks, to - from);
    at += to - from;
  }
  for (const [from, to, src] of type.header) {
    copyRange(h, src, headerStride, out, from, type.blockBytes, blocks, to - from);
  }
  return out;
}

/** W[N, K] (row-major f32), dequantized as ggml does. */
export function dequantizeTensor(
  type: QuantType,
  bytes: Uint8Array,
  offset: number,
  N: number,
  K: number,
  name = 'tensor',
): Float32Array<ArrayBuffer> {
  const out = new Float32Array(N * K);
  dequantizeRows(type, bytes, offset, K, 0, N, out, name);
  return out;
}

/**
 * Rows row0 … row0 + rows − 1 of a [·, K] tensor at byte `offset` of `bytes`, dequantized into
 * `out` (rows · K values from index 0): an embedding lookup or a slice of the LM head without the
 * whole tensor.
 */
export function dequantizeRows(
  type: QuantType,
  bytes: Uint8Array,
  offset: number,
  K: number,
  row0: number,
  rows: number,
  out: Float32Array,
  name = 'tensor',
): void {
  const { blocksPerRow } = quantLayout(type, rows, K, name);
  if (!Number.isInteger(row0) || row0 < 0) throw new InputError(`${name}: row ${row0} is not a row`);
  const rowBytes = blocksPerRow * type.blockBytes;
  const start = offset + row0 * rowBytes;
  checkExtent(bytes, start, rows * rowBytes, name);
  if (out.length < rows * K) {
    throw new InputError(
      `${name}: ${rows} rows of ${K} need ${rows * K} values, the output holds ${out.length}`,
    );
  }
  type.dequantize(bytes, start, rows * blocksPerRow, out, 0);
}

function checkExtent(bytes: Uint8Array, offset: number, length: number, name: string): void {
  if (!Number.isInteger(offset) || offset < 0 || offset + length > bytes.length) {
    throw new InputError(
      `${name}: needs bytes [${offset}, ${offset + length}) but the data holds ${bytes.length} (a truncated file?)`,
    );
  }
}
