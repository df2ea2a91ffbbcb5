import { InputError } from '../errors.ts';
import { BufferPool, BufferUsage, readFloat32 } from '../gpu/buffers.ts';
import { assertAlive, type Gpu } from '../gpu/device.ts';
import { PipelineCache } from '../gpu/pipelines.ts';
import type { Timing } from '../gpu/profiler.ts';
import {
  PagedAttentionDecodeKernel,
  PagedAttentionPrefillKernel,
  PREFILL_START_OFFSET,
} from '../kernels/attention.ts';
import { EmbeddingKernel, ResidualAddKernel, RopeKernel, SwigluKernel } from '../kernels/elementwise.ts';
import { type LinearFusion, PLAIN } from '../kernels/fuse.ts';
import { GEMV_LIMITS, GemvKernel } from '../kernels/gemv.ts';
import {
  disposeCalls,
  encodePasses,
  type KernelCall,
  type KernelContext,
  withRole,
} from '../kernels/kernel.ts';
import { KvWriteKernel, RopeKvWriteKernel } from '../kernels/kv-write.ts';
import { MAX_DECODE_BATCH } from '../kernels/limits.ts';
import { MatmulKernel } from '../kernels/matmul.ts';
import { PackedGemvKernel, PackedMatmulKernel } from '../kernels/packed.ts';
import { KERNEL_ROLES } from '../kernels/roles.ts';
import { ArgmaxKernel, RmsNormKernel } from '../kernels/rowwise.ts';
import { DEFAULT_VARIANTS, graphFuses, type KernelVariants } from '../kernels/variants.ts';
import { KvCache, type KvCacheOptions } from '../kv/cache.ts';
import { BYTES, type PackedFormat, type WeightFormat } from '../weight-format.ts';
import { dims, type ModelConfig } from './config.ts';
import { concatRows, interleaveRows, type RowTensor } from './fused.ts';
import { checkPlanFits, planMemory } from './plan.ts';
import { ropeTable } from './rope.ts';
import { get, LM_HEAD, type ModelWeights, tensorSpecs, weightFormatsOf } from './weights.ts';

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

/**
 * The fusions the fused graph's linear kernels run (fuse.ts): the q/k/v and the LM head with the
 * RMSNorm before them, the o and down projections with the residual add, gate/up with the norm and
 * SwiGLU. The unfused graph runs every product plain.
 */
const FUSIONS = {
  plain: PLAIN,
  norm: { norm: true, epilogue: 'store' },
  add: { norm: false, epilogue: 'add' },
  normSwiglu: { norm: true, epilogue: 'swiglu' },
} as const satisfies Record<string, LinearFusion>;
type FusionKey = keyof typeof FUSIONS;

/** The fusion keys a graph's products use. */
const GRAPH_FUSIONS: Record<'fused' | 'unfused', readonly FusionKey[]> = {
  fused: ['norm', 'add', 'normSwiglu'],
  unfused: ['plain'],
};

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

/**
 * A linear weight W[N, K] on the GPU: f32 floats, or a packed format's words and, for int8 and
 * int4, its scales (src/model/formats.ts has the layout).
 */
interface LinearWeight {
  format: WeightFormat;
  w: GPUBuffer;
  scales?: GPUBuffer;
}

/**
 * A layer's weights. The unfused graph holds each projection as loaded; the fused graph holds
 * [Wq; Wk; Wv] as one weight and gate/up interleaved (src/model/fused.ts), each in one format.
 */
interface LayerBuffers {
  inputNorm: GPUBuffer; // [d]
  attn:
    | { kind: 'split'; wq: LinearWeight; wk: LinearWeight; wv: LinearWeight } // [qWidth | kvWidth, d]
    | { kind: 'fused'; wqkv: LinearWeight }; // [qWidth + 2 kvWidth, d]
  wo: LinearWeight; // [d, qWidth]
  postNorm: GPUBuffer; // [d]
  mlp:
    | { kind: 'split'; wGate: LinearWeight; wUp: LinearWeight } // [ffn, d]
    | { kind: 'fused'; wGateUp: LinearWeight }; // [2 ffn, d], gate row j at 2j, up row j at 2j + 1
  wDown: LinearWeight; // [d, ffn]
}

/**
 * Records y[M, N] = x[M, K] · W[N, K]ᵀ with the kernel for W's format and, in the fused graph, a
 * fusion: `gamma` is the fused RMSNorm's weight (with the 'norm' fusions).
 */
type LinearCall = (
  x: GPUBuffer,
  w: LinearWeight,
  y: GPUBuffer,
  N: number,
  K: number,
  fuse?: { key: FusionKey; gamma?: GPUBuffer },
) => KernelCall;

interface Kernels {
  embedding: EmbeddingKernel;
  rmsNorm: RmsNormKernel;
  rope: RopeKernel;
  add: ResidualAddKernel;
  swiglu: SwigluKernel;
  argmax: ArgmaxKernel;
  /** The f32 prefill matmuls, by fusion key; compiled as the prefill plans need them. */
  matmul: Map<string, MatmulKernel>;
  /** The f32 decode GEMVs, by batch and fusion key (compiled per batch). */
  gemv: Map<string, GemvKernel>;
  /** The packed formats' prefill matmuls, by format and fusion key. */
  packedMatmul: Map<string, PackedMatmulKernel>;
  /** The packed formats' decode GEMVs, by format, batch and fusion key (compiled per batch). */
  packedGemv: Map<string, PackedGemvKernel>;
  kvWrite: KvWriteKernel;
  ropeKvWrite: RopeKvWriteKernel;
  attentionPrefill: PagedAttentionPrefillKernel;
  attentionDecode: PagedAttentionDecodeKernel;
}

