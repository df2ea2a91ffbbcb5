import { SafetensorsError } from '../errors.ts';

/**
 * The safetensors format, read and written without Node APIs so the same code runs in a Web Worker:
 *
 *   [u64 little-endian N] [N bytes of UTF-8 JSON header] [data section]
 *
 * The header maps each tensor name to `{dtype, shape, data_offsets: [begin, end]}`, offsets relative
 * to the start of the data section, plus an optional `__metadata__` map of strings. Files come from
 * users, so every field is checked before a single byte of tensor data is trusted.
 */

/** Bytes per element of each dtype we decode; everything else in the spec is rejected by name. */
const DTYPE_BYTES = {
  F32: 4,
  F16: 2,
  BF16: 2,
} as const;

export type SafetensorsDtype = keyof typeof DTYPE_BYTES;

/** Format constants shared by the reader and the writer. */
const FORMAT = {
  /** Width of the little-endian u64 header length that opens the file. */
  lengthPrefixBytes: 8,
  /** The reference writer pads the header with spaces so the data section starts 8-byte aligned. */
  dataAlignment: 8,
  /** A header beyond this is a corrupt or hostile file, not a model; the reference reader uses the same cap. */
  maxHeaderBytes: 100_000_000,
  /** Reserved header key for free-form string metadata. */
  metadataKey: '__metadata__',
} as const;

/** One decoded tensor; `dtype` is what the file stored, `data` is always an f32 copy. */
export interface SafetensorsTensor {
  readonly dtype: SafetensorsDtype;
  readonly shape: number[];
  readonly data: Float32Array;
}

/** A tensor to write, in row-major order. */
export interface NamedTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

function isDtype(s: string): s is SafetensorsDtype {
  return Object.hasOwn(DTYPE_BYTES, s);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/**
 * f16 bit pattern → f32 bit pattern for all 65536 inputs. Built on first use (256 KB), so decoding
 * is one lookup per element; writing bit patterns rather than numbers keeps NaN payloads intact.
 */
let f16ToF32Bits: Uint32Array | undefined;

function f16Table(): Uint32Array {
  if (f16ToF32Bits) return f16ToF32Bits;
  const table = new Uint32Array(65536);
  const scratch = new Float32Array(1);
  const scratchBits = new Uint32Array(scratch.buffer);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    const exp = (h >> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0x1f) {
      // Inf (mant 0) or NaN: max exponent, mantissa moved to the top of f32's 23 bits.
      table[h] = sign | 0x7f800000 | (mant << 13);
    } else if (exp === 0) {
      // Zero or subnormal, mant × 2^-24: exactly representable as a normal f32, so let the FPU normalise it.
      scratch[0] = mant * 2 ** -24;
      table[h] = sign | scratchBits[0];
    } else {
      // Normal: rebias the exponent from 15 to 127, widen the mantissa.
      table[h] = sign | ((exp + 112) << 23) | (mant << 13);
    }
  }
  f16ToF32Bits = table;
  return table;
}

/**
 * Decodes `count` elements starting at `begin` into a fresh (hence aligned) Float32Array.
 * Bytes are assembled little-endian by hand and written as bit patterns through a Uint32Array
 * over the output, which is correct on any host byte order and never views unaligned file bytes.
 */
function decode(bytes: Uint8Array, begin: number, count: number, dtype: SafetensorsDtype): Float32Array {
  const out = new Float32Array(count);
  const bits = new Uint32Array(out.buffer);
  switch (dtype) {
    case 'F32':
      for (let i = 0, j = begin; i < count; i++, j += 4) {
        bits[i] = bytes[j] | (bytes[j + 1] << 8) | (bytes[j + 2] << 16) | (bytes[j + 3] << 24);
      }
      break;
    case 'F16': {
      const table = f16Table();
      for (let i = 0, j = begin; i < count; i++, j += 2) bits[i] = table[bytes[j] | (bytes[j + 1] << 8)];
      break;
    }
    case 'BF16':
      // bf16 is the top half of an f32, so widening is a shift.
      for (let i = 0, j = begin; i < count; i++, j += 2) bits[i] = (bytes[j] << 16) | (bytes[j + 1] << 24);
      break;
  }
  return out;
}

