import { afterEach, describe, expect, it, vi } from 'vitest';
import { materialized } from '../../test-support/materialize.ts';
import { ConfigError, InputError, WeightsError } from '../errors.ts';
import { ropeRef } from '../kernels/reference.ts';
import { type ModelConfig, presetConfig } from './config.ts';
import { parseGgufHeader } from './gguf.ts';
import { hfRowOfGgufRow, isGguf, loadGgufModel } from './gguf-load.ts';
import {
  encodeGguf,
  encodeTensor,
  type GgufParts,
  type GgufType,
  ggufParts,
  llamaCppPermute,
  writeGguf,
} from './gguf-writer.ts';
import { loadModel } from './source.ts';
import { LM_HEAD, type ModelWeights, randomWeights, tensorSpecs, weightFormatOf } from './weights.ts';

/**
 * A model whose every inner width is a multiple of 32, as GGUF's Q8_0 and Q4_0 need (ci-tiny's
 * intermediate size, 344, is not): d 64, ffn 128, 4 heads of 16, 2 KV heads, vocab 100.
 */
const SMALL: ModelConfig = {
  vocabSize: 100,
  hiddenSize: 64,
  intermediateSize: 128,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 16,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  maxSeqLen: 256,
};

/** The config as a GGUF holds it: the epsilon and the RoPE base are stored as f32. */
const asStored = (c: ModelConfig): ModelConfig => ({
  ...c,
  rmsNormEps: Math.fround(c.rmsNormEps),
  ropeTheta: Math.fround(c.ropeTheta),
});

/** Round to the nearest value with `bits` significant bits (half to even), subnormals at 2^minExp: f16 is (11, −24), bf16 (8, −133). */
function roundTo(x: number, bits: number, minExp: number): number {
  if (x === 0) return x;
  let e = Math.floor(Math.log2(Math.abs(x)));
  if (2 ** e > Math.abs(x)) e--;
  if (2 ** (e + 1) <= Math.abs(x)) e++;
  const ulp = 2 ** Math.max(e - (bits - 1), minExp);
  const q = x / ulp;
  const f = Math.floor(q);
  const r = q - f > 0.5 || (q - f === 0.5 && f % 2 !== 0) ? f + 1 : f;
  return r * ulp;
}
const roundToF16 = (x: number) => roundTo(x, 11, -24);
const roundToBf16 = (x: number) => roundTo(x, 8, -133);

/** An f16's value from its bits, for decoding blocks in the tests without the loader's table. */
function half(bits: number): number {
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  const v = e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15);
  return bits & 0x8000 ? -v : v;
}

/** ggml's dequantize_row_q8_0 / dequantize_row_q4_0 over a tensor's raw bytes, in file row order. */
function ggmlDequantize(bytes: Uint8Array, type: 'Q8_0' | 'Q4_0', count: number): Float32Array {
  const out = new Float32Array(count);
  for (let b = 0; b < count / 32; b++) {
    if (type === 'Q8_0') {
      const d = half(bytes[34 * b] | (bytes[34 * b + 1] << 8));
      for (let j = 0; j < 32; j++) out[32 * b + j] = ((bytes[34 * b + 2 + j] << 24) >> 24) * d;
    } else {
      const d = half(bytes[18 * b] | (bytes[18 * b + 1] << 8));
      for (let j = 0; j < 16; j++) {
        const byte = bytes[18 * b + 2 + j];
        out[32 * b + j] = ((byte & 0xf) - 8) * d;
        out[32 * b + j + 16] = ((byte >> 4) - 8) * d;
      }
    }
  }
  return out;
}

/** Raw data bytes of one tensor of a GGUF file, located through the header. */
function tensorBytes(file: Uint8Array, name: string): Uint8Array {
  const h = parseGgufHeader(file);
  const t = h.tensors.find((x) => x.name === name);
  if (!t) throw new Error(`no ${name}`);
  return file.subarray(h.dataOffset + t.offset);
}

/** Byte offset, in a GGUF file, of dimension `dim` (a u64) of tensor `name` in its tensor table. */
function tableDimOffset(file: Uint8Array, name: string, dim: number): number {
  const key = new TextEncoder().encode(name);
  for (let i = 0; i + key.length < file.length; i++) {
    if (key.every((b, j) => file[i + j] === b) && file[i - 8] === key.length) {
      // name, then u32 n_dims, then u64 dims
      return i + key.length + 4 + 8 * dim;
    }
  }
  throw new Error(`no ${name} in the table`);
}

const isQK = (name: string) => /\.(q|k)_proj\.weight$/.test(name);

