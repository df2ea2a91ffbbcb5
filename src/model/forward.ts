import { InputError } from '../errors.ts';
import { BufferPool, BufferUsage, readBytes, readFloat32 } from '../gpu/buffers.ts';
import { assertAlive, type Gpu } from '../gpu/device.ts';
import { PipelineCache } from '../gpu/pipelines.ts';
import type { Timing } from '../gpu/profiler.ts';
import { PagedAttentionDecodeKernel, PagedAttentionPrefillKernel } from '../kernels/attention.ts';
import { EmbeddingKernel, ResidualAddKernel, RopeKernel, SwigluKernel } from '../kernels/elementwise.ts';
import { GEMV_LIMITS, GemvKernel } from '../kernels/gemv.ts';
import {
  disposeCalls,
  encodePasses,
  type KernelCall,
  type KernelContext,
  withRole,
} from '../kernels/kernel.ts';
import { KvWriteKernel } from '../kernels/kv-write.ts';
import { MatmulKernel } from '../kernels/matmul.ts';
import { KERNEL_ROLES } from '../kernels/roles.ts';
import { ArgmaxKernel, RmsNormKernel } from '../kernels/rowwise.ts';
import { DEFAULT_VARIANTS, type KernelVariants } from '../kernels/variants.ts';
import { KvCache, type KvCacheOptions } from '../kv/cache.ts';
import { dims, type ModelConfig } from './config.ts';
import { checkPlanFits, planMemory } from './plan.ts';
import { ropeTable } from './rope.ts';
import { get, lmHeadWeight, type ModelWeights, tensorSpecs } from './weights.ts';

export interface ModelOptions {
  kv: KvCacheOptions;
  /** Largest decode batch; the GEMV kernel handles up to 8 rows. */
  maxBatch: number;
  /** Share compiled pipelines between models on one device (tests build many models). */
  pipelines?: PipelineCache;
  /** Kernel families to use (chosen by the autotuner); the GPU-oriented defaults otherwise. */
  variants?: KernelVariants;
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

interface LayerBuffers {
  inputNorm: GPUBuffer; // [d]
  wq: GPUBuffer; // [qWidth, d]
  wk: GPUBuffer; // [kvWidth, d]
  wv: GPUBuffer; // [kvWidth, d]
  wo: GPUBuffer; // [d, qWidth]
  postNorm: GPUBuffer; // [d]
  wGate: GPUBuffer; // [ffn, d]
  wUp: GPUBuffer; // [ffn, d]
  wDown: GPUBuffer; // [d, ffn]
}

interface Kernels {
  embedding: EmbeddingKernel;
  rmsNorm: RmsNormKernel;
  rope: RopeKernel;
  add: ResidualAddKernel;
  swiglu: SwigluKernel;
  argmax: ArgmaxKernel;
  matmul: MatmulKernel;
  gemv: GemvKernel;
  kvWrite: KvWriteKernel;
  attentionPrefill: PagedAttentionPrefillKernel;
  attentionDecode: PagedAttentionDecodeKernel;
}

/** The activations of one pass, each [rows, width]: what the shared transformer body reads and writes. */
interface PassBuffers {
  tokens: GPUBuffer; // u32[rows]
  positions: GPUBuffer; // u32[rows]
  slots: GPUBuffer; // u32[rows] KV slot of each token
  x: GPUBuffer; // [rows, d] residual stream
  h: GPUBuffer; // [rows, d] normed
  q: GPUBuffer; // [rows, heads, headDim]
  k: GPUBuffer; // [rows, kvHeads, headDim]
  v: GPUBuffer; // [rows, kvHeads, headDim]
  attn: GPUBuffer; // [rows, heads, headDim]
  proj: GPUBuffer; // [rows, d]
  gate: GPUBuffer; // [rows, ffn]
  up: GPUBuffer; // [rows, ffn]
  act: GPUBuffer; // [rows, ffn]
}

/** Per-batch-size decode state: every buffer and recorded call, built once and replayed each step. */
interface DecodePlan {
  batch: number;
  tokens: GPUBuffer; // u32[B]
  positions: GPUBuffer; // u32[B]
  slots: GPUBuffer; // u32[B]
  tables: GPUBuffer; // u32[B, tableStride]
  lengths: GPUBuffer; // u32[B]
  logits: GPUBuffer; // [B, vocab]
  next: GPUBuffer; // u32[B]
  nextReadback: GPUBuffer; // u32[B], MAP_READ
  calls: KernelCall[];
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
  private readonly decodePlans = new Map<number, DecodePlan>();

