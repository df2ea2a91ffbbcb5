import { describe, expect, it } from 'vitest';
import { presetConfig } from './model/config.ts';
import {
  EMBEDDING,
  embeddingFormat,
  LM_HEAD,
  lmHeadWeight,
  quantizeWeights,
  randomWeights,
  weightFormatOf,
  widenWeights,
} from './model/weights.ts';
import { dequantizePacked, weightBytes } from './quant/formats.ts';
import {
  checkPackable,
  f16BitsToF32,
  f32ToF16Bits,
  packedLayout,
  packTensor,
  unpackTensor,
} from './weight-format.ts';

describe('f16 conversion', () => {
  it('rounds to nearest even and keeps the special values', () => {
    expect(f32ToF16Bits(1)).toBe(0x3c00);
    expect(f32ToF16Bits(-2)).toBe(0xc000);
    expect(f32ToF16Bits(65504)).toBe(0x7bff); // largest finite half
    expect(f32ToF16Bits(65520)).toBe(0x7c00); // rounds up past it: +Inf
    expect(f32ToF16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(f32ToF16Bits(2 ** -26)).toBe(0x0000); // below half of it: zero
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00);
    // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(Number.isNaN(f16BitsToF32(f32ToF16Bits(Number.NaN)))).toBe(true);
    expect(f16BitsToF32(0x3555)).toBeCloseTo(0.333251953125, 12);
    expect(f16BitsToF32(0x8001)).toBe(-(2 ** -24));
  });
});

describe('packed layouts', () => {
  it('sizes rows in whole groups of 32, with scales apart', () => {
    // K = 40: two groups per row (the second holds 8 weights and 24 of padding).
    expect(packedLayout('int4', 3, 40)).toEqual({
      groups: 2,
      words: 3 * 2 * 4,
      scales: 6,
      bytes: 4 * (24 + 6),
    });
    expect(packedLayout('int8', 3, 40)).toEqual({
      groups: 2,
      words: 3 * 2 * 8,
      scales: 6,
      bytes: 4 * (48 + 6),
    });
    expect(packedLayout('f16', 3, 40)).toEqual({ groups: 2, words: 3 * 2 * 16, scales: 0, bytes: 4 * 96 });
    // A 576 × 1536 projection: int4 is 0.5 byte + 4/32 byte of scale per weight.
    expect(weightBytes('int4', 1536, 576)).toBe(1536 * 576 * 0.625);
    expect(weightBytes('int8', 1536, 576)).toBe(1536 * 576 * 1.125);
    expect(weightBytes('f16', 1536, 576)).toBe(1536 * 576 * 2);
    expect(weightBytes('f32', 1536, 576)).toBe(1536 * 576 * 4);
  });

  it('rejects shapes a format cannot hold, naming the tensor', () => {
    expect(() => checkPackable('int4', 'w', 4, 36)).toThrow(/w: inner width 36 is not a multiple of 8/);
    expect(() => checkPackable('f16', 'w', 4, 6)).toThrow(/multiple of 4/);
    expect(() => checkPackable('int8', 'w', 4, 36)).not.toThrow();
  });
});

