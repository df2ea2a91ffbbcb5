import { InputError } from '../errors.ts';
import { BufferPool, readFloat32 } from '../gpu/buffers.ts';
import { assertAlive, type Gpu } from '../gpu/device.ts';
import { PipelineCache } from '../gpu/pipelines.ts';
import type { Timing } from '../gpu/profiler.ts';
import type { KernelCall, KernelContext } from '../kernels/kernel.ts';
import { MAX_DECODE_BATCH } from '../kernels/limits.ts';
import { DEFAULT_VARIANTS, type KernelVariants } from '../kernels/variants.ts';
import { KvCache, type KvCacheOptions } from '../kv/cache.ts';
import { BYTES } from '../weight-format.ts';
import { archFeatures, dims, type ModelConfig } from './config.ts';
import { graphFusions } from './graph.ts';
import { createKernels, LinearKernels } from './kernel-set.ts';
import { checkPlanFits, planMemory } from './plan.ts';
import {
  DECODE_CHUNK,
  type DecodePlan,
  exclusiveAll,
  Plans,
  PREFILL_PLAN_CACHE,
  type PrefillPlan,
  readNextTokens,
} from './plans.ts';
import { linearFormatsOf, runsFused, uploadWeights } from './upload.ts';
import { type ModelWeights, weightFormatsOf } from './weights.ts';

export interface ModelOptions {
  kv: KvCacheOptions;
  /** Largest decode batch; the GEMV kernel handles up to 8 rows. */
  maxBatch: number;
  /** Share compiled pipelines between models on one device (tests build many models). */
  pipelines?: PipelineCache;
  /** Kernel families to use (chosen by the autotuner); the GPU-oriented defaults otherwise. */
  variants?: KernelVariants;
  /**
   * Run the fused graph (src/kernels/fuse.ts) where the chosen families take it: true by default.
   * false keeps the unfused graph, the fused one's reference (`--no-fuse`).
   */
  fuse?: boolean;
}

/** Which logits a prefill reads back: none (timing runs), the last position's, or every position's. */
export type LogitsMode = 'none' | 'last' | 'all';

export interface PrefillRequest {
  seq: number;
  tokens: readonly number[];
}

export interface PrefillResult {
  seq: number;
  /** Greedy next token after the last prompt token. */
  nextToken: number;
  /** Greedy next token after each position whose logits were computed (every one for 'all', the last otherwise). */
  nextTokens: number[];
  /** [1, vocab] for 'last', [L, vocab] for 'all', absent for 'none'. */
  logits?: Float32Array;
}

export interface DecodeRequest {
  seq: number;
  /** The token to append; its K/V are written and the next token is predicted. */
  token: number;
}

export interface DecodeResult {
  nextTokens: number[];
  /** [batch, vocab], only when asked for. */
  logits?: Float32Array;
}

function countByRole(calls: readonly KernelCall[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of calls) {
    const role = c.role ?? c.kernel;
    counts[role] = (counts[role] ?? 0) + 1;
  }
  return counts;
}

/**
 * Most rows of one verify chunk: a verify runs on the decode kernels, in chunks of DECODE_CHUNK
 * rows, the GEMV's batch limit (plans.ts).
 */
export const VERIFY_CHUNK = DECODE_CHUNK;

/** One engine step of a serving loop: decode rows and prefill chunks, in one command buffer. */
export interface StepRequest {
  decodes: readonly DecodeRequest[];
  prefills: readonly PrefillRequest[];
}

export interface StepResult {
  /** Greedy next token of each decode row, in order. */
  decodeTokens: number[];
  /** Greedy next token after each prefill chunk's last token, in order. */
  prefillTokens: number[];
  /** With `logits`: each decode row's logits ([rows, vocab]), for a sampler. */
  decodeLogits?: Float32Array;
  /** With `logits`: each prefill chunk's last row of logits. */
  prefillLogits?: Float32Array[];
}