  private constructor(
    readonly gpu: Gpu,
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
    private readonly lmHead: GPUBuffer, // [vocab, d]
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
    if (options.maxBatch < 1 || options.maxBatch > GEMV_LIMITS.maxBatch) {
      throw new InputError(`maxBatch ${options.maxBatch} is outside 1…${GEMV_LIMITS.maxBatch}`);
    }
    checkPlanFits(planMemory(config, options.kv, config.maxSeqLen), gpu.limits, name);

    const buffers = new BufferPool(gpu);
    const pipelines = options.pipelines ?? new PipelineCache(gpu);
    const ctx: KernelContext = { gpu, pipelines };
    const upload = (tensor: string) => buffers.upload(tensor, get(weights, tensor));
    for (const spec of tensorSpecs(config)) {
      if (spec.shape.length === 2 && spec.shape[1] % 4 !== 0) {
        throw new InputError(`${spec.name}: inner width ${spec.shape[1]} is not a multiple of 4`);
      }
    }
    const embedding = await upload('model.embed_tokens.weight');
    const layerBuffers: LayerBuffers[] = [];
    for (let l = 0; l < layers; l++) {
      const p = `model.layers.${l}`;
      layerBuffers.push({
        inputNorm: await upload(`${p}.input_layernorm.weight`),
        wq: await upload(`${p}.self_attn.q_proj.weight`),
        wk: await upload(`${p}.self_attn.k_proj.weight`),
        wv: await upload(`${p}.self_attn.v_proj.weight`),
        wo: await upload(`${p}.self_attn.o_proj.weight`),
        postNorm: await upload(`${p}.post_attention_layernorm.weight`),
        wGate: await upload(`${p}.mlp.gate_proj.weight`),
        wUp: await upload(`${p}.mlp.up_proj.weight`),
        wDown: await upload(`${p}.mlp.down_proj.weight`),
      });
    }
    const finalNorm = await upload('model.norm.weight');
    const lmHead = config.tieWordEmbeddings
      ? embedding
      : await buffers.upload('lm_head.weight', lmHeadWeight(weights));
    const table = ropeTable(config);
    const ropeCos = await buffers.upload('rope cos', table.cos);
    const ropeSin = await buffers.upload('rope sin', table.sin);
    const kv = await KvCache.create(
      buffers,
      { layers, kvHeads, headDim, maxSeqLen: config.maxSeqLen },
      options.kv,
    );

    const attention = { heads, kvHeads, headDim, pageSize: kv.pageSize, paged: kv.paged };
    const variants = options.variants ?? DEFAULT_VARIANTS;
    const kernels: Kernels = {
      embedding: await EmbeddingKernel.create(ctx),
      rmsNorm: await RmsNormKernel.create(ctx, variants.rmsnorm),
      rope: await RopeKernel.create(ctx),
      add: await ResidualAddKernel.create(ctx),
      swiglu: await SwigluKernel.create(ctx),
      argmax: await ArgmaxKernel.create(ctx),
      matmul: await MatmulKernel.create(ctx, variants.matmul),
      gemv: await GemvKernel.create(ctx, variants.gemv, 1),
      kvWrite: await KvWriteKernel.create(ctx),
      attentionPrefill: await PagedAttentionPrefillKernel.create(ctx, attention, variants.attentionPrefill),
      attentionDecode: await PagedAttentionDecodeKernel.create(ctx, attention, variants.attentionDecode),
    };
    return new Model(
      gpu,
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

  private checkTokens(tokens: readonly number[]): void {
    const bad = tokens.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= this.config.vocabSize);
    if (bad >= 0) {
      throw new InputError(
        `Token ${tokens[bad]} at index ${bad} is not an id in 0…${this.config.vocabSize - 1}`,
      );
    }
  }

  private u32(label: string, values: readonly number[]): GPUBuffer {
    const buffer = this.buffers.acquire(label, values.length * 4);
    this.gpu.device.queue.writeBuffer(buffer, 0, new Uint32Array(values));
    return buffer;
  }

  /**
   * Runs the prompt tokens of each sequence through the model, appending their K/V to its cache
   * (after any tokens it already holds: chunked prefill and shared prefixes work the same way).
   * All sequences are recorded into one command buffer and submitted once.
   */
  async prefill(
    requests: readonly PrefillRequest[],
    logitsMode: LogitsMode = 'last',
    timing?: Timing,
  ): Promise<PrefillResult[]> {
    assertAlive(this.gpu);
    const encoder = this.gpu.device.createCommandEncoder({ label: 'prefill' });
    const held: GPUBuffer[] = [];
    const calls: KernelCall[] = [];
    const outputs: { seq: number; logits: GPUBuffer; next: GPUBuffer; rows: number }[] = [];
    for (const { seq, tokens } of requests) {
      if (tokens.length === 0) throw new InputError(`Prefill of sequence ${seq} has no tokens`);
      this.checkTokens(tokens);
      const out = this.encodePrefill(encoder, seq, tokens, logitsMode, held, calls, timing);
      outputs.push({ seq, ...out });
    }
    timing?.profiler.resolve(encoder);
    this.gpu.device.queue.submit([encoder.finish()]);
    const results: PrefillResult[] = [];
    for (const o of outputs) {
      const next = new Uint32Array(await readBytes(this.gpu, o.next, o.rows * 4));
      const logits =
        logitsMode === 'none'
          ? undefined
          : await readFloat32(this.gpu, o.logits, o.rows * this.config.vocabSize * 4);
      results.push({ seq: o.seq, nextToken: next[o.rows - 1], logits });
    }
    disposeCalls(calls);
    for (const b of held) this.buffers.release(b);
    assertAlive(this.gpu);
    return results;
  }

  private encodePrefill(
    encoder: GPUCommandEncoder,
    seq: number,
    tokens: readonly number[],
    logitsMode: LogitsMode,
    held: GPUBuffer[],
    calls: KernelCall[],
    timing: Timing | undefined,
  ) {
    const { d, ffn, vocab, qWidth, kvWidth } = dims(this.config);
    const k = this.kernels;
    const R = KERNEL_ROLES;
    const L = tokens.length;
    const start = this.kv.allocator.length(seq);
    const slotList = this.kv.append(encoder, seq, L); // copy-on-write copies are recorded here
    const acquire = (label: string, floats: number) => {
      const b = this.buffers.acquire(label, floats * 4);
      held.push(b);
      return b;
    };
    const upload = (label: string, values: readonly number[]) => {
      const b = this.u32(label, values);
      held.push(b);
      return b;
    };
    const tokenIds = upload('prefill tokens', tokens); // u32[L]
    const positions = upload(
      'prefill positions',
      tokens.map((_, i) => start + i),
    ); // u32[L]
    const slots = upload('prefill kv slots', slotList); // u32[L]
    const blockTable = upload('prefill block table', this.kv.allocator.blockTable(seq)); // u32[pages]
    const x = acquire('x', L * d); // [L, d] residual stream
    const h = acquire('h', L * d); // [L, d] normed
    const q = acquire('q', L * qWidth); // [L, heads, headDim]
    const kNew = acquire('k', L * kvWidth); // [L, kvHeads, headDim]
    const vNew = acquire('v', L * kvWidth); // [L, kvHeads, headDim]
    const attn = acquire('attn', L * qWidth); // [L, heads, headDim]
    const proj = acquire('proj', L * d); // [L, d]
    const gate = acquire('gate', L * ffn); // [L, ffn]
    const up = acquire('up', L * ffn); // [L, ffn]
    const act = acquire('act', L * ffn); // [L, ffn]
    const outRows = logitsMode === 'all' ? L : 1;
    const logits = acquire('logits', outRows * vocab); // [outRows, vocab]
    const next = acquire('next token', outRows); // u32[outRows]

    const layerCalls = this.bodyCalls(
      L,
      { tokens: tokenIds, positions, slots, x, h, q, k: kNew, v: vNew, attn, proj, gate, up, act },
      (a, w, out, N, K) => k.matmul.call({ a, b: w, c: out, M: L, N, K }),
      (pool) => k.attentionPrefill.call({ q, pool, blockTable, out: attn, L, start }),
    );
    calls.push(...layerCalls);
    encodePasses(encoder, `prefill seq ${seq} L=${L}`, layerCalls, timing);

    // The LM head: every row for 'all'; otherwise only the last position's logits are needed to
    // continue, so its row is copied out and goes through a GEMV.
    let headIn = h;
    if (outRows === 1) {
      headIn = acquire('last hidden', d); // [1, d]
      encoder.copyBufferToBuffer(h, (L - 1) * d * 4, headIn, 0, d * 4);
    }
    const headCalls = [
      withRole(
        R.lmHead,
        outRows === 1
          ? k.gemv.call({ x: headIn, w: this.lmHead, y: logits, M: 1, N: vocab, K: d })
          : k.matmul.call({ a: headIn, b: this.lmHead, c: logits, M: L, N: vocab, K: d }),
      ),
      withRole(R.argmax, k.argmax.call({ x: logits, out: next, rows: outRows, n: vocab })),
    ];
    calls.push(...headCalls);
    encodePasses(encoder, `prefill seq ${seq} head`, headCalls, timing);
    return { logits, next, rows: outRows };
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
    const plan = await this.decodePlan(B);
    const encoder = this.gpu.device.createCommandEncoder({ label: `decode B=${B}` });
    const positions: number[] = [];
    const slots: number[] = [];
    const tables: number[] = [];
    const lengths: number[] = [];
    for (const { seq } of requests) {
      positions.push(this.kv.allocator.length(seq));
      slots.push(this.kv.append(encoder, seq, 1)[0]);
      tables.push(...this.kv.paddedTable(seq));
      lengths.push(this.kv.allocator.length(seq));
    }
    const queue = this.gpu.device.queue;
    queue.writeBuffer(plan.tokens, 0, new Uint32Array(requests.map((r) => r.token)));
    queue.writeBuffer(plan.positions, 0, new Uint32Array(positions));
    queue.writeBuffer(plan.slots, 0, new Uint32Array(slots));
    queue.writeBuffer(plan.tables, 0, new Uint32Array(tables));
    queue.writeBuffer(plan.lengths, 0, new Uint32Array(lengths));
    encodePasses(encoder, `decode B=${B}`, plan.calls, options.timing);
    encoder.copyBufferToBuffer(plan.next, 0, plan.nextReadback, 0, B * 4);
    options.timing?.profiler.resolve(encoder);
    queue.submit([encoder.finish()]);
    await plan.nextReadback.mapAsync(GPUMapMode.READ, 0, B * 4);
    const nextTokens = [...new Uint32Array(plan.nextReadback.getMappedRange(0, B * 4).slice(0))];
    plan.nextReadback.unmap();
    const logits = options.logits
      ? await readFloat32(this.gpu, plan.logits, B * this.config.vocabSize * 4)
      : undefined;
    assertAlive(this.gpu);
    return { nextTokens, logits };
  }

  /** Builds (once per batch size) the buffers and every call of a decode step. */
  private async decodePlan(B: number): Promise<DecodePlan> {
    const existing = this.decodePlans.get(B);
    if (existing) return existing;
    const { d, ffn, vocab, qWidth, kvWidth } = dims(this.config);
    const k = this.kernels;
    const R = KERNEL_ROLES;
    const alloc = (label: string, floats: number, usage: GPUBufferUsageFlags = BufferUsage.storage) =>
      this.buffers.allocate(`decode B=${B} ${label}`, floats * 4, usage);
    const tokens = await alloc('tokens', B); // u32[B]
    const positions = await alloc('positions', B); // u32[B]
    const slots = await alloc('kv slots', B); // u32[B]
    const tables = await alloc('block tables', B * this.kv.tableStride); // u32[B, tableStride]
    const lengths = await alloc('lengths', B); // u32[B]
    const x = await alloc('x', B * d); // [B, d]
    const h = await alloc('h', B * d); // [B, d]
    const q = await alloc('q', B * qWidth); // [B, heads, headDim]
    const kNew = await alloc('k', B * kvWidth); // [B, kvHeads, headDim]
    const vNew = await alloc('v', B * kvWidth); // [B, kvHeads, headDim]
    const attn = await alloc('attn', B * qWidth); // [B, heads, headDim]
    const proj = await alloc('proj', B * d); // [B, d]
    const gate = await alloc('gate', B * ffn); // [B, ffn]
    const up = await alloc('up', B * ffn); // [B, ffn]
    const act = await alloc('act', B * ffn); // [B, ffn]
    const logits = await alloc('logits', B * vocab); // [B, vocab]
    const next = await alloc('next', B); // u32[B]
    const nextReadback = await alloc('next readback', B, BufferUsage.readback); // u32[B]
    // A rowwise GEMV is compiled for its batch size; the reduce family serves any batch.
    const gemvB = B === 1 ? k.gemv : await GemvKernel.create(this.ctx, this.options.variants?.gemv, B);

    const calls = this.bodyCalls(
      B,
      { tokens, positions, slots, x, h, q, k: kNew, v: vNew, attn, proj, gate, up, act },
      (xIn, w, y, N, K) => gemvB.call({ x: xIn, w, y, M: B, N, K }),
      (pool) =>
        k.attentionDecode.call({
          q,
          pool,
          blockTables: tables,
          seqLens: lengths,
          out: attn,
          batch: B,
          tableStride: this.kv.tableStride,
        }),
    );
    calls.push(
      withRole(R.lmHead, gemvB.call({ x: h, w: this.lmHead, y: logits, M: B, N: vocab, K: d })),
      withRole(R.argmax, k.argmax.call({ x: logits, out: next, rows: B, n: vocab })),
    );
    const plan: DecodePlan = {
      batch: B,
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
    this.decodePlans.set(B, plan);
    return plan;
  }

  /**
   * The transformer body both passes share, for `rows` tokens: embedding, then per layer
   * RMSNorm, q/k/v projections, RoPE, KV write, attention, o projection and residual, RMSNorm,
   * gate/up, SwiGLU, down and residual; then the final RMSNorm into b.h. Only the projection
   * kernel (matmul for prefill, GEMV for decode) and the attention call differ between passes.
   */
  private bodyCalls(
    rows: number,
    b: PassBuffers,
    linear: (x: GPUBuffer, w: GPUBuffer, y: GPUBuffer, N: number, K: number) => KernelCall,
    attention: (pool: GPUBuffer) => KernelCall,
  ): KernelCall[] {
    const { d, ffn, vocab, heads, kvHeads, headDim, qWidth, kvWidth } = dims(this.config);
    const k = this.kernels;
    const R = KERNEL_ROLES;
    const eps = this.config.rmsNormEps;
    const { x, h, q, attn, proj, gate, up, act } = b;
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
      calls.push(
        withRole(R.norm, k.rmsNorm.call({ x, weight: w.inputNorm, out: h, rows, d, eps })),
        withRole(R.qkv, linear(h, w.wq, q, qWidth, d)),
        withRole(R.qkv, linear(h, w.wk, b.k, kvWidth, d)),
        withRole(R.qkv, linear(h, w.wv, b.v, kvWidth, d)),
        withRole(R.rope, rope(q, heads)),
        withRole(R.rope, rope(b.k, kvHeads)),
        withRole(
          R.kvWrite,
          k.kvWrite.call({
            k: b.k,
            v: b.v,
            slots: b.slots,
            pool,
            rows,
            kvHeads,
            headDim,
            pageSize: this.kv.pageSize,
          }),
        ),
        withRole(R.attention, attention(pool)),
        withRole(R.oProj, linear(attn, w.wo, proj, d, qWidth)),
        withRole(R.residual, k.add.call({ x, y: proj, n: rows * d })),
        withRole(R.norm, k.rmsNorm.call({ x, weight: w.postNorm, out: h, rows, d, eps })),
        withRole(R.gateUp, linear(h, w.wGate, gate, ffn, d)),
        withRole(R.gateUp, linear(h, w.wUp, up, ffn, d)),
        withRole(R.swiglu, k.swiglu.call({ gate, up, out: act, n: rows * ffn })),
        withRole(R.down, linear(act, w.wDown, proj, d, ffn)),
        withRole(R.residual, k.add.call({ x, y: proj, n: rows * d })),
      );
    });
    calls.push(withRole(R.norm, k.rmsNorm.call({ x, weight: this.finalNorm, out: h, rows, d, eps })));
    return calls;
  }

  /** Frees every GPU buffer of the model. */
  destroy(): void {
    for (const plan of this.decodePlans.values()) disposeCalls(plan.calls);
    this.decodePlans.clear();
    this.buffers.destroyAll();
  }
}