function shapeText(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/**
 * Parses a safetensors file into f32 tensors keyed by name. F16 and BF16 are widened exactly.
 * Every structural problem (truncation, bad JSON, bad dtype/shape/offsets, overlaps) throws a
 * SafetensorsError that names `source` and the problem.
 */
export function parseSafetensors(
  bytes: Uint8Array,
  source = 'safetensors file',
): Map<string, SafetensorsTensor> {
  const bad = (problem: string) => new SafetensorsError(`${source}: ${problem}`);

  if (bytes.byteLength < FORMAT.lengthPrefixBytes) {
    throw bad(`file is ${bytes.byteLength} bytes, shorter than the 8-byte header length`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // A u64 read as two u32 halves: any non-zero high half is already far past the header cap.
  const headerLenLow = view.getUint32(0, true);
  const headerLenHigh = view.getUint32(4, true);
  if (headerLenHigh !== 0 || headerLenLow > FORMAT.maxHeaderBytes) {
    throw bad(
      `header length ${headerLenHigh * 2 ** 32 + headerLenLow} exceeds the ${FORMAT.maxHeaderBytes}-byte limit (corrupt file?)`,
    );
  }
  const headerLen = headerLenLow;
  const dataStart = FORMAT.lengthPrefixBytes + headerLen;
  if (dataStart > bytes.byteLength) {
    throw bad(
      `header length ${headerLen} runs past the end of the ${bytes.byteLength}-byte file (truncated?)`,
    );
  }
  const dataLength = bytes.byteLength - dataStart;

  let headerText = '';
  try {
    headerText = new TextDecoder('utf-8', { fatal: true }).decode(
      bytes.subarray(FORMAT.lengthPrefixBytes, dataStart),
    );
  } catch {
    throw bad('header is not valid UTF-8');
  }
  let header: unknown;
  try {
    header = JSON.parse(headerText);
  } catch (e) {
    throw bad(`header is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRecord(header)) throw bad('header is not a JSON object');

  const metadata = header[FORMAT.metadataKey];
  if (metadata !== undefined) {
    if (!isRecord(metadata) || !Object.values(metadata).every((v) => typeof v === 'string')) {
      throw bad(`"${FORMAT.metadataKey}" must be an object of string values`);
    }
  }

  // Validate every entry before decoding any, so a hostile header costs no large allocations.
  const valid: { name: string; dtype: SafetensorsDtype; shape: number[]; begin: number; end: number }[] = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === FORMAT.metadataKey) continue;
    const where = `tensor "${name}"`;
    if (!isRecord(entry)) throw bad(`${where}: entry is not an object`);

    const dtype = entry.dtype;
    if (typeof dtype !== 'string') throw bad(`${where}: missing or invalid dtype (expected a string)`);
    if (!isDtype(dtype)) {
      throw bad(`${where}: unsupported dtype "${dtype}" (supported: ${Object.keys(DTYPE_BYTES).join(', ')})`);
    }

    const shape: unknown = entry.shape;
    if (!Array.isArray(shape) || !shape.every(isNonNegativeInt)) {
      throw bad(`${where}: shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
    }

    const offsets: unknown = entry.data_offsets;
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isNonNegativeInt)) {
      throw bad(`${where}: data_offsets must be two non-negative integers, got ${JSON.stringify(offsets)}`);
    }
    const [begin, end] = offsets;
    if (end < begin) throw bad(`${where}: data_offsets end ${end} is before begin ${begin}`);
    if (end > dataLength) {
      throw bad(`${where}: data_offsets [${begin}, ${end}] run past the ${dataLength}-byte data section`);
    }

    // The product only loses precision above 2^53, far beyond any byte length we accepted above.
    const bytesNeeded = shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
    if (bytesNeeded !== end - begin) {
      throw bad(
        `${where}: data_offsets span ${end - begin} bytes, but shape ${shapeText(shape)} of ${dtype} needs ${bytesNeeded}`,
      );
    }
    valid.push({ name, dtype, shape, begin, end });
  }

  // Overlapping tensors would alias each other's bytes; empty tensors occupy nothing, so skip them.
  const occupied = valid.filter((r) => r.end > r.begin).sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < occupied.length; i++) {
    const prev = occupied[i - 1];
    const cur = occupied[i];
    if (cur.begin < prev.end) {
      throw bad(
        `tensors "${prev.name}" [${prev.begin}, ${prev.end}] and "${cur.name}" [${cur.begin}, ${cur.end}] overlap`,
      );
    }
  }

  const tensors = new Map<string, SafetensorsTensor>();
  for (const { name, dtype, shape, begin, end } of valid) {
    const count = (end - begin) / DTYPE_BYTES[dtype];
    tensors.set(name, { dtype, shape, data: decode(bytes, dataStart + begin, count, dtype) });
  }
  return tensors;
}

/**
 * Writes tensors as an F32 safetensors file, in the order given. The header is padded with spaces
 * to a multiple of 8 bytes, as the reference writer does, so the data section starts aligned.
 */
export function serializeSafetensors(
  tensors: readonly NamedTensor[],
  metadata: Record<string, string> = { format: 'pt' },
): Uint8Array {
  // Header entries as "key":value text, joined by hand rather than one JSON.stringify of an object,
  // because objects put integer-like keys first and the tensors must stay in the order given.
  const entry = (key: string, value: unknown) => `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  const seen = new Set<string>();
  const entries = [entry(FORMAT.metadataKey, metadata)];
  let offset = 0;
  for (const t of tensors) {
    if (t.name === FORMAT.metadataKey || seen.has(t.name)) {
      throw new SafetensorsError(`cannot write tensor "${t.name}": name is reserved or repeated`);
    }
    seen.add(t.name);
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) {
      throw new SafetensorsError(
        `cannot write tensor "${t.name}": shape ${shapeText(t.shape)} has ${count} elements, data has ${t.data.length}`,
      );
    }
    const begin = offset;
    offset += t.data.length * DTYPE_BYTES.F32;
    entries.push(entry(t.name, { dtype: 'F32', shape: t.shape, data_offsets: [begin, offset] }));
  }

  const json = new TextEncoder().encode(`{${entries.join(',')}}`);
  const headerLen = Math.ceil(json.length / FORMAT.dataAlignment) * FORMAT.dataAlignment;
  const dataStart = FORMAT.lengthPrefixBytes + headerLen;
  const out = new Uint8Array(dataStart + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, headerLen, true);
  view.setUint32(4, 0, true);
  out.set(json, FORMAT.lengthPrefixBytes);
  out.fill(0x20, FORMAT.lengthPrefixBytes + json.length, dataStart);

  // Bit patterns split into bytes by hand: little-endian whatever the host byte order, NaN payloads kept.
  let pos = dataStart;
  for (const t of tensors) {
    const bits = new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length);
    for (let i = 0; i < bits.length; i++, pos += 4) {
      const b = bits[i];
      out[pos] = b;
      out[pos + 1] = b >>> 8;
      out[pos + 2] = b >>> 16;
      out[pos + 3] = b >>> 24;
    }
  }
  return out;
}
