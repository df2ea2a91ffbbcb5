import { describe, expect, it } from 'vitest';
import { makeResult } from '../../test-support/fixtures/base.ts';
import { capacityInput, estimateCapacity, parseBytes, parseCapacityInput } from './estimate.ts';
import {
  admittedInOrder,
  concurrencyForBudget,
  kvBytesPerRequest,
  kvBytesPerToken,
  kvBytesPerTokenMha,
  kvBytesPerTokenPerLayer,
  kvRatioToF32,
  kvScaleBytesPerToken,
  kvVectorBytes,
  pagesHeld,
  peakPagesHeld,
  windowCaps,
  windowedTokens,
} from './kv.ts';
import { firstLengths } from './lengths.ts';
import {
  type CapacityModel,
  capacityModelFromDims,
  capacityModelFromHfConfig,
  capacityModelFromPreset,
  llamaParameterCount,
  weightsBytes,
} from './model.ts';
import { capacityRows } from './report.ts';
import { roofsFromResult } from './roofs.ts';

/** Llama-2-70B as its config.json gives it. */
const LLAMA2_70B: CapacityModel = capacityModelFromHfConfig({
  _name_or_path: 'meta-llama/Llama-2-70b-hf',
  num_hidden_layers: 80,
  num_attention_heads: 64,
  num_key_value_heads: 8,
  hidden_size: 8192,
  intermediate_size: 28672,
  vocab_size: 32000,
  max_position_embeddings: 4096,
  tie_word_embeddings: false,
});

/** A 7B MHA model (Llama-2-7B's shape): 32 layers, d 4096 = 32 heads × 128. */
const MHA_7B = capacityModelFromDims({
  layers: 32,
  heads: 32,
  hidden: 4096,
  intermediate: 11008,
  vocab: 32000,
  contextLength: 4096,
});

describe('KV calculator: worked examples', () => {
  it('Llama-2-70B at 4096 tokens in f16: 1.25 GiB per request, not the often quoted 1.07 GB', () => {
    // 2 (K,V) · 80 layers · 8 kv heads · 128 head dim · 2 bytes = 327,680 bytes per token.
    expect(kvBytesPerToken(LLAMA2_70B, 'f16')).toBe(327_680);
    // 327,680 · 4096 = 1,342,177,280 bytes = 1.25 · 2^30. "1.07 GB" is 2^30 = 1,073,741,824: 20% low.
    expect(kvBytesPerRequest(LLAMA2_70B, 'f16', 4096)).toBe(1_342_177_280);
    expect(kvBytesPerRequest(LLAMA2_70B, 'f16', 4096) / 2 ** 30).toBe(1.25);
    // MHA would cache all 64 heads: 2 · 80 · 64 · 128 · 2 · 4096 = 10,737,418,240 = 10 GiB (8× more).
    expect(kvBytesPerTokenMha(LLAMA2_70B, 'f16') * 4096).toBe(10 * 2 ** 30);
    // 2 × 80 GB of KV budget at 0.8 headroom = 128,000,000,000 bytes; ÷ 1,342,177,280 = 95.37 → 95.
    expect(concurrencyForBudget(2 * 80e9 * 0.8, 1_342_177_280)).toBe(95);
  });

  it('a 7B MHA model at 4096 tokens in f16: 2 GiB per request', () => {
    // 2 · 32 · 32 · 128 · 2 = 524,288 bytes per token; · 4096 = 2,147,483,648 = 2 GiB.
    expect(kvBytesPerRequest(MHA_7B, 'f16', 4096)).toBe(2 * 2 ** 30);
    expect(kvBytesPerTokenMha(MHA_7B, 'f16')).toBe(kvBytesPerToken(MHA_7B, 'f16'));
  });

  it('f32 doubles the f16 figure, int8 halves it and adds its scales, and pages round each request up', () => {
    expect(kvBytesPerToken(LLAMA2_70B, 'f32')).toBe(655_360);
    // int8: 2 · 80 · 8 · (128 · 1 byte + one 4-byte f32 scale) = 1280 · 132 = 168,960 bytes per
    // token: 163,840 of values (half the f16 figure) and 2 · 80 · 8 · 4 = 5,120 of scales.
    expect(kvBytesPerToken(LLAMA2_70B, 'int8')).toBe(168_960);
    expect(kvScaleBytesPerToken(LLAMA2_70B, 'int8')).toBe(5_120);
    expect(kvScaleBytesPerToken(LLAMA2_70B, 'f16')).toBe(0);
    // 3400 tokens in 16-token pages: 213 pages = 3408 slots.
    expect(kvBytesPerRequest(LLAMA2_70B, 'f16', 3400, 16)).toBe(3408 * 327_680);
  });

  it('admission in order stops at the first request that does not fit', () => {
    // 100 bytes per token, budget 1000: 3 (→ 4 with pages of 4) + 4 = 8 slots fit, the next 3 (→4) does not.
    expect(admittedInOrder(1000, 100, [3, 4, 3, 1], (n) => Math.ceil(n / 4) * 4)).toBe(2);
    expect(admittedInOrder(1000, 100, [3, 4, 3], (n) => n)).toBe(3);
  });

  it('parameters of Llama-2-70B: 68,976,648,192 by hand', () => {
    // Per layer: q 8192² + k,v 2·8192·1024 + o 8192² + MLP 3·8192·28672 + 2 norms 2·8192
    //   = 67,108,864 + 16,777,216 + 67,108,864 + 704,643,072 + 16,384 = 855,654,400; · 80 = 68,452,352,000.
    // Embeddings and untied head 2 · 32000 · 8192 = 524,288,000; final norm 8192.
    expect(llamaParameterCount(LLAMA2_70B)).toBe(68_976_648_192);
    expect(weightsBytes(LLAMA2_70B, 'f16')).toBe(137_953_296_384);
  });
});

