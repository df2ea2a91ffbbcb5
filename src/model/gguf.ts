import { InputError } from '../errors.ts';

/**
 * GGUF (llama.cpp's model file) header reader: the magic, the version, the metadata key-values
 * and the tensor-info table, for versions 2 and 3 (64-bit counts; version 1 used 32-bit ones and
 * is long gone). It reads no tensor data, so it can run on the first few megabytes of a file of
 * many gigabytes; when the header runs past the bytes given, it throws GgufTruncatedError with how
 * many bytes were consumed, and the caller reads more.
 *
 * Layout (all little-endian): "GGUF", u32 version, u64 tensor count, u64 metadata count; each
 * metadata entry is a string key, a u32 value type and the value; each tensor info is a string
 * name, u32 n_dims, u64 dims[n_dims] (innermost first), u32 ggml type, u64 offset from the start of
 * the data section. A string is a u64 length and UTF-8 bytes. The data section starts at the next
 * multiple of `general.alignment` (default 32) after the table.
 */

/** GGUF metadata value types, by their on-disk code. */
const VALUE_TYPES = {
  0: 'u8',
  1: 'i8',
  2: 'u16',
  3: 'i16',
  4: 'u32',
  5: 'i32',
  6: 'f32',
  7: 'bool',
  8: 'string',
  9: 'array',
  10: 'u64',
  11: 'i64',
  12: 'f64',
} as const;

/** Arrays longer than this (a tokenizer's vocabulary, its merges) keep only their length. */
const ARRAY_KEEP_MAX = 1024;

export type GgufScalar = number | bigint | boolean | string;
export type GgufValue = GgufScalar | { array: GgufScalar[] | null; length: number };

/**
 * ggml tensor types we can size: [elements per block, bytes per block]. F32, F16, BF16 and the
 * legacy and k-quant block formats as ggml defines them (Q8_0: an f16 scale and 32 int8; Q4_0: an
 * f16 scale and 32 packed 4-bit values).
 */
export const GGML_TYPES: Record<number, { name: string; blockElems: number; blockBytes: number }> = {
  0: { name: 'F32', blockElems: 1, blockBytes: 4 },
  1: { name: 'F16', blockElems: 1, blockBytes: 2 },
  2: { name: 'Q4_0', blockElems: 32, blockBytes: 18 },
  3: { name: 'Q4_1', blockElems: 32, blockBytes: 20 },
  6: { name: 'Q5_0', blockElems: 32, blockBytes: 22 },
  7: { name: 'Q5_1', blockElems: 32, blockBytes: 24 },
  8: { name: 'Q8_0', blockElems: 32, blockBytes: 34 },
  10: { name: 'Q2_K', blockElems: 256, blockBytes: 84 },
  11: { name: 'Q3_K', blockElems: 256, blockBytes: 110 },
  12: { name: 'Q4_K', blockElems: 256, blockBytes: 144 },
  13: { name: 'Q5_K', blockElems: 256, blockBytes: 176 },
  14: { name: 'Q6_K', blockElems: 256, blockBytes: 210 },
  30: { name: 'BF16', blockElems: 1, blockBytes: 2 },
};

export interface GgufTensorInfo {
  name: string;
  /** ggml order: dims[0] is the innermost (contiguous) axis. */
  dims: number[];
  type: number;
  /** Offset from the start of the data section. */
  offset: number;
}

export interface GgufHeader {
  version: 2 | 3;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  /** Byte offset of the data section in the file. */
  dataOffset: number;
}

/** The header ran past the bytes given; read at least `needBytes` and try again. */
export class GgufTruncatedError extends InputError {
  constructor(readonly needBytes: number) {
    super(`GGUF header is longer than the ${needBytes} bytes read`);
  }
}

const MAGIC = 0x46554747; // "GGUF" read as a little-endian u32