/**
 * A Llama-style model on the GPU, behind its sequence API. Its weights go up once (upload.ts); each
 * pass replays a plan (plans.ts) of the graph's calls (graph.ts), which read top to bottom as the
 * HF forward does, recording every kernel of the pass into one command buffer submitted once.
 */
export class Model {
  readonly config: ModelConfig;
  readonly kv: KvCache;
  readonly buffers: BufferPool;
  readonly pipelines: PipelineCache;
  /**
   * Dispatches of the last prefill or decode, by kernel role (calls without a role under their
   * kernel name): what the engine really recorded, for checking the cost model's count.
   */
  lastDispatches: Record<string, number> = {};

  private constructor(
    readonly gpu: Gpu,
    /** Whether the model runs the fused graph (ModelOptions.fuse and the families allow it). */
    readonly fused: boolean,
    config: ModelConfig,
    readonly options: ModelOptions,
    buffers: BufferPool,
    pipelines: PipelineCache,
    kv: KvCache,
    /** The pass plans, built on first use of each shape and replayed. */
    private readonly plans: Plans,
  ) {
    this.config = config;
    this.buffers = buffers;
    this.pipelines = pipelines;
    this.kv = kv;
  }

  /** Checks the memory plan against the device limits, then uploads weights and compiles every kernel. */
  static async create(
    gpu: Gpu,
    weights: ModelWeights,
    options: ModelOptions,
    name = 'model',
  ): Promise<Model> {
    const config = weights.config;
    const { layers, heads, kvHeads, headDim } = dims(config);
    if (!Number.isInteger(options.maxBatch) || options.maxBatch < 1 || options.maxBatch > MAX_DECODE_BATCH) {
      throw new InputError(`maxBatch ${options.maxBatch} is outside 1…${MAX_DECODE_BATCH}`);
    }
    checkPlanFits(
      planMemory(config, options.kv, config.maxSeqLen, weightFormatsOf(weights)),
      gpu.limits,
      name,
    );

    const buffers = new BufferPool(gpu);
    const pipelines = options.pipelines ?? new PipelineCache(gpu);
    const ctx: KernelContext = { gpu, pipelines };
    const variants = options.variants ?? DEFAULT_VARIANTS;
    const fused = runsFused(weights, variants, options.fuse !== false);
    const gpuWeights = await uploadWeights(buffers, weights, fused);
    const kv = await KvCache.create(
      buffers,
      { layers, kvHeads, headDim, maxSeqLen: config.maxSeqLen },
      options.kv,
    );

    const attention = {
      heads,
      kvHeads,
      headDim,
      pageSize: kv.pageSize,
      paged: kv.paged,
      kvDtype: kv.dtype,
      window: kv.window,
    };
    const { qkvBias, qkNorm } = archFeatures(config);
    const kernels = await createKernels(
      ctx,
      variants,
      attention,
      { bias: qkvBias, norm: qkNorm },
      gpuWeights.embedding.format,
    );
    // The linear kernels are compiled as the plans need them (LinearKernels).
    const linear = new LinearKernels(
      ctx,
      variants,
      linearFormatsOf(gpuWeights),
      graphFusions(
        fused,
        gpuWeights.layers.some((w) => w.attn.kind === 'split' || w.mlp.kind === 'split'),
      ),
      config.rmsNormEps,
    );
    const graph = { config, fused, kernels, weights: gpuWeights, kv };
    const plans = new Plans(gpu, buffers, graph, linear);
    return new Model(gpu, fused, config, options, buffers, pipelines, kv, plans);
  }

  createSequence(): number {
    return this.kv.allocator.createSequence();
  }

  /** A new sequence sharing all of `seq`'s KV pages (prefix sharing, copy-on-write on divergence). */
  fork(seq: number): number {
    return this.kv.allocator.fork(seq);
  }

  freeSequence(seq: number): void {
    this.kv.allocator.freeSequence(seq);
  }

  /** Tokens whose K/V `seq` holds. */
  sequenceLength(seq: number): number {
    return this.kv.allocator.length(seq);
  }

