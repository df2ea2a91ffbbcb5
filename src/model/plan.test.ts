import { describe, expect, it } from 'vitest';
import { DeviceLimitError } from '../errors.ts';
import { type ModelConfig, presetConfig } from './config.ts';
import { checkPlanFits, planMemory, weightTypeSummary } from './plan.ts';

const kv = { mode: 'paged', pageSize: 16, capacityTokens: 4096 } as const;
const MiB = 1 << 20;

describe('memory plan', () => {
  it('counts weights, KV pools and activations exactly for ci-tiny', () => {
    const c = presetConfig('ci-tiny');
    const plan = planMemory(c, kv, 64);
    // 428,288 f32 parameters.
    expect(plan.weightBytes).toBe(428_288 * 4);
    // 4096 tokens in pages of 16 = 256 pages; a page is 2 (K,V) · 2 kv heads · 16 · 32 · 4 bytes, per layer.
    expect(plan.kvBytes).toBe(2 * 256 * (2 * 2 * 16 * 32 * 4));
    // x, normed, proj: 3·64·128; q, attn: 2·64·128; k, v: 2·64·64; gate, up, act: 3·64·344; logits 509.
    expect(plan.activationBytes).toBe((3 * 64 * 128 + 2 * 64 * 128 + 2 * 64 * 64 + 3 * 64 * 344 + 509) * 4);
  });

  it('refuses a tensor over maxStorageBufferBindingSize, naming the tensor, its bytes and the limit', () => {
    const plan = planMemory(presetConfig('qwen2.5-0.5b'), kv, 256);
    const limits = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 256 * MiB };
    expect(() => checkPlanFits(plan, limits, 'qwen2.5-0.5b')).toThrow(DeviceLimitError);
    expect(() => checkPlanFits(plan, limits, 'qwen2.5-0.5b')).toThrow(
      'qwen2.5-0.5b does not fit this device: model.embed_tokens.weight needs 544,538,624 bytes, over maxStorageBufferBindingSize = 134,217,728 bytes',
    );
  });

  it('accepts a model within the limits', () => {
    const plan = planMemory(presetConfig('smollm2-135m'), kv, 256);
    expect(() =>
      checkPlanFits(plan, { maxStorageBufferBindingSize: 1 << 30, maxBufferSize: 1 << 30 }, 'smollm2-135m'),
    ).not.toThrow();
  });
});

describe('bits per weight by tensor type', () => {
  it('a hand-counted mix: GGUF types at their file sizes, norms f32, a tied head counted once', () => {
    // d 256, ffn 512, 1 layer, 4 heads of 64, 2 KV heads, vocab 1000, tied.
    const config: ModelConfig = {
      vocabSize: 1000,
      hiddenSize: 256,
      intermediateSize: 512,
      numLayers: 1,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 64,
      ropeTheta: 10000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      maxSeqLen: 64,
    };
    // Q6_K for v and down and the embedding, Q4_K for the rest.
    const formats = (name: string) =>
      /v_proj|down_proj|embed_tokens/.test(name) ? ('q6_k' as const) : ('q4_k' as const);
    const { types, bitsPerWeight } = weightTypeSummary(config, formats);
    // q4_k: q 65,536 + k 32,768 + o 65,536 + gate 131,072 + up 131,072 = 425,984 weights, 144 bytes per 256.
    // q6_k: v 32,768 + down 131,072 + embedding 256,000 = 419,840, 210 bytes per 256.
    // f32: three norms of 256 = 768.
    expect(types).toEqual([
      { format: 'q4_k', tensors: 5, params: 425_984, bitsPerWeight: 4.5 },
      { format: 'q6_k', tensors: 3, params: 419_840, bitsPerWeight: 6.5625 },
      { format: 'f32', tensors: 3, params: 768, bitsPerWeight: 32 },
    ]);
    const bits = 425_984 * 4.5 + 419_840 * 6.5625 + 768 * 32;
    expect(bitsPerWeight).toBeCloseTo(bits / (425_984 + 419_840 + 768), 12);
  });
});