/**
 * The activations of one pass, each [rows, width]: what the shared transformer body reads and
 * writes. The unfused graph uses `split`; the fused one `qkv` instead (its normed rows, projections
 * before the residual add and gate/up outputs are never written).
 */
interface PassBuffers {
  tokens: GPUBuffer; // u32[rows]
  positions: GPUBuffer; // u32[rows]
  slots: GPUBuffer; // u32[rows] KV slot of each token
  x: GPUBuffer; // [rows, d] residual stream
  q: GPUBuffer; // [rows, heads, headDim]
  attn: GPUBuffer; // [rows, heads, headDim]
  act: GPUBuffer; // [rows, ffn]
  split?: {
    h: GPUBuffer; // [rows, d] normed
    k: GPUBuffer; // [rows, kvHeads, headDim]
    v: GPUBuffer; // [rows, kvHeads, headDim]
    proj: GPUBuffer; // [rows, d]
    gate: GPUBuffer; // [rows, ffn]
    up: GPUBuffer; // [rows, ffn]
  };
  qkv?: GPUBuffer; // [rows, heads + 2 kvHeads, headDim]
}

/** What every pass plan has: its inputs, its sampled tokens, and a guard against overlapping use. */
interface PlanIo {
  label: string;
  inFlight: boolean;
  tokens: GPUBuffer; // u32[rows]
  positions: GPUBuffer; // u32[rows]
  slots: GPUBuffer; // u32[rows] KV slot of each token
  logits: GPUBuffer; // [outRows, vocab]
  next: GPUBuffer; // u32[outRows]
  nextReadback: GPUBuffer; // u32[outRows], MAP_READ
}

/** Per-batch-size decode state: every buffer and recorded call, built once and replayed each step. */
interface DecodePlan extends PlanIo {
  batch: number;
  tables: GPUBuffer; // u32[B, tableStride]
  lengths: GPUBuffer; // u32[B]
  calls: KernelCall[];
}

/** The `count` sampled token ids a submitted pass copied into its plan's readback buffer. */
async function readNextTokens(plan: PlanIo, count: number): Promise<number[]> {
  const bytes = count * BYTES.u32;
  await plan.nextReadback.mapAsync(GPUMapMode.READ, 0, bytes);
  const ids = [...new Uint32Array(plan.nextReadback.getMappedRange(0, bytes).slice(0))];
  plan.nextReadback.unmap();
  return ids;
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
 * Most rows of one decode chunk: the GEMV's batch limit. A decode batch or a verify of more rows
 * runs in several chunks in one command buffer, each reading the weights once more (the knee of
 * the verify-K curve and the B-scaling sweep show it).
 */
export const DECODE_CHUNK = GEMV_LIMITS.maxBatch;
export const VERIFY_CHUNK = DECODE_CHUNK;

/** One row of a decode chunk: a token appended to `seq` at `position`, its K/V into `slot`. */
interface DecodeRow {
  seq: number;
  token: number;
  position: number;
  slot: number;
}

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
}

/** Prefill plans kept at once; each holds the activations of one prompt length. */
const PREFILL_PLAN_CACHE = 4;

/** One prefill pass's buffers and calls, built once per shape and replayed (see Model.prefillPlan). */
interface PrefillPlan extends PlanIo {
  /** The attention calls' parameter blocks: `start` is rewritten in them before each pass. */
  attentionParams: GPUBuffer[];
  outRows: number;
  blockTable: GPUBuffer; // u32[tableStride]
  /** The last position's hidden row, copied out for the one-row LM head. */
  lastRow?: { from: GPUBuffer; offset: number; to: GPUBuffer; bytes: number };
  bodyCalls: KernelCall[];
  headCalls: KernelCall[];
  /** Every pooled buffer the plan holds, released when it is dropped. */
  owned: GPUBuffer[];
}

/**
 * A Llama-style model on the GPU. `prefill` and `decode` read top to bottom as the HF forward does;
 * each records every kernel of the pass into one command buffer and submits it once.
 */
export class Model {
  readonly config: ModelConfig;
  readonly kv: KvCache;
  readonly buffers: BufferPool;
  readonly pipelines: PipelineCache;
  private readonly decodePlans = new Map<string, DecodePlan>();
  private readonly prefillPlans = new Map<string, PrefillPlan>();
  /**
   * Dispatches of the last prefill or decode, by kernel role (calls without a role under their
   * kernel name): what the engine really recorded, for checking the cost model's count.
   */
  lastDispatches: Record<string, number> = {};