/** ci-tiny's attention shape: 2 layers, 4 heads sharing 2 KV heads of 32. */
const TINY = { layers: 2, heads: 4, kvHeads: 2, headDim: 32 };

describe("KV storage formats: the engine's bytes, scales included", () => {
  it('ci-tiny: f32 512 B per token and layer, f16 256, int8 144 with its scales', () => {
    // One K or V vector of one head: f32 32 · 4 = 128 B; f16 32 · 2 = 64 B (pairs packed in u32);
    // int8 32 · 1 + one f32 scale of 4 = 36 B.
    expect([kvVectorBytes(32, 'f32'), kvVectorBytes(32, 'f16'), kvVectorBytes(32, 'int8')]).toEqual([
      128, 64, 36,
    ]);
    // Per token and layer: 2 (K, V) · 2 KV heads · the vector: 512, 256 and 144 B.
    expect(kvBytesPerTokenPerLayer(TINY, 'f32')).toBe(512);
    expect(kvBytesPerTokenPerLayer(TINY, 'f16')).toBe(256);
    expect(kvBytesPerTokenPerLayer(TINY, 'int8')).toBe(144);
    // Over 2 layers: 1024, 512 and 288 B; of int8's 288, 2 · 2 · 2 · 4 = 32 are scales.
    expect(kvBytesPerToken(TINY, 'f32')).toBe(1024);
    expect(kvBytesPerToken(TINY, 'f16')).toBe(512);
    expect(kvBytesPerToken(TINY, 'int8')).toBe(288);
    expect(kvScaleBytesPerToken(TINY, 'int8')).toBe(32);
  });

  it('against f32: f16 exactly 0.5, int8 (headDim + 4) ÷ (4 · headDim)', () => {
    expect(kvRatioToF32(32, 'f16')).toBe(0.5);
    expect(kvRatioToF32(32, 'f32')).toBe(1);
    // 36 ÷ 128 = 0.28125 at headDim 32 (ci-tiny); 68 ÷ 256 = 0.265625 at 64; 132 ÷ 512 at 128.
    expect(kvRatioToF32(32, 'int8')).toBe(0.28125);
    expect(kvRatioToF32(64, 'int8')).toBe(0.265625);
    expect(kvRatioToF32(128, 'int8')).toBe(0.2578125);
  });
});

