import { describe, expect, it } from 'vitest';
import { KERNEL_ROLES } from '../kernels/roles.ts';
import { type ModelConfig, presetConfig } from '../model/config.ts';
import { decodeCost, prefillCost, verifyCost } from './cost.ts';

/** Small enough to count by hand: d 8, 2 query heads sharing 1 KV head of dim 4, ffn 16, vocab 10. */
const small: ModelConfig = {
  vocabSize: 10,
  hiddenSize: 8,
  intermediateSize: 16,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 4,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  maxSeqLen: 64,
};

describe('cost model against hand counts', () => {
  it('prefill of L = 2 from position 0', () => {
    const cost = prefillCost(small, 2);
    const byRole = Object.fromEntries(cost.kernels.map((k) => [k.role, k]));
    // embedding: 2 ids (8 B) + 2 rows read (64 B) + 2 rows written (64 B)
    expect(byRole[KERNEL_ROLES.embedding]).toMatchObject({ flops: 0, bytes: 136 });
    // 3 norms (2 per layer + final), each 4·2·8 = 64 FLOPs and (2·16 + 8)·4 = 160 B
    expect(byRole[KERNEL_ROLES.norm]).toMatchObject({ flops: 192, bytes: 480, dispatches: 3 });
    // q: 2·2·8·8 = 256 FLOPs, (64 + 16 + 16)·4 = 384 B; k and v: 128 FLOPs, (32 + 16 + 8)·4 = 224 B each
    expect(byRole[KERNEL_ROLES.qkv]).toMatchObject({ flops: 512, bytes: 832, dispatches: 3 });
    // rope over 2·(2 + 1) = 6 head rows of 2 pairs: 6 FLOPs a pair; read+write 48 floats;
    // each of the 2 dispatches reads 2 positions and cos+sin rows (8 floats): 192 + 2·(8 + 32)
    expect(byRole[KERNEL_ROLES.rope]).toMatchObject({ flops: 72, bytes: 272, dispatches: 2 });
    // kv write: read k, v and write both (4·2·4 floats) + 2 slots
    expect(byRole[KERNEL_ROLES.kvWrite]).toMatchObject({ flops: 0, bytes: 136 });
    // attention: causal pairs 1 + 2 = 3, per head 4·4 + 3 = 19 FLOPs: 2·3·19; read q + write out (2·2·8 floats), K and V (2·2·4 floats)
    expect(byRole[KERNEL_ROLES.attention]).toMatchObject({ flops: 114, bytes: 192 });
    expect(byRole[KERNEL_ROLES.oProj]).toMatchObject({ flops: 256, bytes: 384 });
    expect(byRole[KERNEL_ROLES.residual]).toMatchObject({ flops: 32, bytes: 384, dispatches: 2 });
    // gate and up: 2·2·16·8 = 512 FLOPs and (128 + 16 + 32)·4 = 704 B each
    expect(byRole[KERNEL_ROLES.gateUp]).toMatchObject({ flops: 1024, bytes: 1408, dispatches: 2 });
    expect(byRole[KERNEL_ROLES.swiglu]).toMatchObject({ flops: 160, bytes: 384 });
    expect(byRole[KERNEL_ROLES.down]).toMatchObject({ flops: 512, bytes: 704 });
    // lm head on the last row only: 2·10·8 = 160 FLOPs, (80 + 8 + 10)·4 = 392 B; argmax reads 10 logits, writes 1 id
    expect(byRole[KERNEL_ROLES.lmHead]).toMatchObject({ flops: 160, bytes: 392 });
    expect(byRole[KERNEL_ROLES.argmax]).toMatchObject({ flops: 10, bytes: 44 });
    expect(cost.flops).toBe(3044);
    expect(cost.bytes).toBe(5748);
    // 16 per layer, plus embedding, final norm, lm head and argmax
    expect(cost.dispatches).toBe(20);
  });

  it('the fused graph: prefill of L = 2 from position 0, 6 dispatches per layer', () => {
    const cost = prefillCost(small, 2, 0, undefined, 'f32', 'fused');
    const byRole = Object.fromEntries(cost.kernels.map((k) => [k.role, k]));
    expect(byRole[KERNEL_ROLES.embedding]).toMatchObject({ flops: 0, bytes: 136, dispatches: 1 });
    // norm → q/k/v: 2·2·16·8 = 512 + the norm's 4·2·8 = 64 FLOPs; weights 16·8·4 = 512 B, x read
    // once (64 B), q/k/v written (2·16·4 = 128 B) and gamma (32 B): no normed rows written or read
    expect(byRole[KERNEL_ROLES.qkv]).toMatchObject({ flops: 576, bytes: 736, dispatches: 1 });
    expect(byRole[KERNEL_ROLES.norm]).toBeUndefined();
    // rope of 2·3 head rows of 2 pairs (72 FLOPs); read q/k/v (32 floats), write q (16) and K, V (16),
    // 2 positions, 2 slots, cos and sin of 2 pairs per token (8): 76 floats
    expect(byRole[KERNEL_ROLES.ropeKvWrite]).toMatchObject({ flops: 72, bytes: 304, dispatches: 1 });
    expect(byRole[KERNEL_ROLES.rope]).toBeUndefined();
    expect(byRole[KERNEL_ROLES.kvWrite]).toBeUndefined();
    expect(byRole[KERNEL_ROLES.attention]).toMatchObject({ flops: 114, bytes: 192, dispatches: 1 });
    // o → residual: 256 + 16 adds; the product's 384 B plus the stream read back (64 B)
    expect(byRole[KERNEL_ROLES.oProj]).toMatchObject({ flops: 272, bytes: 448, dispatches: 1 });
    expect(byRole[KERNEL_ROLES.residual]).toBeUndefined();
    // norm → gate/up → SwiGLU: 1024 + 5·32 + 64 FLOPs; weights 1024 B, x 64 B, act 128 B, gamma 32 B
    expect(byRole[KERNEL_ROLES.gateUp]).toMatchObject({ flops: 1248, bytes: 1248, dispatches: 1 });
    expect(byRole[KERNEL_ROLES.swiglu]).toBeUndefined();
    expect(byRole[KERNEL_ROLES.down]).toMatchObject({ flops: 528, bytes: 768, dispatches: 1 });
    // the final norm inside the LM head, on its one row: 160 + 32 FLOPs, 392 + 32 B
    expect(byRole[KERNEL_ROLES.lmHead]).toMatchObject({ flops: 192, bytes: 424, dispatches: 1 });
    expect(cost.flops).toBe(3012);
    expect(cost.bytes).toBe(4300);
    // 6 per layer, plus embedding, lm head and argmax
    expect(cost.dispatches).toBe(9);
  });

  it('a packed format counts its own weight bytes, scales and row padding, and nothing else', () => {
    const f32 = decodeCost(small, [5]);
    const int4 = decodeCost(small, [5], undefined, 'int4');
    const role = (c: typeof f32, r: string) => c.kernels.find((k) => k.role === r);
    // o proj W[8, 8] in int4: K = 8 is one group of 32 (24 weights of padding): 8 rows × 4 words
    // of quants + 8 scales = 160 B, against 256 B in f32; x and y stay 8 + 8 floats.
    expect(role(int4, KERNEL_ROLES.oProj)).toMatchObject({ flops: 128, bytes: 160 + 64 });
    // down W[8, 16]: also one group per row, the same 160 B.
    expect(role(int4, KERNEL_ROLES.down)).toMatchObject({ bytes: 160 + (16 + 8) * 4 });
    // the tied head W[10, 8] is packed too: 10 rows × (16 + 4) B.
    expect(role(int4, KERNEL_ROLES.lmHead)).toMatchObject({ bytes: 200 + (8 + 10) * 4 });
    // f16 halves the f32 weights exactly here (no scales; K = 8 pads to 32 halves = 64 B a row).
    expect(role(decodeCost(small, [5], undefined, 'f16'), KERNEL_ROLES.oProj)).toMatchObject({
      bytes: 8 * 64 + 64,
    });
    // Same FLOPs, and every non-linear kernel unchanged.
    expect(int4.flops).toBe(f32.flops);
    expect(role(int4, KERNEL_ROLES.attention)).toEqual(role(f32, KERNEL_ROLES.attention));
    // A per-tensor lookup: only layer 0's q in int8 (W[8, 8]: 8 rows × (32 + 4) B = 288 B, vs 256).
    const mixed = decodeCost(small, [5], undefined, (t) =>
      t === 'model.layers.0.self_attn.q_proj.weight' ? 'int8' : 'f32',
    );
    expect(mixed.bytes - f32.bytes).toBe(288 - 256);
  });

  it('decode of a batch reads each sequence’s whole context and the weights once', () => {
    const one = decodeCost(small, [5]);
    const byRole = Object.fromEntries(one.kernels.map((k) => [k.role, k]));
    // attention: 6 pairs (5 cached + the new token), 2 heads: 2·6·19; q, out 2·8 floats, K and V 2·6·4 floats
    expect(byRole[KERNEL_ROLES.attention]).toMatchObject({ flops: 228, bytes: (16 + 48) * 4 });
    // o proj for M = 1: 2·8·8 FLOPs, (64 + 8 + 8)·4 B
    expect(byRole[KERNEL_ROLES.oProj]).toMatchObject({ flops: 128, bytes: 320 });
    const batch = decodeCost(small, [5, 9]);
    // batching shares the weight bytes: o proj for M = 2 reads the 64 weights once
    expect(batch.kernels.find((k) => k.role === KERNEL_ROLES.oProj)).toMatchObject({
      flops: 256,
      bytes: (64 + 16 + 16) * 4,
    });
    expect(batch.dispatches).toBe(one.dispatches);
  });

  it('prefill after a cached prefix attends to the prefix too', () => {
    const fresh = prefillCost(small, 2, 0);
    const after = prefillCost(small, 2, 10);
    const attn = (c: typeof fresh) => c.kernels.find((k) => k.role === KERNEL_ROLES.attention)!;
    // pairs 11 + 12 = 23 instead of 3
    expect(attn(after).flops).toBe(2 * 23 * 19);
    expect(attn(after).bytes - attn(fresh).bytes).toBe(2 * 10 * 4 * 4);
  });
});