  private constructor(
    readonly gpu: Gpu,
    /** Whether the model runs the fused graph (ModelOptions.fuse and the families allow it). */
    readonly fused: boolean,
    /** The packed formats its weights hold. */
    private readonly packedFormats: ReadonlySet<PackedFormat>,
    config: ModelConfig,
    readonly options: ModelOptions,
    buffers: BufferPool,
    pipelines: PipelineCache,
    kv: KvCache,
    private readonly ctx: KernelContext,
    private readonly kernels: Kernels,
    private readonly embedding: GPUBuffer, // [vocab, d]
    private readonly layers: LayerBuffers[],
    private readonly finalNorm: GPUBuffer, // [d]
    private readonly lmHead: LinearWeight, // [vocab, d]
    private readonly ropeCos: GPUBuffer, // [maxSeqLen, headDim/2]
    private readonly ropeSin: GPUBuffer, // [maxSeqLen, headDim/2]
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
    const packedFormats = new Set([...(weights.packed?.values() ?? [])].map((p) => p.format));
    const upload = (tensor: string) => buffers.upload(tensor, get(weights, tensor));
    // A linear weight goes up in its format: the packed words and scales when it has them.
    const uploadRows = async (label: string, t: RowTensor): Promise<LinearWeight> => {
      if ('f32' in t) return { format: 'f32', w: await buffers.upload(label, t.f32) };
      const p = t.packed;
      return {
        format: p.format,
        w: await buffers.upload(`${label} (${p.format})`, p.words),
        scales: p.scales.length > 0 ? await buffers.upload(`${label} scales`, p.scales) : undefined,
      };
    };
    const rowsOf = (tensor: string): RowTensor => {
      const p = weights.packed?.get(tensor);
      if (p) return { N: p.N, K: p.K, packed: p };
      const spec = tensorSpecs(config).find((t) => t.name === tensor);
      const [N, K] = spec?.shape ?? [0, 0];
      return { N, K, f32: get(weights, tensor) };
    };
    const linear = (tensor: string) => uploadRows(tensor, rowsOf(tensor));
    // The fused graph needs families that take its fusions, and q/k/v (and gate/up) of a layer in one
    // format each, since each group becomes one weight; otherwise the model runs unfused.
    const sameFormat = (names: string[]) =>
      new Set(names.map((n) => weights.packed?.get(n)?.format ?? 'f32')).size === 1;
    const fused =
      options.fuse !== false &&
      graphFuses(variants, packedFormats.size > 0) &&
      Array.from({ length: layers }, (_, l) => `model.layers.${l}`).every(
        (p) =>
          sameFormat([
            `${p}.self_attn.q_proj.weight`,
            `${p}.self_attn.k_proj.weight`,
            `${p}.self_attn.v_proj.weight`,
          ]) && sameFormat([`${p}.mlp.gate_proj.weight`, `${p}.mlp.up_proj.weight`]),
      );
    for (const spec of tensorSpecs(config)) {
      if (spec.shape.length === 2 && spec.shape[1] % 4 !== 0) {
        throw new InputError(`${spec.name}: inner width ${spec.shape[1]} is not a multiple of 4`);
      }
    }
    const embedding = await upload('model.embed_tokens.weight');
    const layerBuffers: LayerBuffers[] = [];
    for (let l = 0; l < layers; l++) {
      const p = `model.layers.${l}`;
      const [q, k, v] = ['q', 'k', 'v'].map((n) => `${p}.self_attn.${n}_proj.weight`);
      const [gate, up] = ['gate', 'up'].map((n) => `${p}.mlp.${n}_proj.weight`);
      layerBuffers.push({
        inputNorm: await upload(`${p}.input_layernorm.weight`),
        attn: fused
          ? {
              kind: 'fused',
              wqkv: await uploadRows(`${p} qkv`, concatRows(`${p} q/k/v`, [q, k, v].map(rowsOf))),
            }
          : { kind: 'split', wq: await linear(q), wk: await linear(k), wv: await linear(v) },
        wo: await linear(`${p}.self_attn.o_proj.weight`),
        postNorm: await upload(`${p}.post_attention_layernorm.weight`),
        mlp: fused
          ? {
              kind: 'fused',
              wGateUp: await uploadRows(
                `${p} gate/up`,
                interleaveRows(`${p} gate/up`, rowsOf(gate), rowsOf(up)),
              ),
            }
          : { kind: 'split', wGate: await linear(gate), wUp: await linear(up) },
        wDown: await linear(`${p}.mlp.down_proj.weight`),
      });
    }
    const finalNorm = await upload('model.norm.weight');
    // A tied head in f32 is the embedding buffer itself; packed, it is its own packed copy.
    const lmHead: LinearWeight =
      config.tieWordEmbeddings && !weights.packed?.has(LM_HEAD)
        ? { format: 'f32', w: embedding }
        : await linear(LM_HEAD);
    const table = ropeTable(config);
    const ropeCos = await buffers.upload('rope cos', table.cos);
    const ropeSin = await buffers.upload('rope sin', table.sin);
    const kv = await KvCache.create(
      buffers,
      { layers, kvHeads, headDim, maxSeqLen: config.maxSeqLen },
      options.kv,
    );

    const attention = { heads, kvHeads, headDim, pageSize: kv.pageSize, paged: kv.paged };
    const kernels: Kernels = {
      embedding: await EmbeddingKernel.create(ctx),
      rmsNorm: await RmsNormKernel.create(ctx, variants.rmsnorm),
      rope: await RopeKernel.create(ctx),
      add: await ResidualAddKernel.create(ctx),
      swiglu: await SwigluKernel.create(ctx),
      argmax: await ArgmaxKernel.create(ctx),
      matmul: new Map(),
      gemv: new Map(),
      packedMatmul: new Map(),
      packedGemv: new Map(),
      kvWrite: await KvWriteKernel.create(ctx),
      ropeKvWrite: await RopeKvWriteKernel.create(ctx),
      attentionPrefill: await PagedAttentionPrefillKernel.create(ctx, attention, variants.attentionPrefill),
      attentionDecode: await PagedAttentionDecodeKernel.create(ctx, attention, variants.attentionDecode),
    };
    // The linear kernels are compiled as the plans need them (matmulLinear, gemvLinear).
    return new Model(
      gpu,
      fused,
      packedFormats,
      config,
      options,
      buffers,
      pipelines,
      kv,
      ctx,
      kernels,
      embedding,
      layerBuffers,
      finalNorm,
      lmHead,
      ropeCos,
      ropeSin,
    );
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
    for (const [c, rows] of chunks.entries()) plans.push(await this.decodePlan(rows.length, `verify${c}`));
    return this.exclusiveAll(plans, async () => {
      const encoder = this.gpu.device.createCommandEncoder({ label: `verify of ${tokens.length}` });
      const start = this.kv.allocator.length(seq);
      const [slots] = this.kv.appendBatch(encoder, [{ seq, n: tokens.length }]);
      const rows = tokens.map((token, j) => ({ seq, token, position: start + j, slot: slots[j] }));
      this.encodeDecodeRows(encoder, `verify of ${tokens.length}`, rows, plans, options.timing);
      this.lastDispatches = countByRole(plans.flatMap((p) => p.calls));
      this.gpu.device.queue.submit([encoder.finish()]);
      const result = await this.readDecodeRows(plans, tokens.length, options.logits ?? false);
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
      plans.push(await this.prefillPlan(i, tokens.length, outRows(tokens.length)));
    }
    // The plans of this call are the most recent, so trimming keeps them.
    this.trimPrefillPlans(Math.max(PREFILL_PLAN_CACHE, plans.length));
    return this.exclusiveAll(plans, async () => {
      const encoder = this.gpu.device.createCommandEncoder({ label: 'prefill' });
      // Copy-on-write copies are recorded first, before any pass writes into the copied pages.
      const slots = this.kv.appendBatch(
        encoder,
        requests.map(({ seq, tokens }) => ({ seq, n: tokens.length })),
      );
      for (const [i, { seq, tokens }] of requests.entries()) {
        this.encodePrefill(encoder, plans[i], seq, tokens, starts[i], slots[i], timing);
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

  /** Records one prefill pass of `tokens` after `start` cached ones (slots already reserved). */
  private encodePrefill(
    encoder: GPUCommandEncoder,
    plan: PrefillPlan,
    seq: number,
    tokens: readonly number[],
    start: number,
    slots: readonly number[],
    timing: Timing | undefined,
  ): void {
    const queue = this.gpu.device.queue;
    queue.writeBuffer(plan.tokens, 0, new Uint32Array(tokens));
    queue.writeBuffer(plan.positions, 0, new Uint32Array(tokens.map((_, j) => start + j)));
    queue.writeBuffer(plan.slots, 0, new Uint32Array(slots));
    queue.writeBuffer(plan.blockTable, 0, new Uint32Array(this.kv.paddedTable(seq)));
    for (const params of plan.attentionParams)
      queue.writeBuffer(params, PREFILL_START_OFFSET, new Uint32Array([start]));
    encodePasses(encoder, `prefill seq ${seq} L=${tokens.length}`, plan.bodyCalls, timing);
    if (plan.lastRow)
      encoder.copyBufferToBuffer(
        plan.lastRow.from,
        plan.lastRow.offset,
        plan.lastRow.to,
        0,
        plan.lastRow.bytes,
      );
    encodePasses(encoder, `prefill seq ${seq} head`, plan.headCalls, timing);
    encoder.copyBufferToBuffer(plan.next, 0, plan.nextReadback, 0, plan.outRows * BYTES.u32);
  }

  /**
   * Records decode rows (their K/V slots already reserved) as consecutive chunks, one per plan,
   * each plan holding exactly its chunk's rows. Each row attends to its own sequence's pages up to
   * its own position, so rows of one sequence at consecutive positions (a verify) are causal.
   */
  private encodeDecodeRows(
    encoder: GPUCommandEncoder,
    label: string,
    rows: readonly DecodeRow[],
    plans: readonly DecodePlan[],
    timing: Timing | undefined,
  ): void {
    const queue = this.gpu.device.queue;
    let offset = 0;
    for (const plan of plans) {
      const chunk = rows.slice(offset, offset + plan.batch);
      queue.writeBuffer(plan.tokens, 0, new Uint32Array(chunk.map((r) => r.token)));
      queue.writeBuffer(plan.positions, 0, new Uint32Array(chunk.map((r) => r.position)));
      queue.writeBuffer(plan.slots, 0, new Uint32Array(chunk.map((r) => r.slot)));
      queue.writeBuffer(plan.tables, 0, new Uint32Array(chunk.flatMap((r) => this.kv.paddedTable(r.seq))));
      queue.writeBuffer(plan.lengths, 0, new Uint32Array(chunk.map((r) => r.position + 1)));
      encodePasses(encoder, `${label} rows ${offset}…${offset + chunk.length - 1}`, plan.calls, timing);
      encoder.copyBufferToBuffer(plan.next, 0, plan.nextReadback, 0, chunk.length * BYTES.u32);
      offset += chunk.length;
    }
  }

  /** Reads back what encodeDecodeRows' chunks produced: every row's next token, and its logits if asked. */
  private async readDecodeRows(plans: readonly DecodePlan[], count: number, withLogits: boolean) {
    const nextTokens: number[] = [];
    const vocab = this.config.vocabSize;
    const logits = withLogits ? new Float32Array(count * vocab) : undefined;
    let offset = 0;
    for (const plan of plans) {
      nextTokens.push(...(await readNextTokens(plan, plan.batch)));
      if (logits)
        logits.set(await readFloat32(this.gpu, plan.logits, plan.batch * vocab * BYTES.f32), offset * vocab);
      offset += plan.batch;
    }
    return { nextTokens, logits };
  }

  /** The decode plans of `count` rows in chunks of DECODE_CHUNK; `use` keeps apart plans that share a command buffer. */
  private async decodeChunkPlans(count: number, use: string): Promise<DecodePlan[]> {
    const plans: DecodePlan[] = [];
    for (let c = 0, left = count; left > 0; c++, left -= DECODE_CHUNK) {
      plans.push(await this.decodePlan(Math.min(DECODE_CHUNK, left), `${use}${c === 0 ? '' : c}`));
    }
    return plans;
  }

  /**
   * One step of a serving loop: decode rows for running sequences and prefill chunks of admitted
   * ones, recorded into one command buffer and submitted once (chunked prefill mixed with decode).
   * Every KV page is reserved first, all or nothing. A sequence may appear once in the step. A
   * prefill chunk continues its sequence's cache; its next token is meaningful only for the chunk
   * that ends the prompt.
   */
  async step(request: StepRequest, options: { timing?: Timing } = {}): Promise<StepResult> {
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
    const decodePlans = decodes.length > 0 ? await this.decodeChunkPlans(decodes.length, 'decode') : [];
    const prefillPlans: PrefillPlan[] = [];
    for (const [i, { tokens }] of prefills.entries()) {
      prefillPlans.push(await this.prefillPlan(i, tokens.length, 1));
    }
    this.trimPrefillPlans(Math.max(PREFILL_PLAN_CACHE, prefillPlans.length));
    return this.exclusiveAll([...decodePlans, ...prefillPlans], async () => {
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
        this.encodeDecodeRows(encoder, `step decode B=${rows.length}`, rows, decodePlans, options.timing);
      for (const [i, { seq, tokens }] of prefills.entries()) {
        this.encodePrefill(
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
      const decodeTokens = (await this.readDecodeRows(decodePlans, decodes.length, false)).nextTokens;
      const prefillTokens: number[] = [];
      for (const plan of prefillPlans) prefillTokens.push((await readNextTokens(plan, 1))[0]);
      assertAlive(this.gpu);
      return { decodeTokens, prefillTokens };
    });
  }

  /** `exclusive` over several plans at once (a prefill of several sequences). */
  private async exclusiveAll<T>(plans: readonly PlanIo[], body: () => Promise<T>): Promise<T> {
    const [first, ...rest] = plans;
    if (!first) return body();
    return this.exclusive(first, () => this.exclusiveAll(rest, body));
  }

  /**
   * The buffers and calls of one prefill pass of L tokens, built once and replayed whatever the
   * tokens cached before them: the attention calls' `start` is written into their parameter blocks
   * before each pass (encodePrefill), so a chunked prefill or a prefix-cache hit at a new position
   * builds nothing inside a timed step. Kept per (position in the request list, L, output rows);
   * the least recently used plans are dropped beyond PREFILL_PLAN_CACHE entries.
   */
  private async prefillPlan(index: number, L: number, outRows: number): Promise<PrefillPlan> {
    const key = `${index}:${L}:${outRows}`;
    const cached = this.prefillPlans.get(key);
    if (cached) {
      this.prefillPlans.delete(key); // re-insert: the Map's order is the recency order
      this.prefillPlans.set(key, cached);
      return cached;
    }
    const { d, vocab } = dims(this.config);
    const k = this.kernels;
    const R = KERNEL_ROLES;
    const owned: GPUBuffer[] = [];
    const f32 = (label: string, floats: number) => {
      const b = this.buffers.acquire(`prefill L=${L} ${label}`, floats * BYTES.f32);
      owned.push(b);
      return b;
    };
    const u32 = (label: string, n: number) => {
      const b = this.buffers.acquire(`prefill L=${L} ${label}`, n * BYTES.u32);
      owned.push(b);
      return b;
    };
    const tokens = u32('tokens', L); // u32[L]
    const positions = u32('positions', L); // u32[L]
    const slots = u32('kv slots', L); // u32[L]
    const blockTable = u32('block table', this.kv.tableStride); // u32[tableStride]
    const pass = await this.passBuffers(L, f32, { tokens, positions, slots });
    const logits = f32('logits', outRows * vocab); // [outRows, vocab]
    const next = u32('next token', outRows); // u32[outRows]
    const nextReadback = this.buffers.acquire(
      `prefill L=${L} next readback`,
      outRows * BYTES.u32,
      BufferUsage.readback,
    ); // u32[outRows], MAP_READ
    owned.push(nextReadback);

    const matmul = await this.matmulLinear(L);
    const bodyCalls = this.bodyCalls(L, pass, matmul, (pool) =>
      k.attentionPrefill.call({ q: pass.q, pool, blockTable, out: pass.attn, L, start: 0 }),
    );
    // The LM head: every row for 'all'; otherwise only the last position's logits are needed to
    // continue, so its row is copied out and goes through a GEMV. Its input is the final norm's
    // output (unfused), or the residual stream that the head normalises itself (fused).
    const hidden = this.headInput(pass);
    let headIn = hidden;
    let lastRow: PrefillPlan['lastRow'];
    if (outRows === 1) {
      headIn = f32('last hidden', d); // [1, d]
      lastRow = { from: hidden, offset: (L - 1) * d * BYTES.f32, to: headIn, bytes: d * BYTES.f32 };
    }
    const head = outRows === 1 ? await this.gemvLinear(1) : matmul;
    const headCalls = [
      withRole(R.lmHead, head(headIn, this.lmHead, logits, vocab, d, this.headFusion())),
      withRole(R.argmax, k.argmax.call({ x: logits, out: next, rows: outRows, n: vocab })),
    ];
    const plan: PrefillPlan = {
      label: `prefill of ${L} tokens`,
      attentionParams: bodyCalls.filter((c) => c.role === R.attention).map((c) => c.owned[0]),
      inFlight: false,
      outRows,
      tokens,
      positions,
      slots,
      blockTable,
      logits,
      next,
      nextReadback,
      lastRow,
      bodyCalls,
      headCalls,
      owned,
    };
    this.prefillPlans.set(key, plan);
    return plan;
  }

  /** Drops the least recently used prefill plans beyond `keep` (never one a pass is using). */
  private trimPrefillPlans(keep: number): void {
    for (const [key, plan] of this.prefillPlans) {
      if (this.prefillPlans.size <= keep) break;
      if (plan.inFlight) continue;
      this.prefillPlans.delete(key);
      this.disposePrefillPlan(plan);
    }
  }

  private disposePrefillPlan(plan: PrefillPlan): void {
    disposeCalls(plan.bodyCalls);
    disposeCalls(plan.headCalls);
    for (const b of plan.owned) this.buffers.release(b);
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
    const plans = await this.decodeChunkPlans(B, 'decode');
    return this.exclusiveAll(plans, async () => {
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
      this.encodeDecodeRows(encoder, `decode B=${B}`, rows, plans, options.timing);
      this.lastDispatches = countByRole(plans.flatMap((p) => p.calls));
      this.gpu.device.queue.submit([encoder.finish()]);
      const result = await this.readDecodeRows(plans, B, options.logits ?? false);
      assertAlive(this.gpu);
      return result;
    });
  }

  /**
   * Runs `body` with `plan` marked in use. A plan's buffers (and its mapped readback) serve one pass
   * at a time; a second pass of the same shape started before the first was awaited would overwrite
   * its inputs and map its readback twice, so it is refused with a clear error instead.
   */
  private async exclusive<T>(plan: PlanIo, body: () => Promise<T>): Promise<T> {
    if (plan.inFlight) {
      throw new InputError(
        `A ${plan.label} is already in flight on this model; await it before starting another of the same shape.`,
      );
    }
    plan.inFlight = true;
    try {
      return await body();
    } finally {
      plan.inFlight = false;
    }
  }

  /**
   * Builds (once per batch size and use) the buffers and every call of a decode step. `use` keeps
   * apart plans that run in one command buffer: the decode step, and each chunk of a verify pass.
   */
  private async decodePlan(B: number, use = 'decode'): Promise<DecodePlan> {
    const key = `${use}:${B}`;
    const existing = this.decodePlans.get(key);
    if (existing) return existing;
    const { d, vocab } = dims(this.config);
    const k = this.kernels;
    const R = KERNEL_ROLES;
    const alloc = (label: string, floats: number, usage: GPUBufferUsageFlags = BufferUsage.storage) =>
      this.buffers.allocate(`${use} B=${B} ${label}`, floats * BYTES.f32, usage);
    const tokens = await alloc('tokens', B); // u32[B]
    const positions = await alloc('positions', B); // u32[B]
    const slots = await alloc('kv slots', B); // u32[B]
    const tables = await alloc('block tables', B * this.kv.tableStride); // u32[B, tableStride]
    const lengths = await alloc('lengths', B); // u32[B]
    const pass = await this.passBuffers(B, (label, floats) => alloc(label, floats), {
      tokens,
      positions,
      slots,
    });
    const logits = await alloc('logits', B * vocab); // [B, vocab]
    const next = await alloc('next', B); // u32[B]
    const nextReadback = await alloc('next readback', B, BufferUsage.readback); // u32[B]
    const gemvB = await this.gemvLinear(B);

    const calls = this.bodyCalls(B, pass, gemvB, (pool) =>
      k.attentionDecode.call({
        q: pass.q,
        pool,
        blockTables: tables,
        seqLens: lengths,
        out: pass.attn,
        batch: B,
        tableStride: this.kv.tableStride,
      }),
    );
    calls.push(
      withRole(R.lmHead, gemvB(this.headInput(pass), this.lmHead, logits, vocab, d, this.headFusion())),
      withRole(R.argmax, k.argmax.call({ x: logits, out: next, rows: B, n: vocab })),
    );
    const plan: DecodePlan = {
      batch: B,
      label: use === 'decode' ? `decode step of batch ${B}` : `${use} of ${B} rows`,
      inFlight: false,
      tokens,
      positions,
      slots,
      tables,
      lengths,
      logits,
      next,
      nextReadback,
      calls,
    };
    this.decodePlans.set(key, plan);
    return plan;
  }

  /**
   * The activation buffers of a pass over `rows` tokens, for this model's graph. `alloc` names and
   * sizes each ([rows, width] f32).
   */
  private async passBuffers(
    rows: number,
    alloc: (label: string, floats: number) => GPUBuffer | Promise<GPUBuffer>,
    io: { tokens: GPUBuffer; positions: GPUBuffer; slots: GPUBuffer },
  ): Promise<PassBuffers> {
    const { d, ffn, qWidth, kvWidth } = dims(this.config);
    const common = {
      ...io,
      x: await alloc('x', rows * d), // [rows, d] residual stream
      q: await alloc('q', rows * qWidth), // [rows, heads, headDim]
      attn: await alloc('attn', rows * qWidth), // [rows, heads, headDim]
      act: await alloc('act', rows * ffn), // [rows, ffn]
    };
    if (this.fused) return { ...common, qkv: await alloc('qkv', rows * (qWidth + 2 * kvWidth)) };
    return {
      ...common,
      split: {
        h: await alloc('h', rows * d), // [rows, d] normed
        k: await alloc('k', rows * kvWidth), // [rows, kvHeads, headDim]
        v: await alloc('v', rows * kvWidth), // [rows, kvHeads, headDim]
        proj: await alloc('proj', rows * d), // [rows, d]
        gate: await alloc('gate', rows * ffn), // [rows, ffn]
        up: await alloc('up', rows * ffn), // [rows, ffn]
      },
    };
  }

  /** What the LM head reads: the final norm's output (unfused) or the residual stream (fused). */
  private headInput(b: PassBuffers): GPUBuffer {
    return b.split ? b.split.h : b.x;
  }

  /** The LM head's fusion: the final RMSNorm in its prologue in the fused graph. */
  private headFusion(): { key: FusionKey; gamma?: GPUBuffer } {
    return this.fused ? { key: 'norm', gamma: this.finalNorm } : { key: 'plain' };
  }

  /**
   * The transformer body both passes share, for `rows` tokens: embedding, then every layer, then
   * (unfused) the final RMSNorm. Only the projection kernel (matmul for prefill, GEMV for decode)
   * and the attention call differ between passes.
   *
   * Unfused, per layer (16 dispatches): RMSNorm, q, k and v projections, RoPE of q and of k, KV
   * write, attention, o projection, residual add, RMSNorm, gate and up projections, SwiGLU, down
   * projection, residual add. Fused (6): [norm → q/k/v] in one product, RoPE + KV write, attention,
   * [o projection → residual add], [norm → gate/up → SwiGLU], [down projection → residual add];
   * the final norm runs inside the LM head. The unfused graph is the fused one's reference.
   */
  private bodyCalls(
    rows: number,
    b: PassBuffers,
    linear: LinearCall,
    /** One call, or several (split-K decode: slices, then their merge), each in the attention role. */
    attention: (pool: GPUBuffer) => KernelCall | KernelCall[],
  ): KernelCall[] {
    const { d, ffn, vocab, heads, kvHeads, headDim, qWidth, kvWidth } = dims(this.config);
    const k = this.kernels;
    const R = KERNEL_ROLES;
    const eps = this.config.rmsNormEps;
    const { x, q, attn, act } = b;
    const rope = (xIn: GPUBuffer, n: number) =>
      k.rope.call({
        x: xIn,
        positions: b.positions,
        cos: this.ropeCos,
        sin: this.ropeSin,
        rows,
        heads: n,
        headDim,
      });
    const calls = [
      withRole(
        R.embedding,
        k.embedding.call({ tokens: b.tokens, table: this.embedding, out: x, rows, d, vocab }),
      ),
    ];
    this.layers.forEach((w, layer) => {
      const pool = this.kv.pools[layer];
      if (w.attn.kind === 'fused' && w.mlp.kind === 'fused' && b.qkv) {
        const qkv = b.qkv;
        calls.push(
          withRole(
            R.qkv,
            linear(x, w.attn.wqkv, qkv, qWidth + 2 * kvWidth, d, { key: 'norm', gamma: w.inputNorm }),
          ),
          withRole(
            R.ropeKvWrite,
            k.ropeKvWrite.call({
              qkv,
              positions: b.positions,
              cos: this.ropeCos,
              sin: this.ropeSin,
              slots: b.slots,
              q,
              pool,
              rows,
              heads,
              kvHeads,
              headDim,
              pageSize: this.kv.pageSize,
            }),
          ),
          ...[attention(pool)].flat().map((call) => withRole(R.attention, call)),
          withRole(R.oProj, linear(attn, w.wo, x, d, qWidth, { key: 'add' })),
          withRole(
            R.gateUp,
            linear(x, w.mlp.wGateUp, act, 2 * ffn, d, { key: 'normSwiglu', gamma: w.postNorm }),
          ),
          withRole(R.down, linear(act, w.wDown, x, d, ffn, { key: 'add' })),
        );
        return;
      }
      if (w.attn.kind !== 'split' || w.mlp.kind !== 'split' || !b.split)
        throw new InputError('a layer mixes the fused and unfused graphs');
      const { h, proj, gate, up } = b.split;
      calls.push(
        withRole(R.norm, k.rmsNorm.call({ x, weight: w.inputNorm, out: h, rows, d, eps })),
        withRole(R.qkv, linear(h, w.attn.wq, q, qWidth, d)),
        withRole(R.qkv, linear(h, w.attn.wk, b.split.k, kvWidth, d)),
        withRole(R.qkv, linear(h, w.attn.wv, b.split.v, kvWidth, d)),
        withRole(R.rope, rope(q, heads)),
        withRole(R.rope, rope(b.split.k, kvHeads)),
        withRole(
          R.kvWrite,
          k.kvWrite.call({
            k: b.split.k,
            v: b.split.v,
            slots: b.slots,
            pool,
            rows,
            kvHeads,
            headDim,
            pageSize: this.kv.pageSize,
          }),
        ),
        ...[attention(pool)].flat().map((call) => withRole(R.attention, call)),
        withRole(R.oProj, linear(attn, w.wo, proj, d, qWidth)),
        withRole(R.residual, k.add.call({ x, y: proj, n: rows * d })),
        withRole(R.norm, k.rmsNorm.call({ x, weight: w.postNorm, out: h, rows, d, eps })),
        withRole(R.gateUp, linear(h, w.mlp.wGate, gate, ffn, d)),
        withRole(R.gateUp, linear(h, w.mlp.wUp, up, ffn, d)),
        withRole(R.swiglu, k.swiglu.call({ gate, up, out: act, n: rows * ffn })),
        withRole(R.down, linear(act, w.wDown, proj, d, ffn)),
        withRole(R.residual, k.add.call({ x, y: proj, n: rows * d })),
      );
    });
    if (b.split)
      calls.push(
        withRole(R.norm, k.rmsNorm.call({ x, weight: this.finalNorm, out: b.split.h, rows, d, eps })),
      );
    return calls;
  }

  /** The fusion keys this model's graph runs. */
  private fusionKeys(): readonly FusionKey[] {
    return GRAPH_FUSIONS[this.fused ? 'fused' : 'unfused'];
  }

  /** Gets (compiling on first use) the kernel `key` of a per-model kernel map. */
  private static async cached<T>(map: Map<string, T>, key: string, make: () => Promise<T>): Promise<T> {
    let kernel = map.get(key);
    if (!kernel) {
      kernel = await make();
      map.set(key, kernel);
    }
    return kernel;
  }

  /** The kernel of `map` under `key`, which the plan builder compiled before recording. */
  private static built<T>(map: Map<string, T>, key: string, what: string): T {
    const kernel = map.get(key);
    if (!kernel) throw new InputError(`no ${what} kernel was built for ${key}`);
    return kernel;
  }

  /** The prefill projection for L rows: the f32 matmul or the packed format's, with the graph's fusions. */
  private async matmulLinear(L: number): Promise<LinearCall> {
    const k = this.kernels;
    const variants = this.options.variants ?? DEFAULT_VARIANTS;
    for (const key of this.fusionKeys()) {
      await Model.cached(k.matmul, key, () => MatmulKernel.create(this.ctx, variants.matmul, FUSIONS[key]));
      for (const format of this.packedFormats)
        await Model.cached(k.packedMatmul, `${format}:${key}`, () =>
          PackedMatmulKernel.create(this.ctx, format, variants.packedMatmul, FUSIONS[key]),
        );
    }
    const eps = this.config.rmsNormEps;
    return (a, w, c, N, K, fuse = { key: 'plain' }) => {
      const norm = fuse.gamma ? { gamma: fuse.gamma, eps } : {};
      if (w.format === 'f32')
        return Model.built(k.matmul, fuse.key, 'matmul').call({ a, b: w.w, c, M: L, N, K, ...norm });
      return Model.built(k.packedMatmul, `${w.format}:${fuse.key}`, `${w.format} matmul`).call({
        a,
        w: w.w,
        scales: w.scales,
        c,
        M: L,
        N,
        K,
        ...norm,
      });
    };
  }

  /**
   * The decode projection for B rows: the f32 GEMV or the packed format's, each compiled for its
   * batch size (the rowwise families unroll it) and the graph's fusions, and kept.
   */
  private async gemvLinear(B: number): Promise<LinearCall> {
    const k = this.kernels;
    const variants = this.options.variants ?? DEFAULT_VARIANTS;
    for (const key of this.fusionKeys()) {
      await Model.cached(k.gemv, `${B}:${key}`, () =>
        GemvKernel.create(this.ctx, variants.gemv, B, FUSIONS[key]),
      );
      for (const format of this.packedFormats)
        await Model.cached(k.packedGemv, `${format}:${B}:${key}`, () =>
          PackedGemvKernel.create(this.ctx, format, variants.packedGemv, B, FUSIONS[key]),
        );
    }
    const eps = this.config.rmsNormEps;
    return (x, w, y, N, K, fuse = { key: 'plain' }) => {
      const norm = fuse.gamma ? { gamma: fuse.gamma, eps } : {};
      if (w.format === 'f32')
        return Model.built(k.gemv, `${B}:${fuse.key}`, 'GEMV').call({ x, w: w.w, y, M: B, N, K, ...norm });
      return Model.built(k.packedGemv, `${w.format}:${B}:${fuse.key}`, `${w.format} GEMV`).call({
        x,
        w: w.w,
        scales: w.scales,
        y,
        M: B,
        N,
        K,
        ...norm,
      });
    };
  }

  /** Frees every GPU buffer of the model. */
  destroy(): void {
    for (const plan of this.prefillPlans.values()) this.disposePrefillPlan(plan);
    this.prefillPlans.clear();
    for (const plan of this.decodePlans.values()) disposeCalls(plan.calls);
    this.decodePlans.clear();
    this.buffers.destroyAll();
  }
}
