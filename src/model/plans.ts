import { InputError } from '../errors.ts';
import { type BufferPool, BufferUsage, readFloat32 } from '../gpu/buffers.ts';
import type { Gpu } from '../gpu/device.ts';
import type { Timing } from '../gpu/profiler.ts';
import { PREFILL_START_OFFSET } from '../kernels/attention.ts';
import { GEMV_LIMITS } from '../kernels/gemv.ts';
import { disposeCalls, encodePasses, type KernelCall } from '../kernels/kernel.ts';
import { KERNEL_ROLES } from '../kernels/roles.ts';
import { BYTES } from '../weight-format.ts';
import { dims } from './config.ts';
import { bodyCalls, type GraphModel, headCalls, headInput, passBuffers } from './graph.ts';
import type { LinearKernels } from './kernel-set.ts';

/**
 * Most rows of one decode chunk: the GEMV's batch limit. A decode batch or a verify of more rows
 * runs in several chunks in one command buffer, each reading the weights once more (the knee of
 * the verify-K curve and the B-scaling sweep show it).
 */
export const DECODE_CHUNK = GEMV_LIMITS.maxBatch;

/** Prefill plans kept at once; each holds the activations of one prompt length. */
export const PREFILL_PLAN_CACHE = 4;

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
export interface DecodePlan extends PlanIo {
  batch: number;
  tables: GPUBuffer; // u32[B, tableStride]
  lengths: GPUBuffer; // u32[B]
  calls: KernelCall[];
}