/** The GGUF row order of an HF q/k matrix (the converter's permute), or the matrix itself for others. */
function toGgufOrder(c: ModelConfig, name: string, w: Float32Array, N: number, K: number): Float32Array {
  if (!isQK(name)) return w;
  return llamaCppPermute(w, N, K, name.includes('q_proj') ? c.numHeads : c.numKvHeads);
}

describe('Q/K row permutation', () => {
  it('matches hand-worked orders: GGUF row 2i + s holds HF row s·headDim/2 + i in each head', () => {
    // Rows labelled by their HF index, one column: the output lists the HF row at each GGUF row.
    const labels = (n: number) => Float32Array.from({ length: n }, (_, i) => i);
    // Two heads of 4: pairs (0, 2) and (1, 3) of head 0 become adjacent, likewise in head 1.
    expect([...llamaCppPermute(labels(8), 8, 1, 2)]).toEqual([0, 2, 1, 3, 4, 6, 5, 7]);
    // One head of 8: rotate-half pairs (i, i + 4) become (2i, 2i + 1).
    expect([...llamaCppPermute(labels(8), 8, 1, 1)]).toEqual([0, 4, 1, 5, 2, 6, 3, 7]);
    expect(Array.from({ length: 8 }, (_, r) => hfRowOfGgufRow(r, 4))).toEqual([0, 2, 1, 3, 4, 6, 5, 7]);
    expect(Array.from({ length: 8 }, (_, r) => hfRowOfGgufRow(r, 8))).toEqual([0, 4, 1, 5, 2, 6, 3, 7]);
  });

  it("the loader's inverse undoes the converter's permutation (3 heads of 8, rows of 5)", () => {
    const rows = 24;
    const K = 5;
    const w = Float32Array.from({ length: rows * K }, (_, i) => Math.sin(i * 1.7) + i / 100);
    const gguf = llamaCppPermute(w, rows, K, 3);
    expect(gguf).not.toEqual(w);
    const back = new Float32Array(w.length);
    for (let r = 0; r < rows; r++) back.set(gguf.subarray(r * K, (r + 1) * K), hfRowOfGgufRow(r, 8) * K);
    expect(back).toEqual(w);
  });

  it("llama.cpp's adjacent-pair RoPE on permuted rows equals HF's rotate-half RoPE, permuted", () => {
    // Why the permutation exists: q·k after RoPE must not depend on which convention computed it.
    const headDim = 8;
    const heads = 2;
    const base = 10000;
    const pos = 5;
    const q = Float64Array.from({ length: heads * headDim }, (_, i) => Math.cos(i * 0.9) * (1 + i / 7));
    const half = headDim / 2;
    const cos = new Float64Array((pos + 1) * half);
    const sin = new Float64Array((pos + 1) * half);
    for (let i = 0; i < half; i++) {
      cos[pos * half + i] = Math.cos(pos * base ** ((-2 * i) / headDim));
      sin[pos * half + i] = Math.sin(pos * base ** ((-2 * i) / headDim));
    }
    const hf = Float64Array.from(q);
    ropeRef(hf, [pos], heads, headDim, { cos, sin });
    // ggml's rope, mode 0: pairs (2i, 2i + 1) of each head rotate by pos · base^(−2i/headDim).
    const permuted = llamaCppPermute(Float32Array.from(q), heads * headDim, 1, heads);
    const ggml = new Float64Array(permuted.length);
    for (let h = 0; h < heads; h++)
      for (let i = 0; i < half; i++) {
        const theta = pos * base ** ((-2 * i) / headDim);
        const x0 = permuted[h * headDim + 2 * i];
        const x1 = permuted[h * headDim + 2 * i + 1];
        ggml[h * headDim + 2 * i] = x0 * Math.cos(theta) - x1 * Math.sin(theta);
        ggml[h * headDim + 2 * i + 1] = x0 * Math.sin(theta) + x1 * Math.cos(theta);
      }
    for (let r = 0; r < heads * headDim; r++) {
      expect(ggml[r]).toBeCloseTo(hf[hfRowOfGgufRow(r, headDim)], 6);
    }
  });
});