describe('verify pass (speculative decoding)', () => {
  it('counts every row through the LM head, each row attending causally, weights once per chunk', () => {
    // 3 rows after 5 cached, one chunk: attention pairs 6 + 7 + 8 = 21, 2 heads: 2·21·19 FLOPs.
    const v = verifyCost(small, 5, 3, 8);
    const byRole = Object.fromEntries(v.kernels.map((k) => [k.role, k]));
    expect(byRole[KERNEL_ROLES.attention].flops).toBe(2 * 21 * 19);
    // LM head on all 3 rows: 2·3·10·8 FLOPs; weights 80 floats once, 3 inputs of 8, 3 outputs of 10.
    expect(byRole[KERNEL_ROLES.lmHead]).toMatchObject({ flops: 480, bytes: (80 + 24 + 30) * 4 });
    // One pass of 20 dispatches (see the prefill count above), and nothing read twice.
    expect(v.dispatches).toBe(20);
    // 9 rows in chunks of 4: 3 passes, so 60 dispatches and the o proj weights (64 floats) read 3 times.
    const chunked = verifyCost(small, 0, 9, 4);
    const o = chunked.kernels.find((k) => k.role === KERNEL_ROLES.oProj)!;
    expect(chunked.dispatches).toBe(60);
    // compulsory: 64 weights + 9·8 in + 9·8 out; as implemented: the weights 3 times.
    expect(o.bytes).toBe((64 + 72 + 72) * 4);
    expect(o.bytesAsImplemented).toBe((3 * 64 + 72 + 72) * 4);
  });
});