class Reader {
  private pos = 0;
  private readonly view: DataView;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  constructor(
    private readonly bytes: Uint8Array,
    private readonly source: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get offset() {
    return this.pos;
  }
  private need(n: number) {
    if (this.pos + n > this.bytes.byteLength) {
      throw new GgufTruncatedError(Math.max(this.bytes.byteLength * 2, this.pos + n));
    }
  }
  u8() {
    this.need(1);
    return this.view.getUint8(this.pos++);
  }
  u32() {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** A u64 that must fit a JS number exactly (counts, lengths, offsets, dims). */
  size(what: string) {
    this.need(8);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER))
      throw new InputError(`${this.source}: ${what} ${v} is too large`);
    return Number(v);
  }
  string(what: string) {
    const n = this.size(`${what} length`);
    this.need(n);
    const s = this.decoder.decode(this.bytes.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
  scalar(type: number, key: string): GgufScalar {
    const v = this.view;
    const at = this.pos;
    const name = VALUE_TYPES[type as keyof typeof VALUE_TYPES];
    const fixed = (n: number, read: () => GgufScalar) => {
      this.need(n);
      const out = read();
      this.pos = at + n;
      return out;
    };
    switch (name) {
      case 'u8':
        return fixed(1, () => v.getUint8(at));
      case 'i8':
        return fixed(1, () => v.getInt8(at));
      case 'u16':
        return fixed(2, () => v.getUint16(at, true));
      case 'i16':
        return fixed(2, () => v.getInt16(at, true));
      case 'u32':
        return fixed(4, () => v.getUint32(at, true));
      case 'i32':
        return fixed(4, () => v.getInt32(at, true));
      case 'f32':
        return fixed(4, () => v.getFloat32(at, true));
      case 'bool':
        return fixed(1, () => v.getUint8(at) !== 0);
      case 'string':
        return this.string(`value of ${key}`);
      case 'u64':
        return fixed(8, () => v.getBigUint64(at, true));
      case 'i64':
        return fixed(8, () => v.getBigInt64(at, true));
      case 'f64':
        return fixed(8, () => v.getFloat64(at, true));
      default:
        throw new InputError(`${this.source}: metadata ${key} has unknown value type ${type}`);
    }
  }
}

/** Reads a GGUF header from the first bytes of a file (throws GgufTruncatedError if they are too few). */
export function parseGgufHeader(bytes: Uint8Array, source = 'GGUF file'): GgufHeader {
  const r = new Reader(bytes, source);
  if (bytes.byteLength >= 4 && new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true) !== MAGIC) {
    throw new InputError(`${source} is not a GGUF file (it does not start with "GGUF")`);
  }
  r.u32();
  const version = r.u32();
  if (version !== 2 && version !== 3) {
    throw new InputError(`${source}: GGUF version ${version} is not supported (2 and 3 are)`);
  }
  const tensorCount = r.size('tensor count');
  const kvCount = r.size('metadata count');
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = r.string('metadata key');
    const type = r.u32();
    if (type !== 9) {
      metadata.set(key, r.scalar(type, key));
      continue;
    }
    const elemType = r.u32();
    if (elemType === 9)
      throw new InputError(`${source}: metadata ${key} is a nested array, which is not supported`);
    const length = r.size(`length of ${key}`);
    const keep = length <= ARRAY_KEEP_MAX;
    const values: GgufScalar[] = [];
    for (let j = 0; j < length; j++) {
      const value = r.scalar(elemType, key);
      if (keep) values.push(value);
    }
    metadata.set(key, { array: keep ? values : null, length });
  }
  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = r.string('tensor name');
    const nDims = r.u32();
    if (nDims < 1 || nDims > 4)
      throw new InputError(`${source}: tensor ${name} has ${nDims} dims (1 to 4 allowed)`);
    const dims = Array.from({ length: nDims }, () => r.size(`dim of ${name}`));
    const type = r.u32();
    const offset = r.size(`offset of ${name}`);
    tensors.push({ name, dims, type, offset });
  }
  const alignment = metadata.get('general.alignment') ?? 32;
  if (typeof alignment !== 'number' || alignment <= 0 || alignment % 8 !== 0) {
    throw new InputError(
      `${source}: general.alignment ${String(alignment)} must be a positive multiple of 8`,
    );
  }
  const dataOffset = Math.ceil(r.offset / alignment) * alignment;
  return { version, metadata, tensors, dataOffset };
}

/** Bytes of one tensor's data, from its ggml type's block size. */
export function ggufTensorBytes(t: GgufTensorInfo, source = 'GGUF file'): number {
  const type = GGML_TYPES[t.type];
  if (!type)
    throw new InputError(`${source}: tensor ${t.name} has ggml type ${t.type}, which this tool cannot size`);
  const elems = t.dims.reduce((a, b) => a * b, 1);
  if (elems % type.blockElems !== 0) {
    throw new InputError(
      `${source}: tensor ${t.name} has ${elems} elements, not a whole number of ${type.name} blocks`,
    );
  }
  return (elems / type.blockElems) * type.blockBytes;
}

/**
 * Reads a GGUF header through `read(offset, length)`, starting with `first` bytes and doubling
 * until the header fits (up to `max`), so a multi-gigabyte file is never read whole.
 */
export async function readGgufHeader(
  read: (length: number) => Promise<Uint8Array>,
  source: string,
  first = 1 << 20,
  max = 1 << 30,
): Promise<GgufHeader> {
  let length = first;
  for (;;) {
    const bytes = await read(length);
    try {
      return parseGgufHeader(bytes, source);
    } catch (e) {
      if (!(e instanceof GgufTruncatedError) || bytes.byteLength < length) {
        if (e instanceof GgufTruncatedError)
          throw new InputError(`${source}: the file ends inside its GGUF header`);
        throw e;
      }
      if (e.needBytes > max) throw new InputError(`${source}: GGUF header is larger than ${max} bytes`);
      length = Math.max(e.needBytes, length * 2);
    }
  }
}
