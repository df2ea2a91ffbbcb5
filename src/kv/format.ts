import { InputError } from '../errors.ts';
import { f16BitsToF32, f32ToF16Bits } from '../weight-format.ts';

/**
 * KV element types: how the paged pool stores each K and V row (shaders/lib/kv_<type>.wgsl is the
 * GPU side of the same format). A row of headDim values is headDim / 4 words of 4 values, then
 * KV_EXTRA_WORDS words:
 * - **f32**: a word is 4 floats (16 bytes);
 * - **f16**: a word is 2 u32 of 2 IEEE binary16 each (pack2x16float: 8 bytes), so it needs no
 *   `shader-f16`; exactly half of f32;
 * - **int8**: a word is one u32 of 4 signed bytes q = round(clamp(x / absmax, −1, 1) · 127)
 *   (pack4x8snorm), symmetric, and one more word after the row holds absmax (f32 bits): one scale
 *   per (token, KV head, K or V), so a row is headDim + 4 bytes, (headDim + 4) / (4 · headDim) of f32.
 *   A value reads back as q / 127 · absmax.
 */
export const KV_DTYPES = ['f32', 'f16', 'int8'] as const;
export type KvDtype = (typeof KV_DTYPES)[number];

/** Bytes of one pool word (4 values of a row). */
export const KV_WORD_BYTES: Readonly<Record<KvDtype, number>> = { f32: 16, f16: 8, int8: 4 };

/** Words after a row's values: int8's scale. */
export const KV_EXTRA_WORDS: Readonly<Record<KvDtype, number>> = { f32: 0, f16: 0, int8: 1 };

/** Words per cached row of headDim values (headDim a multiple of 4). */
export function kvRowWords(headDim: number, dtype: KvDtype): number {
  return headDim / 4 + KV_EXTRA_WORDS[dtype];
}

/** Bytes per cached row of headDim values, scale included. */
export function kvRowBytes(headDim: number, dtype: KvDtype): number {
  return kvRowWords(headDim, dtype) * KV_WORD_BYTES[dtype];
}

export function isKvDtype(s: string): s is KvDtype {
  return (KV_DTYPES as readonly string[]).includes(s);
}

/** `s` as a KV type; an unknown one is an InputError naming `what` (a flag or field). */
export function parseKvDtype(s: string, what = '--kv-dtype'): KvDtype {
  if (!isKvDtype(s)) throw new InputError(`${what}: "${s}" is not a KV type (${KV_DTYPES.join(', ')})`);
  return s;
}

/** WGSL round(): to nearest, ties to even (Math.round takes ties up). */
function roundTiesEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** int8 quant of x for a row whose 1 / absmax is `inv`, as pack4x8snorm computes it in f32. */
function quantInt8(x: number, inv: number): number {
  const scaled = Math.fround(Math.fround(x) * inv);
  return roundTiesEven(Math.fround(Math.min(1, Math.max(-1, scaled)) * 127));
}

/** A row's absolute maximum and its f32 reciprocal (1 for an all-zero row, as the writers do). */
function rowScale(row: ArrayLike<number>): { absMax: number; inv: number } {
  let absMax = 0;
  for (let i = 0; i < row.length; i++) absMax = Math.max(absMax, Math.abs(Math.fround(row[i])));
  return { absMax, inv: absMax > 0 ? Math.fround(1 / absMax) : 1 };
}

/** One row of values as the pool stores it: kvRowWords(row.length, dtype) words as u32 (f32 as its bits). */
export function encodeKvRow(dtype: KvDtype, row: ArrayLike<number>): Uint32Array {
  const headDim = row.length;
  const words = new Uint32Array((kvRowWords(headDim, dtype) * KV_WORD_BYTES[dtype]) / 4);
  if (dtype === 'f32') {
    // set() takes any array-like; copying it into an Array first cost the long-context checks seconds.
    new Float32Array(words.buffer).set(row);
  } else if (dtype === 'f16') {
    for (let i = 0; i < headDim; i += 2)
      words[i / 2] = (f32ToF16Bits(row[i]) | (f32ToF16Bits(row[i + 1]) << 16)) >>> 0;
  } else {
    const { absMax, inv } = rowScale(row);
    for (let i = 0; i < headDim; i++) {
      const q = quantInt8(row[i], inv);
      words[i >> 2] |= (q & 0xff) << (8 * (i & 3));
    }
    words[headDim / 4] = new Uint32Array(new Float32Array([absMax]).buffer)[0];
  }
  return words;
}

/** The values a stored row reads back as (the inverse of encodeKvRow, exactly as the shaders read it). */
export function decodeKvRow(dtype: KvDtype, words: Uint32Array, headDim: number): Float64Array {
  const out = new Float64Array(headDim);
  if (dtype === 'f32') {
    out.set(new Float32Array(words.buffer, words.byteOffset, headDim));
  } else if (dtype === 'f16') {
    for (let i = 0; i < headDim; i++) out[i] = f16BitsToF32((words[i >> 1] >>> (16 * (i & 1))) & 0xffff);
  } else {
    const absMax = new Float32Array(new Uint32Array([words[headDim / 4]]).buffer)[0];
    for (let i = 0; i < headDim; i++) {
      const q = (((words[i >> 2] >>> (8 * (i & 3))) & 0xff) << 24) >> 24;
      out[i] = Math.max(q / 127, -1) * absMax;
    }
  }
  return out;
}

/**
 * Rows [n, headDim] as attention reads them back from a pool of `dtype`: each row of headDim
 * values stored and read again. The CPU references attend over these in float64, so a kernel is
 * held to the arithmetic, not to the (intended) loss of the format.
 */
export function roundTripKv(dtype: KvDtype, rows: ArrayLike<number>, headDim: number): Float64Array {
  const out = new Float64Array(rows.length);
  if (dtype === 'f32') {
    // A row stored as f32 reads back as each value rounded to f32: no need to pack it.
    for (let i = 0; i < rows.length; i++) out[i] = Math.fround(rows[i]);
    return out;
  }
  const row = new Float64Array(headDim);
  for (let r = 0; r < rows.length / headDim; r++) {
    for (let i = 0; i < headDim; i++) row[i] = rows[r * headDim + i];
    out.set(decodeKvRow(dtype, encodeKvRow(dtype, row), headDim), r * headDim);
  }
  return out;
}