describe('cost model on ci-tiny, against a closed-form hand count', () => {
  it('prefill of L = 256', () => {
    // ci-tiny: d 128, ffn 344, vocab 509, 2 layers, 4 heads / 2 KV heads of 32, q width 128, kv width 64.
    const L = 256;
    const [d, ffn, V, layers, h, kvh, hd, qW, kvW] = [128, 344, 509, 2, 4, 2, 32, 128, 64];
    const pairs = (L * (L + 1)) / 2;
    const perLayerFlops =
      2 * 4 * L * d + // two rmsnorms
      2 * L * d * (qW + 2 * kvW) + // q, k, v projections
      6 * L * (h + kvh) * (hd / 2) + // rope
      h * pairs * (4 * hd + 3) + // attention
      2 * L * qW * d + // o projection
      2 * L * d + // two residual adds
      2 * 2 * L * d * ffn + // gate and up
      5 * L * ffn + // swiglu
      2 * L * ffn * d; // down
    const flops = layers * perLayerFlops + 4 * L * d + 2 * V * d + V;
    expect(flops).toBe(prefillCost(presetConfig('ci-tiny'), L).flops);
    expect(prefillCost(presetConfig('ci-tiny'), L).flops).toBe(222_165_757);
  });
});

describe('attention bytes, compulsory and as implemented (GQA)', () => {
  // SmolLM2-135M's attention geometry: 9 query heads share 3 KV heads (groups of 3), head dim 64.
  const smol: ModelConfig = { ...presetConfig('smollm2-135m') };
  const attn = (c: { kernels: { role: string; bytes: number; bytesAsImplemented: number }[] }) =>
    c.kernels.find((k) => k.role === KERNEL_ROLES.attention)!;
  const kvRowBytes = 2 * 3 * 64 * 4; // K and V rows of all 3 KV heads, f32
  const layers = 30;

  it('a decode step loads each cached row once per group, the compulsory traffic', () => {
    // depth 99: 100 rows of context. direct: one pass over the group of 3 heads.
    const a = attn(decodeCost(smol, [99], { family: 'direct' }));
    expect(a.bytesAsImplemented).toBe(a.bytes);
    expect(a.bytes - layers * 2 * 9 * 64 * 4).toBe(layers * 100 * kvRowBytes);
  });

  it('a split-K decode step is two dispatches per layer and adds its partials as implemented', () => {
    // depth 99: 100 rows, in slices of 32 → 4 used slices; 9 heads each write o (64 floats), m and l,
    // and the merge reads them back: 2 · 4 · 9 · 66 floats per layer on top of direct's bytes.
    const direct = decodeCost(smol, [99], { family: 'direct' });
    const split = decodeCost(smol, [99], { family: 'split', chunk: 32 });
    expect(attn(split).bytes).toBe(attn(direct).bytes);
    expect(attn(split).bytesAsImplemented - attn(direct).bytesAsImplemented).toBe(
      layers * 2 * 4 * 9 * 66 * 4,
    );
    const dispatches = (c: typeof split) =>
      c.kernels.find((k) => k.role === KERNEL_ROLES.attention)!.dispatches;
    expect(dispatches(direct)).toBe(layers);
    expect(dispatches(split)).toBe(2 * layers);
    expect(split.dispatches - direct.dispatches).toBe(layers);
    // A verify of 3 rows after 99 cached in chunks of 2: contexts 100, 101 | 102 → 4 + 4 | 4 slices,
    // and two passes of 2 attention dispatches per layer.
    const verify = verifyCost(smol, 99, 3, 2, { family: 'split', chunk: 32 });
    const verifyDirect = verifyCost(smol, 99, 3, 2, { family: 'direct' });
    expect(attn(verify).bytesAsImplemented - attn(verifyDirect).bytesAsImplemented).toBe(
      layers * 2 * 12 * 9 * 66 * 4,
    );
    expect(dispatches(verify)).toBe(2 * 2 * layers);
  });

  it('prefill loads a cached row once per block of queries, a new row once per block at or after it', () => {
    // L = 8 new rows after 16 cached, direct4 (blocks of 4 queries, 2 blocks): a cached row is loaded
    // by both blocks; new rows 0..3 by both blocks, rows 4..7 by the second only: 16·2 + 4·2 + 4·1 = 44
    // loads against 24 compulsory.
    const a = attn(prefillCost(smol, 8, 16, { family: 'direct4' }));
    expect(a.bytesAsImplemented - a.bytes).toBe(layers * (44 - 24) * kvRowBytes);
    // With no family named, only the compulsory traffic is known.
    const plain = attn(prefillCost(smol, 8, 16));
    expect(plain.bytesAsImplemented).toBe(plain.bytes);
  });
});