describe('sliding window: tokens and pages kept', () => {
  it('keeps min(T, W) tokens; no window keeps all', () => {
    expect(windowedTokens(100, 32)).toBe(32);
    expect(windowedTokens(20, 32)).toBe(20);
    expect(windowedTokens(100, null)).toBe(100);
    expect(windowedTokens(100)).toBe(100);
    expect([windowCaps(33, 32), windowCaps(32, 32), windowCaps(1000, null)]).toEqual([true, false, false]);
  });

  it('pages held, counted by hand: pages of 16, window 32', () => {
    // Page k holds positions 16k … 16k + 15; a sequence of T tokens keeps max(0, T − 32) … T − 1.
    const held = (t: number) => pagesHeld(t, 16, 32);
    expect(held(0)).toBe(0); // nothing
    expect(held(1)).toBe(1); // 0 … 0: page 0
    expect(held(16)).toBe(1); // 0 … 15: page 0
    expect(held(17)).toBe(2); // 0 … 16: pages 0, 1
    expect(held(32)).toBe(2); // 0 … 31: pages 0, 1 (depth W)
    expect(held(33)).toBe(3); // 1 … 32: pages 0, 1, 2 (page 0 still holds position 1)
    expect(held(48)).toBe(2); // 16 … 47: pages 1, 2 (page 0 went back to the pool)
    expect(held(49)).toBe(3); // 17 … 48: pages 1, 2, 3
    expect(held(128)).toBe(2); // 96 … 127: pages 6, 7 (depth 4W: as at W)
    expect(held(130)).toBe(3); // 98 … 129: pages 6, 7, 8
    // Without a window the same 130 tokens fill pages 0 … 8.
    expect(pagesHeld(130, 16, null)).toBe(9);
    expect(pagesHeld(130, 16)).toBe(9);
  });

  it('pages held, counted by hand: a window that is not a whole number of pages, or under one page', () => {
    // Pages of 8, window 20: T = 104 keeps 84 … 103, pages 10 (80 … 87), 11, 12 (96 … 103): 3;
    // T = 105 keeps 85 … 104, pages 10 … 13: 4, which is ceil(20 ÷ 8) + 1, the most it can be.
    expect(pagesHeld(104, 8, 20)).toBe(3);
    expect(pagesHeld(105, 8, 20)).toBe(4);
    // Pages of 16, window 5: T = 90 keeps 85 … 89, all in page 5 (80 … 95): 1; T = 100 keeps
    // 95 … 99, pages 5 and 6: 2.
    expect(pagesHeld(90, 16, 5)).toBe(1);
    expect(pagesHeld(100, 16, 5)).toBe(2);
    // Page size 1 is the exact token count: min(100, 32).
    expect(pagesHeld(100, 1, 32)).toBe(32);
  });

  it('the most pages a sequence holds on its way to T, counted by hand', () => {
    // Pages of 16, window 32: growing to 48 tokens it held 3 pages at 33 (pages 0, 1, 2), though it
    // ends with 2; growing only to 32 it never held more than 2; without a window, 130 → 9 pages.
    expect(peakPagesHeld(48, 16, 32)).toBe(3);
    expect(peakPagesHeld(32, 16, 32)).toBe(2);
    expect(peakPagesHeld(20, 16, 32)).toBe(2);
    expect(peakPagesHeld(10_000, 16, 32)).toBe(3);
    expect(peakPagesHeld(130, 16, null)).toBe(9);
    // Pages of 8, window 20: at T = 24 it keeps 4 … 23, pages 0, 1, 2; 4 pages first at T = 25
    // (5 … 24: pages 0 … 3), and never 5.
    expect(peakPagesHeld(24, 8, 20)).toBe(3);
    expect(peakPagesHeld(25, 8, 20)).toBe(4);
    expect(peakPagesHeld(10_000, 8, 20)).toBe(4);
  });

  it('the peak is the largest pages held over every length up to T', () => {
    for (const pageSize of [1, 4, 8, 16]) {
      for (const window of [3, 16, 20, 33]) {
        let most = 0;
        for (let t = 0; t <= 3 * window + 2 * pageSize; t++) {
          most = Math.max(most, pagesHeld(t, pageSize, window));
          expect(peakPagesHeld(t, pageSize, window), `P ${pageSize} W ${window} T ${t}`).toBe(most);
        }
      }
    }
  });

  it('bytes of a windowed request: its pages, or its last W tokens without pages', () => {
    // ci-tiny in f32, 1024 B per token. 135 tokens with window 32 keep 103 … 134: pages 6, 7, 8
    // of 16, so 48 slots = 49,152 B; unpaged, 32 tokens = 32,768 B; no window, 9 pages = 147,456 B.
    expect(kvBytesPerRequest(TINY, 'f32', 135, 16, 32)).toBe(49_152);
    expect(kvBytesPerRequest(TINY, 'f32', 135, 1, 32)).toBe(32_768);
    expect(kvBytesPerRequest(TINY, 'f32', 135, 16)).toBe(147_456);
    // int8: 288 B per token, 48 slots = 13,824 B.
    expect(kvBytesPerRequest(TINY, 'int8', 135, 16, 32)).toBe(13_824);
  });
});

