import { describe, expect, it } from 'vitest';
import { gguf, TINY_LLAMA_META } from '../../test-support/gguf-fixture.ts';
import { kvBytesPerToken } from '../capacity/kv.ts';
import { capacityModelFromGguf } from '../capacity/model.ts';
import { GgufTruncatedError, parseGgufHeader, readGgufHeader } from './gguf.ts';
import type { MetaEntry } from './gguf-writer.ts';

/** A tiny llama GGUF: 2 layers, d 64, 4 heads of 16, 2 KV heads, vocab 1500 (a long token array). */
const META: MetaEntry[] = [
  ...TINY_LLAMA_META,
  ['general.name', { str: 'tiny' }],
  ['llama.rope.freq_base', { f32: 10000 }],
  ['tokenizer.ggml.tokens', { strs: Array.from({ length: 1500 }, (_, i) => `t${i}`) }],
];

describe('GGUF header', () => {
  it('reads metadata, summarises long arrays, and sizes tensors by their block format', () => {
    const bytes = gguf(META, [
      ['token_embd.weight', [64, 1500], 1], // F16: 96,000 elements · 2 = 192,000 bytes
      ['blk.0.attn_q.weight', [64, 64], 8], // Q8_0: 4096 / 32 = 128 blocks · 34 = 4,352 bytes
      ['blk.0.ffn_down.weight', [128, 64], 2], // Q4_0: 8192 / 32 = 256 blocks · 18 = 4,608 bytes
      ['output_norm.weight', [64], 0], // F32: 256 bytes
    ]);
    const h = parseGgufHeader(bytes);
    expect(h.version).toBe(3);
    expect(h.metadata.get('llama.rope.freq_base')).toBe(10000);
    expect(h.metadata.get('tokenizer.ggml.tokens')).toEqual({ array: null, length: 1500 });
    expect(h.tensors[1]).toEqual({ name: 'blk.0.attn_q.weight', dims: [64, 64], type: 8, offset: 64 });
    expect(h.dataOffset % 32).toBe(0);
    expect(h.dataOffset).toBeGreaterThanOrEqual(bytes.length);
    const m = capacityModelFromGguf(h);
    expect(m).toMatchObject({
      name: 'tiny',
      layers: 2,
      heads: 4,
      kvHeads: 2,
      headDim: 16,
      hidden: 64,
      vocab: 1500,
      contextLength: 2048,
      tied: true,
    });
    expect(m.weightsBytes).toBe(192_000 + 4_352 + 4_608 + 256);
    // 2 · 2 layers · 2 kv heads · 16 · 2 bytes = 256 bytes per token in f16.
    expect(kvBytesPerToken(m, 'f16')).toBe(256);
  });

  it('asks for more bytes when the header is cut, and reads it in growing chunks', async () => {
    const bytes = gguf(META, [['output.weight', [64, 1500], 0]]);
    expect(() => parseGgufHeader(bytes.subarray(0, 100))).toThrow(GgufTruncatedError);
    const reads: number[] = [];
    const h = await readGgufHeader(
      async (n) => {
        reads.push(n);
        return bytes.subarray(0, n);
      },
      'tiny.gguf',
      64,
    );
    expect(reads[0]).toBe(64);
    expect(reads.length).toBeGreaterThan(2);
    expect(capacityModelFromGguf(h).tied).toBe(false);
    await expect(readGgufHeader(async () => bytes.subarray(0, 100), 'cut.gguf', 1 << 20)).rejects.toThrow(
      /ends inside its GGUF header/,
    );
  });

  it('rejects what is not GGUF, an old version, and inconsistent heads, naming the key', () => {
    expect(() => parseGgufHeader(new TextEncoder().encode('{"not":"gguf"}'), 'x.gguf')).toThrow(
      /x.gguf is not a GGUF file/,
    );
    const v1 = gguf(META, []);
    v1[4] = 1;
    expect(() => parseGgufHeader(v1)).toThrow(/GGUF version 1 is not supported/);
    const bad = gguf(
      META.map((m): MetaEntry => (m[0] === 'llama.attention.head_count_kv' ? [m[0], { u32: 3 }] : m)),
      [],
    );
    expect(() => capacityModelFromGguf(parseGgufHeader(bad))).toThrow(
      /llama.attention.head_count_kv: heads \(4\) must be a multiple of kvHeads \(3\)/,
    );
  });
});
