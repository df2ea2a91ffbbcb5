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

/**
 * Arrays longer than this keep only their length, unless the caller asks for them by key (the
 * tokenizer's vocabulary and merges): a header read for its shapes alone stays small.
 */
const ARRAY_KEEP_MAX = 1024;

export interface GgufParseOptions {
  /** Keys whose arrays are kept whole, however long (default: none beyond ARRAY_KEEP_MAX elements). */
  keepArray?: (key: string) => boolean;
  /**
   * The most elements a kept array may claim: checked against its length field before any element
   * is read, so a hostile file claiming 2^31 tokens is refused at once, not read until it runs out.
   */
  keptArrayMax?: number;
}

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

/** What a reader error names: a value, or element `index` of the array `what`. */
function described(what: string, index: number) {
  return index < 0 ? what : `element ${index} of ${what}`;
}

class Reader {
  private pos = 0;
  private readonly view: DataView;
  // ignoreBOM: a string that starts with U+FEFF (a tokenizer may hold such a token) keeps it.
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
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
    return this.u64(what, -1);
  }
  /**
   * A u64 read as two u32 halves, no BigInt, and its error message built only when it is thrown:
   * a vocabulary's hundreds of thousands of string lengths come through here.
   */
  private u64(what: string, index: number) {
    this.need(8);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getUint32(this.pos + 4, true);
    this.pos += 8;
    if (hi > 0x1fffff) {
      const v = (BigInt(hi) << BigInt(32)) | BigInt(lo);
      throw new InputError(`${this.source}: ${described(what, index)} ${v} is too large`);
    }
    return hi * 2 ** 32 + lo;
  }
  /** A string; `index` ≥ 0 names it as that element of the array `what`. */
  string(what: string, index = -1) {
    const n = this.u64(what, index);
    this.need(n);
    let s: string;
    try {
      s = this.decoder.decode(this.bytes.subarray(this.pos, this.pos + n));
    } catch {
      throw new InputError(`${this.source}: ${described(what, index)} is not valid UTF-8`);
    }
    this.pos += n;
    return s;
  }
  /** One value of a metadata type; `index` names the element of an array in errors. */
  scalar(type: number, key: string, index = -1): GgufScalar {
    const name = VALUE_TYPES[type as keyof typeof VALUE_TYPES];
    // No closure per value: a tokenizer's arrays hold hundreds of thousands of them.
    const at = this.pos;
    const v = this.view;
    switch (name) {
      case 'u8':
      case 'i8':
      case 'bool':
        this.need(1);
        this.pos = at + 1;
        return name === 'u8' ? v.getUint8(at) : name === 'i8' ? v.getInt8(at) : v.getUint8(at) !== 0;
      case 'u16':
      case 'i16':
        this.need(2);
        this.pos = at + 2;
        return name === 'u16' ? v.getUint16(at, true) : v.getInt16(at, true);
      case 'u32':
      case 'i32':
      case 'f32':
        this.need(4);
        this.pos = at + 4;
        return name === 'u32'
          ? v.getUint32(at, true)
          : name === 'i32'
            ? v.getInt32(at, true)
            : v.getFloat32(at, true);
      case 'u64':
      case 'i64':
      case 'f64':
        this.need(8);
        this.pos = at + 8;
        return name === 'u64'
          ? v.getBigUint64(at, true)
          : name === 'i64'
            ? v.getBigInt64(at, true)
            : v.getFloat64(at, true);
      case 'string':
        return index < 0 ? this.string(`value of ${key}`) : this.string(key, index);
      default:
        throw new InputError(`${this.source}: metadata ${key} has unknown value type ${type}`);
    }
  }
}

/** Reads a GGUF header from the first bytes of a file (throws GgufTruncatedError if they are too few). */
export function parseGgufHeader(
  bytes: Uint8Array,
  source = 'GGUF file',
  opts: GgufParseOptions = {},
): GgufHeader {
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
    const keep = length <= ARRAY_KEEP_MAX || opts.keepArray?.(key) === true;
    if (keep && opts.keptArrayMax !== undefined && length > opts.keptArrayMax) {
      throw new InputError(
        `${source}: metadata ${key} claims ${length} elements, more than the ${opts.keptArrayMax} this reader accepts`,
      );
    }
    const values: GgufScalar[] = [];
    for (let j = 0; j < length; j++) {
      const value = r.scalar(elemType, key, j);
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
  opts: GgufParseOptions = {},
): Promise<GgufHeader> {
  let length = first;
  for (;;) {
    const bytes = await read(length);
    try {
      return parseGgufHeader(bytes, source, opts);
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
