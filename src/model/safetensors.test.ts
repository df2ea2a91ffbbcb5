import { describe, expect, it } from 'vitest';
import { SafetensorsError } from '../errors.ts';
import { parseSafetensors, serializeSafetensors } from './safetensors.ts';

/** Builds a file by hand: u64 header length, the header text as given, then the data bytes. */
function rawFile(headerText: string, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const header = new TextEncoder().encode(headerText);
  const out = new Uint8Array(8 + header.length + data.length);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 8);
  out.set(data, 8 + header.length);
  return out;
}

function fileWith(header: unknown, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  return rawFile(JSON.stringify(header), data);
}

/** Little-endian u16 words as bytes, the storage of F16 and BF16. */
function u16Bytes(words: number[]): Uint8Array {
  const out = new Uint8Array(words.length * 2);
  const view = new DataView(out.buffer);
  words.forEach((w, i) => {
    view.setUint16(2 * i, w, true);
  });
  return out;
}

function headerOf(file: Uint8Array): { length: number; text: string } {
  const length = new DataView(file.buffer, file.byteOffset).getUint32(0, true);
  return { length, text: new TextDecoder().decode(file.subarray(8, 8 + length)) };
}

/** f16 bits → value by the IEEE definition, computed in float64 as an independent reference. */
function f16Reference(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant === 0 ? sign * Infinity : Number.NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

describe('serializeSafetensors / parseSafetensors', () => {
  const tensors = [
    { name: 'b.weight', shape: [2, 3], data: new Float32Array([1, -2, 3.5, 1e-30, -0, 7]) },
    { name: '0', shape: [3], data: new Float32Array([Number.POSITIVE_INFINITY, Number.NaN, 0.1]) },
    { name: 'scalar', shape: [], data: new Float32Array([42]) },
    { name: 'empty', shape: [0, 4], data: new Float32Array(0) },
    { name: 'a.weight', shape: [1], data: new Float32Array([-1]) },
  ];

  it('round-trips f32 tensors bit for bit', () => {
    const parsed = parseSafetensors(serializeSafetensors(tensors));
    expect([...parsed.keys()].sort()).toEqual(tensors.map((t) => t.name).sort());
    for (const t of tensors) {
      const got = parsed.get(t.name)!;
      expect(got.dtype).toBe('F32');
      expect(got.shape).toEqual(t.shape);
      expect(new Uint8Array(got.data.buffer)).toEqual(new Uint8Array(t.data.buffer));
    }
  });

  it('pads the header with spaces so data starts 8-byte aligned, keeping the given order and metadata', () => {
    const file = serializeSafetensors(tensors, { format: 'pt', note: 'é' });
    const { length, text } = headerOf(file);
    expect(length % 8).toBe(0);
    expect(new DataView(file.buffer).getUint32(4, true)).toBe(0);
    expect(text).toMatch(/^\{.*\} *$/);
    const header = JSON.parse(text);
    expect(header.__metadata__).toEqual({ format: 'pt', note: 'é' });
    // Insertion order in the text, not JS object key order (which would put "0" first).
    const positions = tensors.map((t) => text.indexOf(`${JSON.stringify(t.name)}:`));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(header['b.weight']).toEqual({ dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] });
    expect(header['0'].data_offsets).toEqual([24, 36]);
    expect(file.length).toBe(8 + length + 4 * (6 + 3 + 1 + 0 + 1));
  });

  it('writes the default metadata {format: "pt"}', () => {
    expect(JSON.parse(headerOf(serializeSafetensors([])).text)).toEqual({ __metadata__: { format: 'pt' } });
  });

  it('rejects writing data whose length does not match the shape, or a repeated name', () => {
    expect(() => serializeSafetensors([{ name: 'x', shape: [2, 2], data: new Float32Array(3) }])).toThrow(
      /"x".*4 elements, data has 3/,
    );
    const x = { name: 'x', shape: [1], data: new Float32Array(1) };
    expect(() => serializeSafetensors([x, x])).toThrow(SafetensorsError);
  });

  it('reads a file that sits at an odd offset inside a larger buffer', () => {
    const file = serializeSafetensors(tensors.slice(0, 1));
    const big = new Uint8Array(file.length + 3);
    big.set(file, 3);
    expect(parseSafetensors(big.subarray(3)).get('b.weight')!.data).toEqual(tensors[0].data);
  });
});

