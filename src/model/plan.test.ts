import { describe, expect, it } from 'vitest';
import { DeviceLimitError } from '../errors.ts';
import { presetConfig } from './config.ts';
import { checkPlanFits, planMemory } from './plan.ts';

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