  /**
   * Speculative decoding's verify pass: appends `tokens` (the pending token and the K drafted ones
   * after it) to `seq` in one command buffer and returns the greedy next token after each of them
   * (and, when asked, every row's logits). Row i attends to the cached context and rows 0…i.
   *
   * It runs on the decode kernels, not the prefill ones: the rows are a decode batch of one
   * sequence at consecutive positions (each row's context length is its own position + 1, which
   * makes the batch causal), in chunks of at most VERIFY_CHUNK rows, the GEMV's batch limit. A
   * chunk reads every weight once; a later chunk attends to the K/V the earlier ones wrote, as a
   * chunked prefill does. The decode kernels sum each row in an order that does not depend on the
   * batch, so a verified row is bit-identical to the same token decoded alone: speculative output
   * equals plain greedy output exactly, with no near-ties to excuse. `truncate` drops the
   * rejected rows' K/V afterwards.
   */
  async verify(
    seq: number,
    tokens: readonly number[],
    options: { logits?: boolean; timing?: Timing } = {},
  ): Promise<DecodeResult> {
    assertAlive(this.gpu);
    if (tokens.length === 0) throw new InputError(`Verify of sequence ${seq} has no tokens`);
    this.checkTokens(tokens);
    const chunks: number[][] = [];
    for (let i = 0; i < tokens.length; i += VERIFY_CHUNK) chunks.push(tokens.slice(i, i + VERIFY_CHUNK));
    // Plans are built (and may compile) before any page is reserved, so a failure leaves the cache alone.
    const plans: DecodePlan[] = [];
    for (const [c, rows] of chunks.entries())
      plans.push(await this.plans.decodePlan(rows.length, `verify${c}`));
    return exclusiveAll(plans, async () => {
      const encoder = this.gpu.device.createCommandEncoder({ label: `verify of ${tokens.length}` });
      const start = this.kv.allocator.length(seq);
      const [slots] = this.kv.appendBatch(encoder, [{ seq, n: tokens.length }]);
      const rows = tokens.map((token, j) => ({ seq, token, position: start + j, slot: slots[j] }));
      this.plans.encodeDecodeRows(encoder, `verify of ${tokens.length}`, rows, plans, options.timing);
      this.lastDispatches = countByRole(plans.flatMap((p) => p.calls));
      this.gpu.device.queue.submit([encoder.finish()]);
      const result = await this.plans.readDecodeRows(plans, tokens.length, options.logits ?? false);
      assertAlive(this.gpu);
      return result;
    });
  }

  /**
   * Rolls `seq` back to its first `length` tokens (rejected draft tokens' K/V are dropped): pages
   * past the new length return to the pool; a shared page is never written (see PageAllocator.truncate).
   */
  truncate(seq: number, length: number): void {
    this.kv.allocator.truncate(seq, length);
  }