describe('parseSafetensors dtype conversion', () => {
  it('decodes F16 exactly: normals, max, subnormals, signed zero, infinities and NaN', () => {
    const words = [0x3c00, 0xc100, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x8000, 0x7c00, 0xfc00, 0x7e00];
    const file = fileWith(
      { h: { dtype: 'F16', shape: [words.length], data_offsets: [0, 20] } },
      u16Bytes(words),
    );
    const t = parseSafetensors(file).get('h')!;
    expect(t.dtype).toBe('F16');
    const expected = [
      1,
      -2.5,
      65504,
      2 ** -24,
      1023 * 2 ** -24,
      2 ** -14,
      -0,
      Infinity,
      -Infinity,
      Number.NaN,
    ];
    expect(Array.from(t.data)).toEqual(expected);
    expect(Object.is(t.data[6], -0)).toBe(true);
  });

  it('decodes every one of the 65536 F16 bit patterns like the IEEE definition', () => {
    const words = Array.from({ length: 65536 }, (_, i) => i);
    const file = fileWith(
      { all: { dtype: 'F16', shape: [256, 256], data_offsets: [0, 131072] } },
      u16Bytes(words),
    );
    const data = parseSafetensors(file).get('all')!.data;
    const mismatches = words.filter((h) => !Object.is(data[h], f16Reference(h)));
    expect(mismatches).toEqual([]);
  });

  it('decodes BF16 exactly', () => {
    // 1.0, -3.0, 0.15625 (f32 bits 0x3f800000, 0xc0400000, 0x3e200000), then -inf.
    const file = fileWith(
      { b: { dtype: 'BF16', shape: [2, 2], data_offsets: [0, 8] } },
      u16Bytes([0x3f80, 0xc040, 0x3e20, 0xff80]),
    );
    const t = parseSafetensors(file).get('b')!;
    expect(t.dtype).toBe('BF16');
    expect(t.shape).toEqual([2, 2]);
    expect(Array.from(t.data)).toEqual([1, -3, 0.15625, -Infinity]);
  });

  it('copies an F32 tensor that starts at an unaligned offset into an aligned array', () => {
    // One F16 value first, so the F32 tensor begins 2 bytes into the data section.
    const data = new Uint8Array(2 + 8);
    const view = new DataView(data.buffer);
    view.setUint16(0, 0x3c00, true);
    view.setFloat32(2, 0.1, true);
    view.setFloat32(6, -7.25, true);
    const file = fileWith(
      {
        h: { dtype: 'F16', shape: [1], data_offsets: [0, 2] },
        f: { dtype: 'F32', shape: [2], data_offsets: [2, 10] },
      },
      data,
    );
    const f = parseSafetensors(file).get('f')!.data;
    expect(f.byteOffset % 4).toBe(0);
    expect(Array.from(f)).toEqual([Math.fround(0.1), -7.25]);
  });
});