describe('the KV cache’s type and window in the cost model', () => {
  const c = presetConfig('ci-tiny'); // 2 layers, 2 KV heads of 32, 4 query heads
  const attention = (kv: Parameters<typeof decodeCost>[5]) =>
    decodeCost(c, [99], undefined, 'f32', 'unfused', kv).kernels.find(
      (k) => k.role === KERNEL_ROLES.attention,
    );

  it('decode attention reads each of the 100 cached rows in the pool’s type (hand counts)', () => {
    // q in and out: 2 · 4 · 32 · 4 = 1024 bytes a layer. K and V of 2 heads for 100 tokens:
    // f32 2 · 2 · 128 · 100 = 51200, int8 2 · 2 · 36 · 100 = 14400 (32 values + a 4-byte scale a row).
    expect(attention({})?.bytes).toBe(2 * (1024 + 51200));
    expect(attention({ dtype: 'int8' })?.bytes).toBe(2 * (1024 + 14400));
    expect(attention({ dtype: 'f16' })?.bytes).toBe(2 * (1024 + 25600));
  });

  it('a window of 64 reads 64 rows, and the FLOPs follow the visible keys', () => {
    expect(attention({ window: 64 })?.bytes).toBe(2 * (1024 + 2 * 2 * 128 * 64));
    expect(attention({ window: 64 })?.flops).toBe(2 * 4 * 64 * (4 * 32 + 3));
  });

  it('prefill after 200 cached tokens with a window of 64 reads 63 cached rows and the new ones', () => {
    const k = prefillCost(c, 10, 200, undefined, 'f32', 'unfused', { window: 64 }).kernels.find(
      (x) => x.role === KERNEL_ROLES.attention,
    );
    // q in and out for 10 rows: 2 · 10 · 128 · 4; K/V rows 63 + 10, 2 heads of 128 bytes, K and V.
    expect(k?.bytes).toBe(2 * (2 * 10 * 128 * 4 + 73 * 2 * 2 * 128));
  });
});