describe('quantization, by hand', () => {
  it('int8: scale = max|w| / 127, q = round(w / scale), bytes in element order', () => {
    // One row of 4 weights: max |w| = 1.27, scale 0.01, q = 127, -50, 0, 1.
    const p = packTensor('int8', new Float32Array([1.27, -0.5, 0, 0.01]), 1, 4);
    expect(p.scales[0]).toBeCloseTo(0.01, 7);
    expect(p.words[0]).toBe((127 | ((-50 & 0xff) << 8) | (0 << 16) | (1 << 24)) >>> 0);
    expect(Array.from(p.words.subarray(1, 8))).toEqual([0, 0, 0, 0, 0, 0, 0]); // padding q = 0
  });

  it('int4: the largest magnitude maps to q = 0 (ggml Q4_0), nibbles in element order', () => {
    // max = -0.8 (largest |w|, signed): scale = -0.8 / -8 = 0.1; q = trunc(w / 0.1 + 8.5).
    // w = -0.8 → 0; 0.3 → 11; 0 → 8; 0.7 → 15 (trunc(15.5)); then padding q = 8.
    const w = new Float32Array([-0.8, 0.3, 0, 0.7, 0, 0, 0, 0]);
    const p = packTensor('int4', w, 1, 8);
    expect(p.scales[0]).toBeCloseTo(0.1, 7);
    expect(p.words[0] & 0xffff).toBe(0 | (11 << 4) | (8 << 8) | (15 << 12));
    expect(p.words[1]).toBe(0x88888888); // the rest of the group: padding, the format's zero
    const back = unpackTensor(p);
    expect(Array.from(back.subarray(0, 4)).map((v) => Number(v.toFixed(6)))).toEqual([-0.8, 0.3, 0, 0.7]);
  });

  it('f16: two halves per word, even element in the low bits', () => {
    const p = packTensor('f16', new Float32Array([1, -2, 0.5, 0]), 1, 4);
    expect(p.words[0]).toBe((0x3c00 | (0xc000 << 16)) >>> 0);
    expect(p.words[1]).toBe(0x3800);
    expect(p.scales.length).toBe(0);
  });

  it('dequantized values stay within half a step of the originals, across a partial last group', () => {
    const N = 3;
    const K = 40;
    const w = Float32Array.from({ length: N * K }, (_, i) => Math.sin(i * 1.7) * (1 + (i % 5)));
    for (const [format, steps] of [
      ['int8', 127],
      ['int4', 8],
    ] as const) {
      const p = packTensor(format, w, N, K);
      const back = unpackTensor(p);
      for (let n = 0; n < N; n++) {
        for (let g = 0; g < 2; g++) {
          const row = w.subarray(n * K + g * 32, n * K + Math.min(K, (g + 1) * 32));
          const amax = Math.max(...Array.from(row, Math.abs));
          for (let i = 0; i < row.length; i++) {
            const k = n * K + g * 32 + i;
            // Half a quantization step, plus f32 rounding; int4's grid ends at +7 steps on the
            // side opposite the largest weight, so a weight past 7.5 steps there is off by up to one.
            const step = amax / steps;
            const clamped = format === 'int4' && Math.abs(w[k]) > 7.5 * step;
            expect(Math.abs(back[k] - w[k])).toBeLessThanOrEqual(step * (clamped ? 1 : 0.5) * 1.0001 + 1e-6);
          }
        }
      }
    }
  });
});

describe('applying a format to a model', () => {
  const config = presetConfig('ci-tiny');
  const q = 'model.layers.0.self_attn.q_proj.weight';

  it('packs every linear layer and the embedding table, as llama-quantize does; the tied head is that table', () => {
    const w = randomWeights(config, 1);
    const int8 = quantizeWeights(w, 'int8');
    expect(weightFormatOf(w)).toBe('f32');
    expect(weightFormatOf(int8)).toBe('int8');
    // 7 projections in each of 2 layers, the table, and the head under its own name.
    expect(int8.packed?.size).toBe(16);
    const table = int8.packed?.get(EMBEDDING);
    expect(table).toEqual(
      packTensor('int8', w.tensors.get(EMBEDDING)!, config.vocabSize, config.hiddenSize, EMBEDDING),
    );
    // One tensor under both names: the upload gives the head the table's buffers, not a copy.
    expect(int8.packed?.get(LM_HEAD)).toBe(table);
    expect(embeddingFormat('int8')).toBe('int8');
    // The reference's weights are the packed ones, dequantized: the lookup's table and the head's.
    expect(int8.tensors.get(EMBEDDING)).toEqual(dequantizePacked(table!));
    expect(int8.tensors.has(LM_HEAD)).toBe(false);
    expect(lmHeadWeight(int8)).toBe(int8.tensors.get(EMBEDDING));
    expect(int8.tensors.get(q)).toEqual(dequantizePacked(int8.packed!.get(q)!));
    expect(quantizeWeights(w, 'f32')).toBe(w);
  });

  it('never re-quantizes int8 or int4, narrows f16, and widens back to f32 for a sweep’s reference', () => {
    const w = randomWeights(config, 2);
    const int4 = quantizeWeights(w, 'int4');
    // Asking a quantized model for f16 keeps its int4 tensors as they are.
    expect(quantizeWeights(int4, 'f16').packed?.get(q)).toBe(int4.packed?.get(q));
    // An f16 model asked for int8 is packed again from its exact f32 values.
    const f16 = quantizeWeights(w, 'f16');
    const narrowed = quantizeWeights(f16, 'int8');
    expect(narrowed.packed?.get(q)?.format).toBe('int8');
    expect(narrowed.packed?.get(q)).toEqual(packTensor('int8', f16.tensors.get(q)!, 128, 128, q));
    const wide = widenWeights(int4);
    expect(wide.packed).toBeUndefined();
    expect(weightFormatOf(wide)).toBe('f32');
    expect(wide.tensors.get(q)).toBe(int4.tensors.get(q));
    // Tied: the head is the embedding again.
    expect(wide.tensors.has(LM_HEAD)).toBe(false);
  });
});