describe('ggml block quantization, by hand', () => {
  // Block A: x[j] = (j mod 16) − 8. The first value of largest magnitude is x[0] = −8, so
  // d = −8 / −8 = 1 (f16 0x3C00) and q = trunc(x + 8.5) = j mod 16; byte j = q[j] | q[j + 16] << 4.
  const blockA = Float32Array.from({ length: 32 }, (_, j) => (j % 16) - 8);
  const bytesA = [0x00, 0x3c, ...Array.from({ length: 16 }, (_, j) => j | (j << 4))];
  // Block B: largest magnitude 4 (x[3] = −4 ties later, and ggml keeps the first), so d = 4 / −8 =
  // −0.5 (f16 0xB800) and q = trunc(−2x + 8.5): 4 → 0, −3.5 → 15, 0.2 → 8, −4 → 16 clamped to 15,
  // 0 → 8; x[16] = 1 → 6, x[17] = −1.3 → 11.
  const blockB = new Float32Array(32);
  blockB.set([4, -3.5, 0.2, -4]);
  blockB.set([1, -1.3], 16);
  const bytesB = [0x00, 0xb8, 0x60, 0xbf, 0x88, 0x8f, ...Array(12).fill(0x88)];

  it('Q4_0 bytes of two blocks', () => {
    expect([...encodeTensor(blockA, 'Q4_0', 32, 'a')]).toEqual(bytesA);
    expect([...encodeTensor(blockB, 'Q4_0', 32, 'b')]).toEqual(bytesB);
  });

  it('Q8_0 bytes: d = amax / 127, halves round away from zero', () => {
    // amax 127 gives d = 1 (f16 0x3C00): q = roundf(x): 2.5 → 3, −2.5 → −3 (0xFD), −0.5 → −1.
    const x = new Float32Array(32);
    x.set([127, -127, 2.5, -2.5, 0.49, -0.5, 1.5, 100.2]);
    expect([...encodeTensor(x, 'Q8_0', 32, 'x')]).toEqual([
      0x00,
      0x3c,
      0x7f,
      0x81,
      0x03,
      0xfd,
      0x00,
      0xff,
      0x02,
      0x64,
      ...Array(24).fill(0),
    ]);
  });

  it('the loader keeps hand-made Q4_0 and Q8_0 blocks as the file stores them: quant bytes, header words', async () => {
    const w = randomWeights(SMALL, 3);
    const tensors = new Map(w.tensors);
    const up = Float32Array.from(tensors.get('model.layers.0.mlp.up_proj.weight')!);
    const K = SMALL.hiddenSize;
    up.set(blockA, 0); // row 0, group 0
    up.set(blockB, K); // row 1, group 0
    tensors.set('model.layers.0.mlp.up_proj.weight', up);
    const gate = Float32Array.from(tensors.get('model.layers.0.mlp.gate_proj.weight')!);
    // amax 1: d = 1/127 rounds to f16 0x2008 = 2^−7 · (1 + 8/1024) = 0.00787353515625;
    // q = roundf(x · 127): 1 → 127, −0.25 → −31.75 → −32 (0xE0).
    gate.set([1, -0.25, ...Array(30).fill(0)], 0);
    tensors.set('model.layers.0.mlp.gate_proj.weight', gate);
    const model: ModelWeights = { config: SMALL, tensors };
    const file = writeGguf(model, {
      type: (name, kind) => (kind === 'norm' ? 'F32' : name.includes('gate') ? 'Q8_0' : 'Q4_0'),
    });
    expect([...tensorBytes(file, 'blk.0.ffn_up.weight').subarray(0, 18)]).toEqual(bytesA);
    expect([...tensorBytes(file, 'blk.0.ffn_up.weight').subarray(36, 54)]).toEqual(bytesB);

    const weights = await materialized(loadGgufModel(file, 'hand.gguf').weights);
    const p = weights.packed!.get('model.layers.0.mlp.up_proj.weight')!;
    expect(p.format).toBe('q4_0');
    // A block's 16 quant bytes as four little-endian words (block A's bytes j | j << 4; row 1
    // starts at block 2, block B's bytes above), its f16 d alone in a header word.
    expect([...p.words.subarray(0, 4)]).toEqual([0x33221100, 0x77665544, 0xbbaa9988, 0xffeeddcc]);
    expect([...p.words.subarray(8, 12)]).toEqual([0x8f88bf60, 0x88888888, 0x88888888, 0x88888888]);
    expect(p.scales[0]).toBe(0x3c00);
    expect(p.scales[2]).toBe(0xb800);
    const upW = weights.tensors.get('model.layers.0.mlp.up_proj.weight')!;
    expect([...upW.subarray(0, 32)]).toEqual([...blockA]);
    // (q − 8) · −0.5: x[3] = −4 came back as −3.5 (clamped), −1.3 as −1.5, and 0.2 as 0 · −0.5 = −0.
    expect([...upW.subarray(K, K + 4)]).toEqual([4, -3.5, -0, -3.5]);
    expect([...upW.subarray(K + 16, K + 18)]).toEqual([1, -1.5]);

    const g = weights.packed!.get('model.layers.0.mlp.gate_proj.weight')!;
    expect(g.format).toBe('q8_0');
    expect(g.scales[0]).toBe(0x2008);
    expect(g.words[0]).toBe(0xe07f); // bytes 0x7F, 0xE0, 0, 0
    const gateW = weights.tensors.get('model.layers.0.mlp.gate_proj.weight')!;
    expect(gateW[0]).toBe(Math.fround(127 * 0.00787353515625));
    expect(gateW[1]).toBe(-32 * 0.00787353515625);
  });
});