describe('capacity estimator', () => {
  it('50 sessions of 3000 in / 400 out, 20% long at 4×, on 4 × 80 GB with Llama-2-70B in f16', () => {
    const e = estimateCapacity(
      LLAMA2_70B,
      capacityInput({ gpuMem: 80e9, gpus: 4, input: 3000, output: 400, sessions: 50, longShare: 0.2 }),
    );
    // Weights: 68,976,648,192 params · 2 bytes.
    expect(e.weightsBytes).toBe(137_953_296_384);
    // Mean session 3400 tokens · 327,680 = 1,114,112,000 bytes; 40 of them = 44,564,480,000.
    // Long session 4 · 3400 = 13,600 tokens · 327,680 = 4,456,448,000; 10 of them = 44,564,480,000.
    expect(e.classes.map((c) => [c.name, c.sessions, c.tokens, c.kvBytes])).toEqual([
      ['mean', 40, 3400, 44_564_480_000],
      ['long', 10, 13600, 44_564_480_000],
    ]);
    expect(e.kvBytesPerRequest).toBe(1_114_112_000);
    expect(e.kvBytesTotal).toBe(89_128_960_000);
    // Total 227,082,256,384 bytes; usable per GPU 80e9 · 0.85 = 68e9; 227.08 / 68 = 3.34 → 4 GPUs.
    expect(e.totalBytes).toBe(227_082_256_384);
    expect(e.gpusNeeded).toBe(4);
    // KV budget on 4 GPUs: 272e9 − 137,953,296,384 = 134,046,703,616 bytes.
    expect(e.kvBudgetBytes).toBe(134_046_703_616);
    // Paged (16-token pages): 0.8 · 3408 + 0.2 · 13600 = 5446.4 slots a session, · 327,680 =
    // 1,784,676,352 bytes; 134,046,703,616 / 1,784,676,352 = 75.1 → 75.
    // Contiguous, each reserving the longest session, 13,600 tokens = 4,456,448,000 bytes → 30.08 → 30.
    expect(e.pagedBytesPerSession).toBeCloseTo(1_784_676_352, 3);
    expect(e.maxConcurrency).toEqual({ paged: 75, contiguous: 30 });
    expect(e.contiguousReserve).toBe(13_600);
    // 13,600 tokens is past Llama-2's 4096 context: said, not hidden.
    expect(e.notes.join(' ')).toMatch(/13600 tokens, past the model's context length of 4096/);
    // No roofs: memory only, and the 50 sessions fit (89.1 GB of a 134.0 GB budget).
    expect(e.tpotMs).toBeNull();
    expect(e.utilization.kvMemory).toBeCloseTo(89_128_960_000 / 134_046_703_616, 12);
    expect(e.bottleneck).toBeNull();
  });

  it('times from the roofs: a 7B f16 decode step is its bytes over the bandwidth', () => {
    const e = estimateCapacity(
      MHA_7B,
      capacityInput({
        gpuMem: 80e9,
        input: 1000,
        output: 2,
        sessions: 1,
        peakTflops: 100,
        bandwidthGBs: 1000,
      }),
    );
    // Params by hand: per layer 4 · 4096² + 3 · 4096 · 11008 + 2 · 4096 = 202,383,360; · 32 =
    // 6,476,267,520; + 2 · 32000 · 4096 + 4096 = 6,738,415,616; f16: 13,476,831,232 bytes.
    expect(e.weightsBytes).toBe(13_476_831_232);
    // One session halfway through 2 output tokens: depth 1001, context 1002 tokens read.
    // Bytes 13,476,831,232 + 1002 · 524,288 = 14,002,167,808 at 1e12 B/s = 14.002 ms; FLOPs ≈ 1.35e10
    // at 1e14 FLOP/s = 0.13 ms, so bandwidth bounds it.
    expect(e.tpotMs).toBeCloseTo(14.002167808, 9);
    // Prefill of 1000 tokens: linear 2 · 1000 · 6,476,005,376 = 1.2952e13 FLOPs plus attention
    // 32 layers · 32 heads · 500,500 pairs · 515 = 2.6394e11: 1.3216e13 at 1e14 = 132.16 ms (the
    // norms, RoPE, SwiGLU and the head add 0.03%).
    expect(Math.abs(e.prefillMs! - 132.16) / 132.16).toBeLessThan(1e-3);
    // One request costs its prefill and 2 decode steps of a batch of 1.
    expect(e.requestsPerSec!).toBeCloseTo(1000 / (e.prefillMs! + 2 * e.tpotMs!), 9);
    expect(e.throughputTokensPerSec!).toBeCloseTo(2 * e.requestsPerSec!, 9);
    // 132 ms of prefill against 28 ms of decode per request: prefill compute binds.
    expect(e.bottleneck).toBe('prefill-compute');
  });

  it('names decode bandwidth when generation dominates, and KV memory when the sessions do not fit', () => {
    const base = { gpuMem: 80e9, peakTflops: 100, bandwidthGBs: 1000 };
    const decode = estimateCapacity(
      MHA_7B,
      capacityInput({ ...base, input: 100, output: 1000, sessions: 4 }),
    );
    expect(decode.bottleneck).toBe('decode-bandwidth');
    expect(decode.utilization.decode!).toBeGreaterThan(decode.utilization.prefill!);
    // 200 sessions of 4096 tokens need 200 · 2 GiB = 429 GB of KV; one GPU has 68e9 − 13.5e9 usable.
    const memory = estimateCapacity(
      MHA_7B,
      capacityInput({ ...base, input: 4000, output: 96, sessions: 200 }),
    );
    expect(memory.bottleneck).toBe('kv-memory');
    expect(memory.utilization.kvMemory).toBeGreaterThan(1);
    // (68e9 − 13,476,831,232) / 2,147,483,648 = 25.39 → 25 sessions fit, paged or contiguous (4096 = maxLen).
    expect(memory.maxConcurrency).toEqual({ paged: 25, contiguous: 25 });
    expect(memory.expectedBatch).toBe(25);
  });
});

describe('capacity estimator: KV types and the window', () => {
  const traffic = { gpuMem: 80e9, gpus: 4, input: 3000, output: 400, sessions: 50, longShare: 0.2 };

  it('int8 counts its scales: Llama-2-70B at 168,960 B per token, 5,120 of them scales', () => {
    const input = capacityInput({ ...traffic, kvDtype: 'int8' });
    const e = estimateCapacity(LLAMA2_70B, input);
    // 2 · 80 · 8 · (128 + 4) = 168,960; scales 2 · 80 · 8 · 4 = 5,120; against f32 132 ÷ 512.
    expect(e.kvBytesPerToken).toBe(168_960);
    expect(e.kvScaleBytesPerToken).toBe(5_120);
    expect(e.kvRatioToF32).toBe(0.2578125);
    // Mean session 3400 tokens · 168,960 = 574,464,000 B.
    expect(e.kvBytesPerRequest).toBe(574_464_000);
    expect(capacityRows({ ...e, modelShape: LLAMA2_70B, input })).toContainEqual([
      'KV bytes per token',
      expect.stringContaining('168,960 (int8: 163,840 of values + 5,120 of f32 scales'),
    ]);
  });

  it('a 4096-token window caps the long sessions at 4096 tokens and 257 pages; contiguous is unchanged', () => {
    const input = capacityInput({ ...traffic, window: 4096 });
    const e = estimateCapacity(LLAMA2_70B, input);
    // Mean sessions (3400 tokens) are shorter than the window: as without it, 40 · 3400 · 327,680
    // = 44,564,480,000 B, 213 pages of 16. Long ones (13,600) keep 4096 tokens: 10 · 4096 ·
    // 327,680 = 13,421,772,800 B. In pages they peak at length 4096 + 15 = 4111, keeping
    // 15 … 4110: pages 0 … 256, 257 pages (ceil(4095 ÷ 16) + 1).
    expect(e.classes.map((c) => [c.name, c.tokens, c.heldTokens, c.pagesPerSession, c.kvBytes])).toEqual([
      ['mean', 3400, 3400, 213, 44_564_480_000],
      ['long', 13600, 4096, 257, 13_421_772_800],
    ]);
    expect(e.kvBytesPerRequest).toBe(1_114_112_000);
    expect(e.kvBytesTotal).toBe(57_986_252_800);
    // Paged: 0.8 · 213 · 16 + 0.2 · 257 · 16 = 2726.4 + 822.4 = 3548.8 slots · 327,680 =
    // 1,162,870,784 B a session; 134,046,703,616 ÷ that = 115.3 → 115 (75 without the window).
    // Contiguous still reserves 13,600 tokens per session: 30, as without it.
    expect(e.pagedBytesPerSession).toBeCloseTo(1_162_870_784, 3);
    expect(e.maxConcurrency).toEqual({ paged: 115, contiguous: 30 });
    expect(e.notes.join(' ')).toMatch(
      /4096-token window caps the long sessions \(13600 → 4096 tokens, at most 257 pages of 16\)/,
    );
    const rows = capacityRows({ ...e, modelShape: LLAMA2_70B, input });
    expect(rows).toContainEqual([
      'KV, long sessions',
      expect.stringMatching(/^10 × 4,096 of 13,600 tokens \(window\) = 13,421,772,800 B/),
    ]);
    expect(rows).toContainEqual([
      'sliding window',
      '4,096 tokens: mean keeps 3,400 of 3,400, at most 213 pages of 16; long keeps 4,096 of 13,600 (capped), at most 257 pages of 16',
    ]);
  });

  it('a window shorter than the mean session caps it too; one longer than every session caps none', () => {
    // 2048 of 3400 tokens · 327,680 = 671,088,640 B.
    const short = estimateCapacity(LLAMA2_70B, capacityInput({ ...traffic, window: 2048 }));
    expect(short.kvBytesPerRequest).toBe(671_088_640);
    expect(short.notes.join(' ')).toMatch(/caps the mean sessions .* and the long sessions/);
    const long = estimateCapacity(LLAMA2_70B, capacityInput({ ...traffic, window: 100_000 }));
    const full = estimateCapacity(LLAMA2_70B, capacityInput(traffic));
    expect(long.kvBytesTotal).toBe(full.kvBytesTotal);
    expect(long.maxConcurrency).toEqual(full.maxConcurrency);
    expect(long.notes.join(' ')).toMatch(/100000-token window caps no session/);
    expect(full.notes.join(' ')).not.toMatch(/window/);
  });

  it('decode reads only the window: a 7B step at depth 1001 with window 256 reads 256 tokens of KV', () => {
    const e = estimateCapacity(
      MHA_7B,
      capacityInput({
        gpuMem: 80e9,
        input: 1000,
        output: 2,
        sessions: 1,
        peakTflops: 100,
        bandwidthGBs: 1000,
        window: 256,
      }),
    );
    // Weights 13,476,831,232 B + 256 · 524,288 = 134,217,728 B of KV = 13,611,048,960 B at 1e12 B/s.
    expect(e.tpotMs).toBeCloseTo(13.61104896, 9);
    expect(e.notes.join(' ')).toMatch(/prompt past the 256-token window that is an upper bound/);
  });

  it('names the window field when it is not a positive whole number', () => {
    const ok = { gpuMem: 80e9, input: 10, output: 10, sessions: 1 };
    const issue = (window: number) => {
      const r = parseCapacityInput({ ...ok, window });
      return r.ok ? null : r.issues[0];
    };
    expect(issue(0)).toEqual({ field: 'window', message: 'must be positive' });
    expect(issue(-4)).toEqual({ field: 'window', message: 'must be positive' });
    expect(issue(1.5)).toEqual({ field: 'window', message: 'must be a whole number' });
    expect(issue(1)).toBeNull();
  });
});

describe('model sources and bad input', () => {
  it('a preset, and a config.json with GQA', () => {
    const tiny = capacityModelFromPreset('ci-tiny');
    expect(kvBytesPerToken(tiny, 'f32')).toBe(2 * 2 * 2 * 32 * 4);
    expect(() => capacityModelFromPreset('nope')).toThrow(/unknown preset "nope"/);
  });

  it('names the config.json field at fault', () => {
    const cfg = {
      num_hidden_layers: 32,
      num_attention_heads: 32,
      hidden_size: 4096,
      intermediate_size: 11008,
      vocab_size: 32000,
      max_position_embeddings: 4096,
    };
    expect(() => capacityModelFromHfConfig({ ...cfg, num_key_value_heads: 5 })).toThrow(
      /num_key_value_heads: heads \(32\) must be a multiple of kvHeads \(5\)/,
    );
    expect(() => capacityModelFromHfConfig({ ...cfg, num_attention_heads: 30 })).toThrow(
      /num_attention_heads: hidden_size 4096 is not divisible/,
    );
    expect(() => capacityModelFromHfConfig({ ...cfg, num_hidden_layers: -2 })).toThrow(
      /num_hidden_layers: must be positive/,
    );
    expect(() => capacityModelFromHfConfig({ ...cfg, vocab_size: undefined })).toThrow(/vocab_size/);
  });

  it('names the input field at fault', () => {
    const ok = { gpuMem: 80e9, input: 10, output: 10, sessions: 1 };
    const issue = (raw: Record<string, unknown>) => {
      const r = parseCapacityInput(raw);
      return r.ok ? null : r.issues[0];
    };
    expect(issue({ ...ok, headroom: 0 })).toEqual({ field: 'headroom', message: 'must be in (0, 1]' });
    expect(issue({ ...ok, headroom: 1.2 })).toEqual({ field: 'headroom', message: 'must be in (0, 1]' });
    expect(issue({ ...ok, gpuMem: -1 })?.field).toBe('gpuMem');
    expect(issue({ ...ok, sessions: 0 })?.field).toBe('sessions');
    expect(issue({ ...ok, gpus: 1.5 })?.field).toBe('gpus');
    expect(issue({ ...ok, peakTflops: 10 })).toEqual({
      field: 'bandwidthGBs',
      message: 'give both peak compute and bandwidth, or neither',
    });
    expect(issue({ ...ok, headroom: 1 })).toBeNull();
  });

  it('parses memory sizes with decimal and binary units', () => {
    expect(parseBytes('80GB')).toBe(80e9);
    expect(parseBytes('80')).toBe(80e9);
    expect(parseBytes('24GiB')).toBe(24 * 2 ** 30);
    expect(parseBytes('512 MiB')).toBe(512 * 2 ** 20);
    expect(() => parseBytes('-5GB', '--gpu-mem')).toThrow(/--gpu-mem: "-5GB" is not a size/);
    expect(() => parseBytes('0GB', '--gpu-mem')).toThrow(/--gpu-mem: must be positive/);
  });
});

describe('sequence lengths of the capacity probe', () => {
  const mix = { meanTokens: 100, longShare: 0.25, longFactor: 4, maxTokens: 350, seed: 7 };
  it('is reproducible, bounded, and mixes the classes in their shares', () => {
    const a = firstLengths(mix, 4000);
    expect(firstLengths(mix, 4000)).toEqual(a);
    expect(firstLengths({ ...mix, seed: 8 }, 50)).not.toEqual(a.slice(0, 50));
    expect(Math.min(...a)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...a)).toBe(350);
    // Mean-class lengths are uniform on [50, 150]; long ones on [200, 600], clamped to 350.
    const long = a.filter((n) => n >= 200).length / a.length;
    expect(long).toBeGreaterThan(0.22);
    expect(long).toBeLessThan(0.28);
    const short = a.filter((n) => n <= 150);
    expect(short.reduce((s, n) => s + n, 0) / short.length).toBeCloseTo(100, -1);
  });
});

describe('roofs from a saved result', () => {
  it('takes the FMA peak and copy bandwidth, the better of before and after', () => {
    // The fixture measured 2000 GFLOP/s and 200 GB/s before; 2500 and 150 after.
    const after = { ...makeResult().peaks, fmaGflops: 2500, copyGBps: 150 };
    const roofs = roofsFromResult(makeResult({ peaksAfter: after }), 'run.json');
    expect(roofs.peakTflops).toBe(2.5);
    expect(roofs.bandwidthGBs).toBe(200);
    expect(roofs.roofsSource).toMatch(/^run\.json \(/);
  });

  it('rejects a run that never measured them, naming the field', () => {
    const failed = makeResult({
      status: 'failed',
      peaks: { ...makeResult().peaks, fmaGflops: 0, copyGBps: 0 },
    });
    expect(() => roofsFromResult(failed, 'failed.json')).toThrow(
      /roofs: failed.json has no measured roofs \(peaks.fmaGflops 0, peaks.copyGBps 0\)/,
    );
  });
});