describe('parseSafetensors rejects malformed files', () => {
  const source = 'bad.safetensors';
  const ok = { dtype: 'F32', shape: [2], data_offsets: [0, 8] };
  const data8 = new Uint8Array(8);

  function rejects(file: Uint8Array, problem: RegExp): void {
    let error: unknown;
    try {
      parseSafetensors(file, source);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SafetensorsError);
    expect((error as Error).name).toBe('SafetensorsError');
    expect((error as Error).message).toContain(source);
    expect((error as Error).message).toMatch(problem);
  }

  function withHeaderLength(low: number, high: number): Uint8Array {
    const file = fileWith({ t: ok }, data8);
    const view = new DataView(file.buffer);
    view.setUint32(0, low, true);
    view.setUint32(4, high, true);
    return file;
  }

  it('a file shorter than the 8-byte length prefix', () => {
    rejects(new Uint8Array(5), /5 bytes, shorter than the 8-byte header length/);
  });

  it('a header length past the end of the file', () => {
    rejects(withHeaderLength(1000, 0), /header length 1000 runs past the end/);
  });

  it('an absurd header length', () => {
    rejects(withHeaderLength(200_000_000, 0), /header length 200000000 exceeds the 100000000-byte limit/);
    rejects(withHeaderLength(0, 1), /header length 4294967296 exceeds/);
  });

  it('a header that is not UTF-8, not JSON, or not an object', () => {
    const notUtf8 = rawFile('{"a": 1}');
    notUtf8[10] = 0xff;
    rejects(notUtf8, /not valid UTF-8/);
    rejects(rawFile('{"t": '), /not valid JSON/);
    rejects(rawFile('[1, 2]'), /not a JSON object/);
    rejects(rawFile('null'), /not a JSON object/);
  });

  it('bad __metadata__', () => {
    rejects(
      fileWith({ __metadata__: { n: 1 }, t: ok }, data8),
      /"__metadata__" must be an object of string values/,
    );
  });

  it('a tensor entry that is not an object', () => {
    rejects(fileWith({ t: [1, 2] }), /tensor "t": entry is not an object/);
  });

  it('a missing or non-string dtype', () => {
    rejects(
      fileWith({ t: { shape: [2], data_offsets: [0, 8] } }, data8),
      /tensor "t": missing or invalid dtype/,
    );
    rejects(fileWith({ t: { ...ok, dtype: 4 } }, data8), /tensor "t": missing or invalid dtype/);
  });

  it('an unsupported dtype, naming it and the supported ones', () => {
    rejects(
      fileWith({ t: { ...ok, dtype: 'I64', shape: [1] } }, data8),
      /unsupported dtype "I64" \(supported: F32, F16, BF16\)/,
    );
  });

  it('a shape that is not an array of non-negative integers', () => {
    for (const shape of [[-2], [2.5], ['2'], 2, null]) {
      rejects(
        fileWith({ t: { ...ok, shape } }, data8),
        /tensor "t": shape must be an array of non-negative integers/,
      );
    }
  });

  it('bad data_offsets', () => {
    rejects(
      fileWith({ t: { ...ok, data_offsets: [0] } }, data8),
      /data_offsets must be two non-negative integers/,
    );
    rejects(
      fileWith({ t: { ...ok, data_offsets: [-8, 0] } }, data8),
      /data_offsets must be two non-negative integers/,
    );
    rejects(fileWith({ t: { ...ok, data_offsets: [8, 0] } }, data8), /data_offsets end 0 is before begin 8/);
    rejects(
      fileWith({ t: { ...ok, data_offsets: [8, 16] } }, data8),
      /\[8, 16\] run past the 8-byte data section/,
    );
  });

  it('a byte length that does not match shape × dtype size', () => {
    rejects(fileWith({ t: { ...ok, shape: [3] } }, data8), /span 8 bytes, but shape \[3\] of F32 needs 12/);
    rejects(fileWith({ t: { ...ok, dtype: 'F16' } }, data8), /span 8 bytes, but shape \[2\] of F16 needs 4/);
  });

  it('overlapping tensors', () => {
    const header = {
      a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] },
    };
    rejects(fileWith(header, new Uint8Array(12)), /tensors "a" \[0, 8\] and "b" \[4, 12\] overlap/);
  });

  it('but accepts empty tensors that share an offset', () => {
    const header = {
      a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      e: { dtype: 'F32', shape: [0], data_offsets: [4, 4] },
    };
    expect(parseSafetensors(fileWith(header, data8)).get('e')!.data.length).toBe(0);
  });
});