describe('GGUF round trips', () => {
  it('F32 (v2, alignment 64): every tensor bit-exact and the config as stored', async () => {
    const w = randomWeights(presetConfig('ci-tiny'), 1);
    const file = writeGguf(w, { type: 'F32', alignment: 64, version: 2 });
    expect(isGguf(file)).toBe(true);
    const loaded = loadGgufModel(file, 'tiny.gguf');
    const { warnings } = loaded;
    const weights = await materialized(loaded.weights);
    expect(warnings).toEqual([]);
    expect(weights.config).toEqual(asStored(w.config));
    expect(weights.packed?.size).toBe(0);
    for (const spec of tensorSpecs(w.config))
      expect(weights.tensors.get(spec.name)).toEqual(w.tensors.get(spec.name));
  });

  it('F16: linear weights packed as f16 (rounded once, padded to whole groups), norms f32', async () => {
    const w = randomWeights(presetConfig('ci-tiny'), 2);
    const weights = await materialized(loadGgufModel(writeGguf(w, { type: 'F16' }), 'tiny-f16.gguf').weights);
    expect(weightFormatOf(weights)).toBe('f16');
    for (const spec of tensorSpecs(w.config)) {
      const want = w.tensors.get(spec.name)!;
      const got = weights.tensors.get(spec.name)!;
      if (spec.kind === 'norm') expect(got).toEqual(want);
      else expect([...got]).toEqual([...want].map(roundToF16));
    }
    // Tied: the head is the packed embedding; the lookup its f32 values.
    expect(weights.packed!.get(LM_HEAD)!.format).toBe('f16');
    expect(weights.tensors.get(LM_HEAD)).toEqual(weights.tensors.get('model.embed_tokens.weight'));
    // down_proj rows are 344 wide: 11 groups of 16 words, and words 172…175 (k = 344…351) are padding.
    const down = weights.packed!.get('model.layers.1.mlp.down_proj.weight')!;
    expect(down.words.length).toBe(128 * 11 * 16);
    expect([...down.words.subarray(172, 176)]).toEqual([0, 0, 0, 0]);
    expect(down.words[171]).not.toBe(0);
  });

  it('BF16: widened exactly to f32, not packed', async () => {
    const w = randomWeights(presetConfig('ci-tiny'), 4);
    const weights = await materialized(
      loadGgufModel(writeGguf(w, { type: 'BF16' }), 'tiny-bf16.gguf').weights,
    );
    expect(weightFormatOf(weights)).toBe('f32');
    const name = 'model.layers.0.self_attn.k_proj.weight';
    expect([...weights.tensors.get(name)!]).toEqual([...w.tensors.get(name)!].map(roundToBf16));
  });

  for (const [type, tied] of [
    ['Q8_0', true],
    ['Q4_0', false],
  ] as const) {
    it(`${type} (${tied ? 'tied' : 'untied'}): kept in its blocks, rows back in HF order`, async () => {
      const config = { ...SMALL, tieWordEmbeddings: tied };
      const w = randomWeights(config, 5);
      const file = writeGguf(w, { type });
      const weights = await materialized(loadGgufModel(file, `small-${type}.gguf`).weights);
      expect(weights.config).toEqual(asStored(config));
      expect(weightFormatOf(weights)).toBe(type === 'Q8_0' ? 'q8_0' : 'q4_0');
      for (const spec of tensorSpecs(config)) {
        const got = weights.tensors.get(spec.name)!;
        if (spec.kind === 'norm') {
          expect(got).toEqual(w.tensors.get(spec.name));
          continue;
        }
        const [N, K] = spec.shape;
        // Exactly what ggml computes from the file's blocks, once our rows are put in its order.
        const fromFile = ggmlDequantize(tensorBytes(file, ggufTensorName(spec.name)), type, N * K);
        expect(toGgufOrder(config, spec.name, got, N, K)).toEqual(fromFile);
        // And close to the f32 weights it was quantized from (a row in the wrong place would not be):
        // within half a step (Q8_0) or a step (Q4_0's clamp at +8), plus the f16 rounding of d.
        const want = w.tensors.get(spec.name)!;
        for (let b = 0; b < (N * K) / 32; b++) {
          let amax = 0;
          for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(want[32 * b + j]));
          const step = type === 'Q8_0' ? amax / 127 : amax / 8;
          const bound = (type === 'Q8_0' ? 0.5 : 1) * step + (type === 'Q8_0' ? 127 : 8) * step * 2 ** -11;
          for (let j = 0; j < 32; j++)
            expect(Math.abs(got[32 * b + j] - want[32 * b + j])).toBeLessThanOrEqual(bound * 1.0001);
        }
      }
      const head = weights.packed!.get(LM_HEAD)!;
      expect(head.format).toBe(type === 'Q8_0' ? 'q8_0' : 'q4_0');
      // The embedding is kept packed too (its lookup dequantizes the rows it reads); tied, the head
      // is that very table.
      expect(weights.packed!.get('model.embed_tokens.weight')!.format).toBe(head.format);
      if (tied) expect(head).toBe(weights.packed!.get('model.embed_tokens.weight'));
      if (tied)
        expect(weights.tensors.get(LM_HEAD)).toEqual(weights.tensors.get('model.embed_tokens.weight'));
      else expect(weights.tensors.get(LM_HEAD)).not.toEqual(weights.tensors.get('model.embed_tokens.weight'));
    });
  }

  it('mixed types: Q4_0 layers, a Q8_0 embedding (the tied head), F16 norms widened', async () => {
    const w = randomWeights(SMALL, 6);
    const type = (_: string, kind: string): GgufType =>
      kind === 'linear' ? 'Q4_0' : kind === 'embedding' ? 'Q8_0' : 'F16';
    const weights = await materialized(loadGgufModel(writeGguf(w, { type }), 'mixed.gguf').weights);
    expect(weightFormatOf(weights)).toBe('mixed');
    expect(weights.packed!.get(LM_HEAD)!.format).toBe('q8_0');
    expect(weights.packed!.get('model.layers.1.self_attn.o_proj.weight')!.format).toBe('q4_0');
    expect([...weights.tensors.get('model.norm.weight')!]).toEqual(
      [...w.tensors.get('model.norm.weight')!].map(roundToF16),
    );
  });

  it('caps the context length at 2048 unless told, and warns about the tensors it ignores', () => {
    const w = randomWeights({ ...SMALL, maxSeqLen: 8192 }, 7);
    const parts = ggufParts(w);
    parts.tensors.push({ name: 'extra.bias', dims: [4], type: 0, data: new Uint8Array(16) });
    const file = encodeGguf(parts);
    const { weights, warnings } = loadGgufModel(file, 'long.gguf');
    expect(weights.config.maxSeqLen).toBe(2048);
    expect(loadGgufModel(file, 'long.gguf', { maxSeqLen: 300 }).weights.config.maxSeqLen).toBe(300);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Ignored tensors .*: extra.bias$/);
  });

  it("RoPE scaling: Llama 3's rope_freqs.weight as the frequency factors, linear as a factor, yarn refused", () => {
    const w = randomWeights(SMALL, 7);
    // headDim 16: 8 pairs, divisors 1 … 8.
    const factors = Float32Array.from({ length: 8 }, (_, i) => i + 1);
    const parts = ggufParts(w);
    parts.tensors.push({
      name: 'rope_freqs.weight',
      dims: [8],
      type: 0,
      data: new Uint8Array(factors.buffer),
    });
    const { weights, warnings } = loadGgufModel(encodeGguf(parts), 'llama3.gguf');
    expect(warnings).toEqual([]);
    expect(weights.config.ropeScaling).toEqual({ type: 'factors', factors: [1, 2, 3, 4, 5, 6, 7, 8] });
    const linear = ggufParts(w);
    linear.meta.push(
      ['llama.rope.scaling.type', { str: 'linear' }],
      ['llama.rope.scaling.factor', { f32: 4 }],
    );
    expect(loadGgufModel(encodeGguf(linear), 'linear.gguf').weights.config.ropeScaling).toEqual({
      type: 'linear',
      factor: 4,
    });
    const yarn = ggufParts(w);
    yarn.meta.push(['llama.rope.scaling.type', { str: 'yarn' }]);
    expect(() => loadGgufModel(encodeGguf(yarn), 'yarn.gguf')).toThrow(
      /llama.rope.scaling.type "yarn" is not supported \(linear and Llama 3's rope_freqs.weight are\)/,
    );
    const short = ggufParts(w);
    short.tensors.push({
      name: 'rope_freqs.weight',
      dims: [4],
      type: 0,
      data: new Uint8Array(16).fill(0x3f),
    });
    expect(() => loadGgufModel(encodeGguf(short), 'short.gguf')).toThrow(
      /holds 4 RoPE frequency factors; a head of 16 has 8 pairs/,
    );
  });

  it('qwen2 and qwen3: biases and head norms round trip, q/k rows unpermuted (NEOX RoPE)', () => {
    for (const arch of ['qwen2', 'qwen3'] as const) {
      const config: ModelConfig = { ...SMALL, arch };
      const w = randomWeights(config, 11);
      const file = writeGguf(w, { type: 'F32' });
      const h = parseGgufHeader(file);
      expect(h.metadata.get('general.architecture')).toBe(arch);
      expect(h.metadata.get(`${arch}.block_count`)).toBe(2);
      const names = h.tensors.map((t) => t.name);
      expect(names.includes('blk.0.attn_q.bias')).toBe(arch === 'qwen2');
      expect(names.includes('blk.1.attn_k_norm.weight')).toBe(arch === 'qwen3');
      const { weights } = loadGgufModel(file, `${arch}.gguf`);
      expect(weights.config).toEqual(asStored(config));
      for (const spec of tensorSpecs(config))
        expect(weights.tensors.get(spec.name)).toEqual(w.tensors.get(spec.name));
      // Unpermuted in the file: q_proj's rows are HF's, in HF's order.
      const q = 'model.layers.0.self_attn.q_proj.weight';
      const bytes = tensorBytes(file, 'blk.0.attn_q.weight').slice(0, 4 * 64 * 64);
      expect(new Float32Array(bytes.buffer)).toEqual(w.tensors.get(q));
    }
  });

  it('Llama 3: the writer stores its scaling as rope_freqs.weight, which loads as the same factors', () => {
    const ropeScaling = {
      type: 'llama3',
      factor: 8,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxPositions: 64,
    } as const;
    const w = randomWeights({ ...SMALL, ropeScaling }, 12);
    const { weights } = loadGgufModel(writeGguf(w), 'llama3.gguf');
    const got = weights.config.ropeScaling;
    if (got?.type !== 'factors') throw new Error(`expected factors, got ${JSON.stringify(got)}`);
    // headDim 16, theta 10000: pair i has wavelength 2π · 10000^(i/8): 6.3, 19.9, 62.8, 198.7 …
    // Under 64/4 = 16: factor 1 (i = 0); over 64/1: factor 8 (i ≥ 3); pairs 1 and 2 are smoothed,
    // s = (64 / wavelength − 1) / 3 and factor 1 / ((1 − s) / 8 + s): 1.294 and 7.667.
    const smoothed = (i: number) => {
      const s = (64 / (2 * Math.PI * 10000 ** (i / 8)) - 1) / 3;
      return Math.fround(1 / ((1 - s) / 8 + s));
    };
    expect(got.factors).toEqual([1, smoothed(1), smoothed(2), 8, 8, 8, 8, 8]);
    expect(got.factors[1]).toBeCloseTo(1.294, 3);
    expect(got.factors[2]).toBeCloseTo(7.667, 3);
  });

  it('the writer refuses Q8_0/Q4_0 for rows that are not whole blocks (ci-tiny ffn 344)', () => {
    const w = randomWeights(presetConfig('ci-tiny'), 0);
    expect(() => writeGguf(w, { type: 'Q8_0' })).toThrow(
      /blk\.0\.ffn_down\.weight: Q8_0 stores rows as whole blocks of 32 weights, but the inner width 344 is not a multiple of 32/,
    );
    expect(() => writeGguf(w, { type: 'Q4_0' })).toThrow(InputError);
  });
});