  private checkTokens(tokens: readonly number[]): void {
    const bad = tokens.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= this.config.vocabSize);
    if (bad >= 0) {
      throw new InputError(
        `Token ${tokens[bad]} at index ${bad} is not an id in 0…${this.config.vocabSize - 1}`,
      );
    }
  }

  /**
   * Runs the prompt tokens of each sequence through the model, appending their K/V to its cache
   * (after any tokens it already holds: chunked prefill and shared prefixes work the same way).
   * The KV pages of all sequences are reserved first, all or nothing; then every sequence's pass is
   * recorded into one command buffer and submitted once. Each pass replays a prefill plan built on
   * the first call of its shape, so a repeated prefill builds nothing, as a decode step does not.
   */
  async prefill(
    requests: readonly PrefillRequest[],
    logitsMode: LogitsMode = 'last',
    timing?: Timing,
  ): Promise<PrefillResult[]> {
    assertAlive(this.gpu);
    for (const { seq, tokens } of requests) {
      if (tokens.length === 0) throw new InputError(`Prefill of sequence ${seq} has no tokens`);
      this.checkTokens(tokens);
    }
    const starts = requests.map(({ seq }) => this.kv.allocator.length(seq));
    const outRows = (L: number) => (logitsMode === 'all' ? L : 1);
    // Plans are built (and may compile) before any page is reserved, so a failure leaves the cache alone.
    const plans: PrefillPlan[] = [];
    for (const [i, { tokens }] of requests.entries()) {
      plans.push(await this.plans.prefillPlan(i, tokens.length, outRows(tokens.length)));
    }
    // The plans of this call are the most recent, so trimming keeps them.
    this.plans.trimPrefillPlans(Math.max(PREFILL_PLAN_CACHE, plans.length));
    return exclusiveAll(plans, async () => {
      const encoder = this.gpu.device.createCommandEncoder({ label: 'prefill' });
      // Copy-on-write copies are recorded first, before any pass writes into the copied pages.
      const slots = this.kv.appendBatch(
        encoder,
        requests.map(({ seq, tokens }) => ({ seq, n: tokens.length })),
      );
      for (const [i, { seq, tokens }] of requests.entries()) {
        this.plans.encodePrefill(encoder, plans[i], seq, tokens, starts[i], slots[i], timing);
      }
      this.lastDispatches = countByRole(plans.flatMap((p) => [...p.bodyCalls, ...p.headCalls]));
      this.gpu.device.queue.submit([encoder.finish()]);
      const results: PrefillResult[] = [];
      for (const [i, { seq }] of requests.entries()) {
        const plan = plans[i];
        const next = await readNextTokens(plan, plan.outRows);
        const logits =
          logitsMode === 'none'
            ? undefined
            : await readFloat32(this.gpu, plan.logits, plan.outRows * this.config.vocabSize * BYTES.f32);
        results.push({ seq, nextToken: next[plan.outRows - 1], nextTokens: next, logits });
      }
      assertAlive(this.gpu);
      return results;
    });
  }

  /**
   * One decode step for a batch of sequences: each appends one token and gets its greedy next
   * token. The step is one submit of prebuilt calls; only the small per-step tables are written,
   * and only the next token ids are read back (plus the logits when asked for, in tests).
   */
  async decode(
    requests: readonly DecodeRequest[],
    options: { logits?: boolean; timing?: Timing } = {},
  ): Promise<DecodeResult> {
    assertAlive(this.gpu);
    const B = requests.length;
    if (B < 1 || B > this.options.maxBatch) {
      throw new InputError(`Decode batch of ${B} sequences is outside 1…${this.options.maxBatch}`);
    }
    if (new Set(requests.map((r) => r.seq)).size !== B)
      throw new InputError('A sequence appears twice in one decode batch');
    this.checkTokens(requests.map((r) => r.token));
    const plans = await this.plans.decodeChunkPlans(B, 'decode');
    return exclusiveAll(plans, async () => {
      const encoder = this.gpu.device.createCommandEncoder({ label: `decode B=${B}` });
      const positions = requests.map(({ seq }) => this.kv.allocator.length(seq));
      const slots = this.kv.appendBatch(
        encoder,
        requests.map(({ seq }) => ({ seq, n: 1 })),
      );
      const rows = requests.map(({ seq, token }, b) => ({
        seq,
        token,
        position: positions[b],
        slot: slots[b][0],
      }));
      this.plans.encodeDecodeRows(encoder, `decode B=${B}`, rows, plans, options.timing);
      this.lastDispatches = countByRole(plans.flatMap((p) => p.calls));
      this.gpu.device.queue.submit([encoder.finish()]);
      const result = await this.plans.readDecodeRows(plans, B, options.logits ?? false);
      assertAlive(this.gpu);
      return result;
    });
  }

  /**
   * One step of a serving loop: decode rows for running sequences and prefill chunks of admitted
   * ones, recorded into one command buffer and submitted once (chunked prefill mixed with decode).
   * Every KV page is reserved first, all or nothing. A sequence may appear once in the step. A
   * prefill chunk continues its sequence's cache; its next token is meaningful only for the chunk
   * that ends the prompt.
   */
  async step(request: StepRequest, options: { timing?: Timing; logits?: boolean } = {}): Promise<StepResult> {
    assertAlive(this.gpu);
    const { decodes, prefills } = request;
    if (decodes.length === 0 && prefills.length === 0)
      throw new InputError('An engine step has nothing to run');
    if (decodes.length > this.options.maxBatch) {
      throw new InputError(
        `Decode batch of ${decodes.length} sequences is outside 1…${this.options.maxBatch}`,
      );
    }
    const seqs = [...decodes.map((r) => r.seq), ...prefills.map((r) => r.seq)];
    if (new Set(seqs).size !== seqs.length)
      throw new InputError('A sequence appears twice in one engine step');
    this.checkTokens(decodes.map((r) => r.token));
    for (const { seq, tokens } of prefills) {
      if (tokens.length === 0) throw new InputError(`Prefill of sequence ${seq} has no tokens`);
      this.checkTokens(tokens);
    }
    const starts = prefills.map(({ seq }) => this.kv.allocator.length(seq));
    const decodePlans = decodes.length > 0 ? await this.plans.decodeChunkPlans(decodes.length, 'decode') : [];
    const prefillPlans: PrefillPlan[] = [];
    for (const [i, { tokens }] of prefills.entries()) {
      prefillPlans.push(await this.plans.prefillPlan(i, tokens.length, 1));
    }
    this.plans.trimPrefillPlans(Math.max(PREFILL_PLAN_CACHE, prefillPlans.length));
    return exclusiveAll([...decodePlans, ...prefillPlans], async () => {
      const encoder = this.gpu.device.createCommandEncoder({ label: 'engine step' });
      const positions = decodes.map(({ seq }) => this.kv.allocator.length(seq));
      const slots = this.kv.appendBatch(encoder, [
        ...decodes.map(({ seq }) => ({ seq, n: 1 })),
        ...prefills.map(({ seq, tokens }) => ({ seq, n: tokens.length })),
      ]);
      const rows = decodes.map(({ seq, token }, b) => ({
        seq,
        token,
        position: positions[b],
        slot: slots[b][0],
      }));
      if (rows.length > 0)
        this.plans.encodeDecodeRows(
          encoder,
          `step decode B=${rows.length}`,
          rows,
          decodePlans,
          options.timing,
        );
      for (const [i, { seq, tokens }] of prefills.entries()) {
        this.plans.encodePrefill(
          encoder,
          prefillPlans[i],
          seq,
          tokens,
          starts[i],
          slots[decodes.length + i],
          options.timing,
        );
      }
      this.lastDispatches = countByRole([
        ...decodePlans.flatMap((p) => p.calls),
        ...prefillPlans.flatMap((p) => [...p.bodyCalls, ...p.headCalls]),
      ]);
      this.gpu.device.queue.submit([encoder.finish()]);
      const wantLogits = options.logits ?? false;
      const read = await this.plans.readDecodeRows(decodePlans, decodes.length, wantLogits);
      const decodeTokens = read.nextTokens;
      const prefillTokens: number[] = [];
      const prefillLogits: Float32Array[] = [];
      for (const plan of prefillPlans) {
        prefillTokens.push((await readNextTokens(plan, 1))[0]);
        if (wantLogits)
          prefillLogits.push(await readFloat32(this.gpu, plan.logits, this.config.vocabSize * BYTES.f32));
      }
      assertAlive(this.gpu);
      return wantLogits
        ? { decodeTokens, prefillTokens, decodeLogits: read.logits ?? new Float32Array(0), prefillLogits }
        : { decodeTokens, prefillTokens };
    });
  }

  /** Frees every GPU buffer of the model. */
  destroy(): void {
    this.plans.destroy();
    this.buffers.destroyAll();
  }
}