/** One prefill pass's buffers and calls, built once per shape and replayed (see Plans.prefillPlan). */
export interface PrefillPlan extends PlanIo {
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

/** One row of a decode chunk: a token appended to `seq` at `position`, its K/V into `slot`. */
interface DecodeRow {
  seq: number;
  token: number;
  position: number;
  slot: number;
}

/** The `count` sampled token ids a submitted pass copied into its plan's readback buffer. */
export async function readNextTokens(plan: PlanIo, count: number): Promise<number[]> {
  const bytes = count * BYTES.u32;
  await plan.nextReadback.mapAsync(GPUMapMode.READ, 0, bytes);
  const ids = [...new Uint32Array(plan.nextReadback.getMappedRange(0, bytes).slice(0))];
  plan.nextReadback.unmap();
  return ids;
}

/**
 * Runs `body` with `plan` marked in use. A plan's buffers (and its mapped readback) serve one pass
 * at a time; a second pass of the same shape started before the first was awaited would overwrite
 * its inputs and map its readback twice, so it is refused with a clear error instead.
 */
async function exclusive<T>(plan: PlanIo, body: () => Promise<T>): Promise<T> {
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

/** `exclusive` over several plans at once (a prefill of several sequences). */
export async function exclusiveAll<T>(plans: readonly PlanIo[], body: () => Promise<T>): Promise<T> {
  const [first, ...rest] = plans;
  if (!first) return body();
  return exclusive(first, () => exclusiveAll(rest, body));
}

/**
 * A model's pass plans: built on the first pass of each shape, kept (decode plans for the model's
 * life, prefill plans up to PREFILL_PLAN_CACHE) and replayed, so a repeated pass builds nothing.
 */
export class Plans {
  private readonly decodePlans = new Map<string, DecodePlan>();
  private readonly prefillPlans = new Map<string, PrefillPlan>();

  constructor(
    private readonly gpu: Gpu,
    private readonly buffers: BufferPool,
    private readonly graph: GraphModel,
    private readonly linear: LinearKernels,
  ) {}

  /**
   * Builds (once per batch size and use) the buffers and every call of a decode step. `use` keeps
   * apart plans that run in one command buffer: the decode step, and each chunk of a verify pass.
   */
  async decodePlan(B: number, use = 'decode'): Promise<DecodePlan> {
    const key = `${use}:${B}`;
    const existing = this.decodePlans.get(key);
    if (existing) return existing;
    const g = this.graph;
    const { vocab } = dims(g.config);
    const alloc = (label: string, floats: number, usage: GPUBufferUsageFlags = BufferUsage.storage) =>
      this.buffers.allocate(`${use} B=${B} ${label}`, floats * BYTES.f32, usage);
    const tokens = await alloc('tokens', B); // u32[B]
    const positions = await alloc('positions', B); // u32[B]
    const slots = await alloc('kv slots', B); // u32[B]
    const tables = await alloc('block tables', B * g.kv.tableStride); // u32[B, tableStride]
    const lengths = await alloc('lengths', B); // u32[B]
    const pass = await passBuffers(g, B, (label, floats) => alloc(label, floats), {
      tokens,
      positions,
      slots,
    });
    const logits = await alloc('logits', B * vocab); // [B, vocab]
    const next = await alloc('next', B); // u32[B]
    const nextReadback = await alloc('next readback', B, BufferUsage.readback); // u32[B]
    const gemvB = await this.linear.gemvLinear(B);

    const calls = bodyCalls(g, B, pass, gemvB, (pool) =>
      g.kernels.attentionDecode.call({
        q: pass.q,
        pool,
        blockTables: tables,
        seqLens: lengths,
        out: pass.attn,
        batch: B,
        tableStride: g.kv.tableStride,
      }),
    );
    calls.push(...headCalls(g, B, headInput(g, pass), gemvB, logits, next));
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

  /** The decode plans of `count` rows in chunks of DECODE_CHUNK; `use` keeps apart plans that share a command buffer. */
  async decodeChunkPlans(count: number, use: string): Promise<DecodePlan[]> {
    const plans: DecodePlan[] = [];
    for (let c = 0, left = count; left > 0; c++, left -= DECODE_CHUNK) {
      plans.push(await this.decodePlan(Math.min(DECODE_CHUNK, left), `${use}${c === 0 ? '' : c}`));
    }
    return plans;
  }

  /**
   * The buffers and calls of one prefill pass of L tokens, built once and replayed whatever the
   * tokens cached before them: the attention calls' `start` is written into their parameter blocks
   * before each pass (encodePrefill), so a chunked prefill or a prefix-cache hit at a new position
   * builds nothing inside a timed step. Kept per (position in the request list, L, output rows);
   * the least recently used plans are dropped beyond PREFILL_PLAN_CACHE entries.
   */
  async prefillPlan(index: number, L: number, outRows: number): Promise<PrefillPlan> {
    const key = `${index}:${L}:${outRows}`;
    const cached = this.prefillPlans.get(key);
    if (cached) {
      this.prefillPlans.delete(key); // re-insert: the Map's order is the recency order
      this.prefillPlans.set(key, cached);
      return cached;
    }
    const g = this.graph;
    const { d, vocab } = dims(g.config);
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
    const blockTable = u32('block table', g.kv.tableStride); // u32[tableStride]
    const pass = await passBuffers(g, L, f32, { tokens, positions, slots });
    const logits = f32('logits', outRows * vocab); // [outRows, vocab]
    const next = u32('next token', outRows); // u32[outRows]
    const nextReadback = this.buffers.acquire(
      `prefill L=${L} next readback`,
      outRows * BYTES.u32,
      BufferUsage.readback,
    ); // u32[outRows], MAP_READ
    owned.push(nextReadback);

    const matmul = await this.linear.matmulLinear(L);
    const body = bodyCalls(g, L, pass, matmul, (pool) =>
      g.kernels.attentionPrefill.call({ q: pass.q, pool, blockTable, out: pass.attn, L, start: 0 }),
    );
    // The LM head: every row for 'all'; otherwise only the last position's logits are needed to
    // continue, so its row is copied out and goes through a GEMV. Its input is the final norm's
    // output (unfused), or the residual stream that the head normalises itself (fused).
    const hidden = headInput(g, pass);
    let headIn = hidden;
    let lastRow: PrefillPlan['lastRow'];
    if (outRows === 1) {
      headIn = f32('last hidden', d); // [1, d]
      lastRow = { from: hidden, offset: (L - 1) * d * BYTES.f32, to: headIn, bytes: d * BYTES.f32 };
    }
    const head = outRows === 1 ? await this.linear.gemvLinear(1) : matmul;
    const plan: PrefillPlan = {
      label: `prefill of ${L} tokens`,
      attentionParams: body.filter((c) => c.role === KERNEL_ROLES.attention).map((c) => c.owned[0]),
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
      bodyCalls: body,
      headCalls: headCalls(g, outRows, headIn, head, logits, next),
      owned,
    };
    this.prefillPlans.set(key, plan);
    return plan;
  }

  /** Drops the least recently used prefill plans beyond `keep` (never one a pass is using). */
  trimPrefillPlans(keep: number): void {
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

  /** Disposes every plan's calls and releases the prefill plans' pooled buffers. */
  destroy(): void {
    for (const plan of this.prefillPlans.values()) this.disposePrefillPlan(plan);
    this.prefillPlans.clear();
    for (const plan of this.decodePlans.values()) disposeCalls(plan.calls);
    this.decodePlans.clear();
  }

  /** Records one prefill pass of `tokens` after `start` cached ones (slots already reserved). */
  encodePrefill(
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
    queue.writeBuffer(plan.blockTable, 0, new Uint32Array(this.graph.kv.paddedTable(seq)));
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
  encodeDecodeRows(
    encoder: GPUCommandEncoder,
    label: string,
    rows: readonly DecodeRow[],
    plans: readonly DecodePlan[],
    timing: Timing | undefined,
  ): void {
    const queue = this.gpu.device.queue;
    const kv = this.graph.kv;
    let offset = 0;
    for (const plan of plans) {
      const chunk = rows.slice(offset, offset + plan.batch);
      queue.writeBuffer(plan.tokens, 0, new Uint32Array(chunk.map((r) => r.token)));
      queue.writeBuffer(plan.positions, 0, new Uint32Array(chunk.map((r) => r.position)));
      queue.writeBuffer(plan.slots, 0, new Uint32Array(chunk.map((r) => r.slot)));
      queue.writeBuffer(plan.tables, 0, new Uint32Array(chunk.flatMap((r) => kv.paddedTable(r.seq))));
      queue.writeBuffer(plan.lengths, 0, new Uint32Array(chunk.map((r) => r.position + 1)));
      encodePasses(encoder, `${label} rows ${offset}…${offset + chunk.length - 1}`, plan.calls, timing);
      encoder.copyBufferToBuffer(plan.next, 0, plan.nextReadback, 0, chunk.length * BYTES.u32);
      offset += chunk.length;
    }
  }

  /** Reads back what encodeDecodeRows' chunks produced: every row's next token, and its logits if asked. */
  async readDecodeRows(plans: readonly DecodePlan[], count: number, withLogits: boolean) {
    const nextTokens: number[] = [];
    const vocab = this.graph.config.vocabSize;
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
}