/** GGUF names from HF names, spelled out by hand for the tests. */
function ggufTensorName(hf: string): string {
  const table: [RegExp, string][] = [
    [/^model\.embed_tokens\.weight$/, 'token_embd.weight'],
    [/^model\.norm\.weight$/, 'output_norm.weight'],
    [/^lm_head\.weight$/, 'output.weight'],
    [/^model\.layers\.(\d+)\.self_attn\.q_proj\.weight$/, 'blk.$1.attn_q.weight'],
    [/^model\.layers\.(\d+)\.self_attn\.k_proj\.weight$/, 'blk.$1.attn_k.weight'],
    [/^model\.layers\.(\d+)\.self_attn\.v_proj\.weight$/, 'blk.$1.attn_v.weight'],
    [/^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$/, 'blk.$1.attn_output.weight'],
    [/^model\.layers\.(\d+)\.mlp\.gate_proj\.weight$/, 'blk.$1.ffn_gate.weight'],
    [/^model\.layers\.(\d+)\.mlp\.up_proj\.weight$/, 'blk.$1.ffn_up.weight'],
    [/^model\.layers\.(\d+)\.mlp\.down_proj\.weight$/, 'blk.$1.ffn_down.weight'],
  ];
  for (const [re, to] of table) if (re.test(hf)) return hf.replace(re, to);
  throw new Error(hf);
}

describe('bad GGUF files', () => {
  const w = randomWeights(SMALL, 8);
  const good = () => ggufParts(w, { type: 'Q8_0' });
  const load = (parts: GgufParts | Uint8Array) =>
    loadGgufModel(parts instanceof Uint8Array ? parts : encodeGguf(parts), 'bad.gguf');
  const tensor = (parts: GgufParts, name: string) => parts.tensors.find((t) => t.name === name)!;
  const setMeta = (parts: GgufParts, key: string, value: GgufParts['meta'][number][1] | undefined) => {
    parts.meta = parts.meta.filter(([k]) => k !== key);
    if (value) parts.meta.push([key, value]);
    return parts;
  };

  it('the good file loads (so each case below fails for its own reason)', () => {
    expect(load(good()).weights.config.numLayers).toBe(2);
  });

  it('bad magic, unknown version, a file cut inside the header', () => {
    const file = encodeGguf(good());
    const magic = file.slice();
    magic[0] = 0x58;
    expect(() => load(magic)).toThrow(/bad.gguf is not a GGUF file/);
    const version = file.slice();
    version[4] = 4;
    expect(() => load(version)).toThrow(/GGUF version 4 is not supported/);
    expect(() => load(file.subarray(0, 200))).toThrow(/bad.gguf: the file ends inside its GGUF header/);
    expect(() => load(file.subarray(0, 2))).toThrow(InputError);
  });

  it('tensor data past the end: a truncated file, an offset out of range', () => {
    const file = encodeGguf(good());
    expect(() => load(file.subarray(0, file.length - 100))).toThrow(
      /tensor output_norm.weight's data .* runs past the end of the \d+-byte file \(truncated, or its byte size disagrees with its shape\)/,
    );
    const far = good();
    tensor(far, 'blk.1.attn_v.weight').offset = 1 << 24;
    // The encoder writes the data where it was told; the file is then cut back to its usual length.
    expect(() => load(encodeGguf(far).subarray(0, file.length))).toThrow(
      /tensor blk.1.attn_v.weight's data \(bytes \d+…\d+\) runs past the end/,
    );
  });

  it('a K-quant tensor whose byte size disagrees with its shape: it would run into the next tensor', () => {
    // Q4_K blocks of 256 weights in 144 bytes: a [256, 2] tensor is 288 bytes. Told it is [256, 4]
    // (576 bytes) with only its 288 bytes before the next tensor, the loader refuses it by name.
    const parts = good();
    parts.tensors.push(
      { name: 'extra.a', dims: [256, 2], type: 12, data: new Uint8Array(288) },
      { name: 'extra.b', dims: [256, 2], type: 12, data: new Uint8Array(288) },
    );
    const file = encodeGguf(parts);
    expect(() => load(file)).not.toThrow();
    const h = parseGgufHeader(file);
    const a = h.tensors.find((t) => t.name === 'extra.a')!;
    // Patch the first dim's outer size (dims[1]: 2 → 4) in the tensor table, bytes unchanged.
    const at = tableDimOffset(file, 'extra.a', 1);
    const bad = file.slice();
    new DataView(bad.buffer).setBigUint64(at, 4n, true);
    expect(a.dims).toEqual([256, 2]);
    expect(() => load(bad)).toThrow(
      /tensor extra.a \(Q4_K \[256, 4\]\) needs 576 bytes, but tensor extra.b begins 288 bytes after it: its byte size disagrees with its shape/,
    );
  });

  it('misaligned tensor data, duplicates, rows that are not whole blocks', () => {
    const odd = good();
    tensor(odd, 'blk.0.attn_q.weight').offset = 8;
    expect(() => load(odd)).toThrow(
      /tensor blk.0.attn_q.weight's data offset 8 is not a multiple of general.alignment 32/,
    );
    const twice = good();
    twice.tensors.push({ ...tensor(twice, 'output_norm.weight') });
    expect(() => load(twice)).toThrow(/tensor output_norm.weight appears twice/);
    const rows = good();
    rows.tensors.push({ name: 'extra.weight', dims: [48, 2], type: 8, data: new Uint8Array(3 * 34) });
    expect(() => load(rows)).toThrow(
      /extra.weight: rows of 48 elements are not a whole number of Q8_0 blocks \(32 each\)/,
    );
  });

  it('a missing tensor, a shape the config disagrees with', () => {
    const missing = good();
    missing.tensors = missing.tensors.filter((t) => t.name !== 'blk.1.ffn_up.weight');
    expect(() => load(missing)).toThrow(WeightsError);
    expect(() => load(missing)).toThrow(
      /missing tensor blk.1.ffn_up.weight \(model.layers.1.mlp.up_proj.weight\) with GGUF dims \[64, 128\]/,
    );
    const narrower = setMeta(good(), 'llama.feed_forward_length', { u32: 96 });
    expect(() => load(narrower)).toThrow(
      /tensor blk.0.ffn_gate.weight has GGUF dims \[64, 128\], but the config needs \[64, 96\]/,
    );
    const vocab = setMeta(good(), 'llama.vocab_size', { u32: 101 });
    expect(() => load(vocab)).toThrow(
      /token_embd.weight has GGUF dims \[64, 100\], but the config needs \[64, 101\]/,
    );
  });

  it('unsupported and unknown tensor types, a quantized norm', () => {
    // IQ4_NL (code 20): blocks of 32 in 18 bytes, sized but not read; refused by its name, at the
    // first tensor that has it, before anything is decoded.
    const iq = good();
    for (const name of ['blk.0.ffn_gate.weight', 'blk.1.ffn_gate.weight'])
      Object.assign(tensor(iq, name), { type: 20, data: new Uint8Array((64 * 128 * 18) / 32) });
    expect(() => load(iq)).toThrow(
      /tensor blk.0.ffn_gate.weight has type IQ4_NL, which this engine does not read/,
    );
    const unknown = good();
    tensor(unknown, 'blk.0.ffn_up.weight').type = 99;
    expect(() => load(unknown)).toThrow(
      /tensor blk.0.ffn_up.weight has type code 99, which ggml does not define/,
    );
    const norm = ggufParts(w, { type: (_, kind) => (kind === 'norm' ? 'Q8_0' : 'F32') });
    expect(() => load(norm)).toThrow(
      /blk.0.attn_norm.weight has type Q8_0, but a norm weight must be F32, F16 or BF16/,
    );
  });

  it('another architecture, mixture of experts, a missing or bad key', () => {
    expect(() => load(setMeta(good(), 'general.architecture', { str: 'phi3' }))).toThrow(
      /general.architecture is "phi3"; supported: llama, qwen2, qwen3/,
    );
    expect(() => load(setMeta(good(), 'general.architecture', undefined))).toThrow(
      /general.architecture is missing/,
    );
    expect(() => load(setMeta(good(), 'llama.expert_count', { u32: 8 }))).toThrow(/mixture-of-experts/);
    expect(() => load(setMeta(good(), 'llama.attention.layer_norm_rms_epsilon', undefined))).toThrow(
      /llama.attention.layer_norm_rms_epsilon is missing/,
    );
    const kv = setMeta(good(), 'llama.attention.head_count_kv', { u32: 3 });
    expect(() => load(kv)).toThrow(ConfigError);
    expect(() => load(kv)).toThrow(
      /llama.attention.head_count_kv \(numKvHeads\): numHeads \(4\) must be a multiple/,
    );
    expect(() => load(setMeta(good(), 'llama.rope.dimension_count', { u32: 8 }))).toThrow(
      /partial rotary embeddings are not supported/,
    );
  });
});

describe('loadModel with a GGUF source', () => {
  afterEach(() => vi.unstubAllGlobals());
  const w = randomWeights(SMALL, 9);
  const file = writeGguf(w, { type: 'Q4_0' });

  it('a picked file: no config.json needed', async () => {
    const loaded = await loadModel({ kind: 'files', weights: new Blob([file]), name: 'picked.gguf' });
    expect(loaded.name).toBe('picked.gguf');
    expect(weightFormatOf(loaded.weights)).toBe('q4_0');
  });

  it('a served file: fetched alone, without config.json', async () => {
    const urls: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      urls.push(url);
      return new Response(file);
    });
    const loaded = await loadModel({ kind: 'url', baseUrl: '/__model/', weightsFile: 'm.gguf' });
    expect(urls).toEqual(['/__model/m.gguf']);
    expect(loaded.weights.config).toEqual(asStored(SMALL));
  });

  it('a picked safetensors file without its config.json is refused', async () => {
    await expect(
      loadModel({ kind: 'files', weights: new Blob([new Uint8Array(8)]), name: 'model.safetensors' }),
    ).rejects.toThrow(/needs its config.json/);
  });
});
