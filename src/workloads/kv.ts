import { kvBytesPerToken } from '../capacity/kv.ts';
import { KvCacheExhaustedError } from '../errors.ts';
import { BufferPool } from '../gpu/buffers.ts';
import { checkedRun } from '../gpu/device.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import { KERNEL_ROLES } from '../kernels/roles.ts';
import { KvCache, type KvCacheShape, pageBytes } from '../kv/cache.ts';
import { KV_DTYPES, type KvDtype } from '../kv/format.ts';
import type { ModelConfig } from '../model/config.ts';
import { Model } from '../model/forward.ts';
import { type ModelWeights, quantizeWeights, widenWeights, withKvHeads } from '../model/weights.ts';
import { decodePrompt } from '../spec/workload.ts';
import { type TaskQuality, taskVariant } from '../spec/workloads/formats.ts';
import type { WorkloadOf } from '../spec/workloads/index.ts';
import { ERROR_BUCKETS, type KvCell, type KvError, type KvSection } from '../spec/workloads/kv-result.ts';
import { percentile } from '../stats.ts';
import { isQuantFormat } from '../weight-format.ts';
import { verifySlots } from './capacity.ts';
import { promptTokens } from './prompts.ts';
import { pickSlices, taskQuality, taskTableFormat } from './task-quality.ts';
import type { WorkloadContext, WorkloadEngine, WorkloadRunner } from './workload.ts';

/** Passes one profiled decode step may time: one per kernel call (a few dozen per layer at most). */
const PROFILED_PASSES = 1024;
/** The seed of the K and V projections of a variant whose KV head count is not the model's. */
const VARIANT_SEED = 23;
/** maxContext stops here (× maxSeqLen): a window's memory stays flat, so its sequence would never be refused. */
const CONTEXT_CAP_FACTOR = 16;

/** The matrix as run: every list resolved, from the settings or from the model. */
export interface KvPlan {
  kvHeads: number[];
  dtypes: KvDtype[];
  windows: (number | null)[];
  depths: number[];
  gen: number;
  prefillTokens: number;
  errorContext: number;
  pageSize: number;
  poolBytes: number;
  reps: number;
  warmup: number;
}

/**
 * The window the matrix tries when none is given: the largest multiple of a page whose four times
 * (the depth of the window target) still leaves room for a generation in maxSeqLen.
 */
export function defaultWindow(maxSeqLen: number, gen: number, pageSize: number): number {
  const room = Math.floor((maxSeqLen - gen) / 4);
  return Math.max(pageSize, Math.floor(room / pageSize) * pageSize);
}

/** MHA (every query head its own KV head), the model's own GQA count, and MQA (one). */
export function defaultKvHeads(c: ModelConfig): number[] {
  return [...new Set([c.numHeads, c.numKvHeads, 1])];
}

export function kvPlan(c: ModelConfig, w: WorkloadOf<'kv'>, pageSize: number): KvPlan {
  const gen = w.gen ?? 8;
  const windows = w.windows ?? [null, defaultWindow(c.maxSeqLen, gen, pageSize)];
  const smallest = Math.min(...windows.filter((x): x is number => x !== null));
  // Depths W, 2W and 4W of the smallest window (the window targets compare W with 4W), else spread.
  const base = Number.isFinite(smallest) ? smallest : Math.floor(c.maxSeqLen / 8);
  const fits = (d: number) => decodePrompt(d) + gen - 1 <= c.maxSeqLen;
  const depths = (w.depths ?? [base, 2 * base, 4 * base]).filter(fits);
  const mhaF32 = kvBytesPerToken(
    { layers: c.numLayers, heads: c.numHeads, kvHeads: c.numHeads, headDim: c.headDim },
    'f32',
  );
  return {
    kvHeads: w.kvHeads ?? defaultKvHeads(c),
    dtypes: w.kvDtypes ?? [...KV_DTYPES],
    windows,
    depths,
    gen,
    prefillTokens: w.length ?? Math.min(128, c.maxSeqLen),
    errorContext: w.errorContext ?? Math.min(512, c.maxSeqLen),
    pageSize,
    // One full context of the costliest cell (f32, MHA): the others' fits are what they save.
    poolBytes: w.poolMiB !== undefined ? Math.floor(w.poolMiB * 2 ** 20) : mhaF32 * c.maxSeqLen,
    reps: w.reps,
    warmup: w.warmup,
  };
}

/** The section's fields that do not vary by cell. */
type KvCommon = Omit<KvSection, 'cells' | 'taskQuality'>;

/** One cell, measured; or (a trained model) one KV cache's task quality on one slice. */
export type KvRecord =
  | { type: 'kv'; cell: KvCell; common: KvCommon }
  | { type: 'kvTask'; taskQuality: TaskQuality };

/**
 * The KV-shrinking matrix (`--suite kv`). For each KV head count, the model's variant (the model's
 * own q, o and FFN weights; K and V projections of that width) is built once per (KV type,
 * window) with that cache, and measured:
 * - memory: the bytes per token the calculator counts, and the allocator's (a page's bytes over
 *   its tokens), and the pages one sequence holds after a generation at each depth;
 * - what fits a fixed pool: one sequence grown a page at a time until the pool refuses it, and as
 *   many sequences of half maxSeqLen as it admits, every held slot then written with a marker on
 *   the GPU and read back (the capacity probe's check);
 * - speed: TPOT at each depth (wall clock, median of the repetitions), the decode attention
 *   kernels' GPU time per step from a separately profiled generation, and one prefill of L;
 * - error by position: the logits at every position of one long context (teacher-forced, one
 *   prefill) against the same variant with f32 KV and no window, per fifth of the context.
 */
export const kvMatrix: WorkloadRunner<'kv', KvRecord> = async (ctx, w) => {
  const c = ctx.config;
  const pageSize = ctx.kv.mode === 'paged' ? ctx.kv.pageSize : 16;
  const plan = kvPlan(c, w, pageSize);
  if (ctx.kv.mode !== 'paged')
    ctx.warn(
      'The KV matrix runs the paged cache (pages of 16): a window gives pages back, a contiguous slot cannot.',
    );
  // Profiled steps: one pass per kernel call, read back after each step.
  const profiler = new GpuProfiler(ctx.gpu, PROFILED_PASSES);
  const common: KvCommon = {
    model: ctx.modelName,
    heads: c.numHeads,
    headDim: c.headDim,
    layers: c.numLayers,
    pageSize,
    maxSeqLen: c.maxSeqLen,
    poolBytes: plan.poolBytes,
    prefillTokens: plan.prefillTokens,
    errorContext: plan.errorContext,
    clocks: { decodeAttentionMs: profiler.supported ? 'gpu' : 'wall', tpotMs: 'wall', prefillMs: 'wall' },
  };
  // The cells, then (a trained model) the task table as one more unit.
  const scoresTasks = ctx.taskSet !== undefined && ctx.tokenizer !== undefined;
  const total = plan.kvHeads.length * plan.dtypes.length * plan.windows.length + (scoresTasks ? 1 : 0);
  let done = 0;
  const context = promptTokens(plan.errorContext, c.vocabSize, 5);
  try {
    for (const kvHeads of plan.kvHeads) {
      const weights = variantWeights(ctx, kvHeads);
      // The reference of the error table: this variant, f32 KV, no window (its own cell when the
      // matrix has it, which the order below measures first).
      const isReference = (dtype: KvDtype, window: number | null) => dtype === 'f32' && window === null;
      const hasReference = plan.dtypes.includes('f32') && plan.windows.includes(null);
      let reference = hasReference ? null : await referenceLogits(ctx, weights, plan, context);
      const order = (xs: (number | null)[]) => [...xs].sort((a, b) => (a === null ? -1 : b === null ? 1 : 0));
      const dtypes = [...plan.dtypes].sort((a, b) => (a === 'f32' ? -1 : b === 'f32' ? 1 : 0));
      for (const window of order(plan.windows)) {
        for (const dtype of dtypes) {
          ctx.signal.throwIfAborted();
          const label = `KV cell: ${kvHeads} KV heads, ${dtype}, window ${window ?? 'none'}`;
          ctx.progress(done, total, label);
          const { cell, logits } = await measureCell(
            ctx,
            weights,
            plan,
            profiler,
            { kvHeads, dtype, window },
            context,
          );
          if (isReference(dtype, window)) reference = logits;
          else if (reference) cell.error = errorByPosition(logits, reference, c.vocabSize);
          ctx.emit({ type: 'kv', cell, common });
          ctx.progress(++done, total, label);
        }
      }
    }
  } finally {
    profiler.destroy();
  }
  if (scoresTasks) {
    await kvTaskQuality(ctx, w, plan, (fraction, label) => ctx.progress(done + fraction, total, label));
    // The task table's unit ends with its last slice, so the run ends at total/total.
    ctx.progress(++done, total, 'task quality by slice');
  }
};

/**
 * A trained model: the held-out task set scored on each KV type and window of the matrix, at the
 * model's own KV heads (a variant with other KV heads has seeded K and V projections: it knows
 * nothing to score), against f32 KV with full attention, in the run's weight format throughout.
 */
async function kvTaskQuality(
  ctx: WorkloadContext<KvRecord>,
  w: WorkloadOf<'kv'>,
  plan: KvPlan,
  progress: (fraction: number, label: string) => void,
) {
  if (!ctx.taskSet || !ctx.tokenizer) return;
  const format = taskTableFormat(ctx, 'The KV task table');
  const caches = [{ dtype: 'f32' as KvDtype, window: null as number | null }];
  for (const window of plan.windows)
    for (const dtype of plan.dtypes) if (dtype !== 'f32' || window !== null) caches.push({ dtype, window });
  await taskQuality(
    ctx,
    caches.map((kv) => ({ format, kv })),
    pickSlices(ctx.taskSet, w.taskSlices),
    ctx.tokenizer,
    w.taskTokens,
    (slice, index, count) => progress(index / count, `task quality, every KV cache: the ${slice} slice`),
    (row) => ctx.emit({ type: 'kvTask', taskQuality: row }),
  );
}

/** The variant's weights in the run's format: the model's own for its KV head count. */
function variantWeights(ctx: WorkloadContext<KvRecord>, kvHeads: number): ModelWeights {
  if (kvHeads === ctx.config.numKvHeads) return ctx.weights;
  const variant = withKvHeads(widenWeights(ctx.weights), kvHeads, VARIANT_SEED);
  // A mixed file, or a GGUF type the engine cannot quantize to, keeps the new K/V projections in f32.
  return ctx.weightFormat === 'mixed' || isQuantFormat(ctx.weightFormat)
    ? variant
    : quantizeWeights(variant, ctx.weightFormat);
}

async function buildModel(
  ctx: WorkloadContext<KvRecord>,
  weights: ModelWeights,
  plan: KvPlan,
  dtype: KvDtype,
  window: number | null,
) {
  const capacityTokens = 2 * weights.config.maxSeqLen + plan.pageSize;
  return Model.create(
    ctx.gpu,
    weights,
    {
      kv: { mode: 'paged', pageSize: plan.pageSize, capacityTokens, dtype, window },
      maxBatch: 1,
      pipelines: ctx.pipelines,
      variants: ctx.variants,
    },
    `KV cell ${weights.config.numKvHeads}/${dtype}/${window ?? 'none'}`,
  );
}

/** Logits at every position of the long context: one teacher-forced prefill. */
async function contextLogits(
  ctx: WorkloadContext<KvRecord>,
  model: Model,
  context: number[],
): Promise<Float32Array> {
  const seq = model.createSequence();
  try {
    const [r] = await checkedRun(ctx.gpu, 'the KV matrix error context', () =>
      model.prefill([{ seq, tokens: context }], 'all'),
    );
    if (!r.logits) throw new Error('prefill returned no logits');
    return r.logits;
  } finally {
    model.freeSequence(seq);
  }
}

/** The error table's reference where the matrix has no f32, full-attention cell: a model of its own. */
async function referenceLogits(
  ctx: WorkloadContext<KvRecord>,
  weights: ModelWeights,
  plan: KvPlan,
  context: number[],
): Promise<Float32Array> {
  const model = await buildModel(ctx, weights, plan, 'f32', null);
  try {
    return await contextLogits(ctx, model, context);
  } finally {
    model.destroy();
  }
}

/**
 * Per fifth of the context (the first, the middle and the last): the normwise relative error of
 * the logits, the share of positions whose argmax agrees, and the first position where it does not.
 */
export function errorByPosition(got: Float32Array, want: Float32Array, vocab: number): KvError[] {
  const n = want.length / vocab;
  const fifth = n / 5;
  const starts = { first: 0, middle: 2, last: 4 } as const;
  return ERROR_BUCKETS.map((bucket) => {
    const from = Math.floor(starts[bucket] * fifth);
    const to = Math.max(from + 1, Math.floor((starts[bucket] + 1) * fifth));
    let diff = 0;
    let norm = 0;
    let agree = 0;
    let firstDivergence: number | null = null;
    for (let p = from; p < to; p++) {
      const row = p * vocab;
      let gotArg = 0;
      let wantArg = 0;
      for (let v = 0; v < vocab; v++) {
        const d = got[row + v] - want[row + v];
        diff += d * d;
        norm += want[row + v] * want[row + v];
        if (got[row + v] > got[row + gotArg]) gotArg = v;
        if (want[row + v] > want[row + wantArg]) wantArg = v;
      }
      if (gotArg === wantArg) agree++;
      else if (firstDivergence === null) firstDivergence = p;
    }
    return {
      bucket,
      relErr: norm > 0 ? Math.sqrt(diff / norm) : Math.sqrt(diff),
      top1: agree / (to - from),
      firstDivergence,
    };
  });
}

/** Memory, fits and speed of one cell (its error is filled in by the caller). */
async function measureCell(
  ctx: WorkloadContext<KvRecord>,
  weights: ModelWeights,
  plan: KvPlan,
  profiler: GpuProfiler,
  cellKey: { kvHeads: number; dtype: KvDtype; window: number | null },
  context: number[],
): Promise<{ cell: KvCell; logits: Float32Array }> {
  const { kvHeads, dtype, window } = cellKey;
  const c = weights.config;
  const model = await buildModel(ctx, weights, plan, dtype, window);
  try {
    const { reps, warmup } = plan;
    const prefill: number[] = [];
    for (let r = 0; r < warmup + reps; r++) {
      const seq = model.createSequence();
      const tokens = promptTokens(plan.prefillTokens, c.vocabSize, 11 + r);
      const start = performance.now();
      await checkedRun(ctx.gpu, 'the KV matrix prefill', () => model.prefill([{ seq, tokens }], 'none'));
      if (r >= warmup) prefill.push(performance.now() - start);
      model.freeSequence(seq);
    }
    const logits = await contextLogits(ctx, model, context);
    const pagesAt: KvCell['pagesAt'] = [];
    const tpotMs: KvCell['tpotMs'] = [];
    const decodeAttentionMs: KvCell['decodeAttentionMs'] = [];
    for (const depth of plan.depths) {
      // One prompt per depth; each generation is rolled back to it (as speculative decoding rolls
      // back rejected tokens), so the repetitions decode from the same cache without a prefill each.
      const seq = model.createSequence();
      try {
        const tokens = promptTokens(decodePrompt(depth), c.vocabSize, depth + 7);
        const [first] = await model.prefill([{ seq, tokens }], 'none');
        const tpots: number[] = [];
        const attention: number[] = [];
        let pages = 0;
        for (let r = 0; r < warmup + 2 * reps; r++) {
          ctx.signal.throwIfAborted();
          // Timed generations first (their TPOT), then profiled ones (their attention spans).
          const profiled = r >= warmup + reps;
          if (profiled && !profiler.supported) break;
          const g = await generation(model, seq, first.nextToken, plan.gen, profiled ? profiler : null);
          model.truncate(seq, tokens.length);
          if (r < warmup) continue;
          if (profiled) attention.push(...g.attentionMs);
          else tpots.push(g.tpotMs);
          pages = g.heldPages;
        }
        pagesAt.push({ depth, pages });
        tpotMs.push({ depth, ms: percentile(tpots, 50) });
        if (attention.length > 0) decodeAttentionMs.push({ depth, ms: percentile(attention, 50) });
      } finally {
        model.freeSequence(seq);
      }
    }
    const calc = kvBytesPerToken(
      { layers: c.numLayers, heads: c.numHeads, kvHeads, headDim: c.headDim },
      dtype,
    );
    const fit = await fits(ctx, c, plan, dtype, window);
    const cell: KvCell = {
      kvHeads,
      kvDtype: dtype,
      window,
      bytesPerToken: calc,
      allocatedBytesPerToken: model.kv.allocator.bytesPerTokenSlot,
      pagesAt,
      maxContext: fit.maxContext,
      maxSequences: fit.maxSequences,
      sequenceTokens: fit.sequenceTokens,
      decodeAttentionMs,
      tpotMs,
      prefillMs: percentile(prefill, 50),
      error: [],
    };
    return { cell, logits };
  } finally {
    model.destroy();
  }
}

/**
 * gen − 1 decode steps of `seq` from `token`. Timed: TPOT from the wall clock. Profiled: one pass per
 * kernel, read back after each step (none of it is a TPOT sample), and each step's decode attention
 * spans (every layer) summed. Ends with the pages the sequence holds.
 */
async function generation(
  model: Model,
  seq: number,
  token: number,
  gen: number,
  profiler: GpuProfiler | null,
) {
  let next = token;
  const start = performance.now();
  const attentionMs: number[] = [];
  for (let s = 1; s < gen; s++) {
    if (profiler) profiler.reset();
    const step = await model.decode(
      [{ seq, token: next }],
      profiler ? { timing: { profiler, perKernel: true } } : {},
    );
    if (profiler)
      attentionMs.push(
        (await profiler.read())
          .filter((span) => span.label === KERNEL_ROLES.attention)
          .reduce((a, span) => a + span.ms, 0),
      );
    next = step.nextTokens[0];
  }
  return {
    tpotMs: (performance.now() - start) / (gen - 1),
    attentionMs,
    heldPages: model.kv.allocator.heldPages(seq),
  };
}

/**
 * What fits `plan.poolBytes` for this KV type and window, with the real allocator over real GPU
 * pools: one sequence grown a page at a time (as decode and chunked prefill grow it, so a window
 * gives pages back as it goes) until the pool refuses it, capped at CONTEXT_CAP_FACTOR × maxSeqLen;
 * then as many sequences of maxSeqLen / 2 tokens as it admits. Every slot a sequence still holds is
 * then written with its marker and read back on the GPU (the capacity probe's check).
 */
async function fits(
  ctx: WorkloadContext<KvRecord>,
  c: ModelConfig,
  plan: KvPlan,
  dtype: KvDtype,
  window: number | null,
): Promise<{ maxContext: number; maxSequences: number; sequenceTokens: number }> {
  const shape: KvCacheShape = {
    layers: c.numLayers,
    kvHeads: c.numKvHeads,
    headDim: c.headDim,
    maxSeqLen: c.maxSeqLen * CONTEXT_CAP_FACTOR,
  };
  const sequenceTokens = Math.max(1, Math.floor(c.maxSeqLen / 2));
  const run = async (lengths: 'one' | 'many') => {
    const buffers = new BufferPool(ctx.gpu);
    try {
      // The pool's bytes over all layers, as whole pages of this type.
      const pages = Math.max(
        1,
        Math.floor(plan.poolBytes / c.numLayers / pageBytes(shape, plan.pageSize, dtype)),
      );
      const cache = await KvCache.create(buffers, shape, {
        mode: 'paged',
        pageSize: plan.pageSize,
        capacityTokens: pages * plan.pageSize,
        dtype,
        window,
      });
      const alloc = cache.allocator;
      const seqs: number[] = [];
      const grow = (seq: number, n: number) => {
        try {
          for (let done = 0; done < n; done += plan.pageSize)
            alloc.appendTokens(seq, Math.min(plan.pageSize, n - done));
          return true;
        } catch (e) {
          if (e instanceof KvCacheExhaustedError) return false;
          throw e;
        }
      };
      let maxContext = 0;
      if (lengths === 'one') {
        const seq = alloc.createSequence();
        seqs.push(seq);
        while (maxContext < shape.maxSeqLen && grow(seq, plan.pageSize)) maxContext = alloc.length(seq);
      } else {
        for (;;) {
          const seq = alloc.createSequence();
          if (!grow(seq, sequenceTokens)) {
            alloc.freeSequence(seq);
            break;
          }
          seqs.push(seq);
        }
      }
      // The slots each sequence still holds (a window's first pages are gone).
      const held = seqs.map((seq) => {
        const table = alloc.blockTable(seq);
        const from = (table.length - alloc.heldPages(seq)) * plan.pageSize;
        const out: number[] = [];
        for (let p = from; p < alloc.length(seq); p++)
          out.push(table[Math.floor(p / plan.pageSize)] * plan.pageSize + (p % plan.pageSize));
        return out;
      });
      const verified = await verifySlots(ctx, cache, held);
      if (!verified) throw new Error(`KV matrix: the slots of ${dtype} KV did not read back their markers`);
      return { maxContext, maxSequences: seqs.length };
    } finally {
      buffers.destroyAll();
    }
  };
  const one = await run('one');
  const many = await run('many');
  return { maxContext: one.maxContext, maxSequences: many.maxSequences, sequenceTokens };
}

/** The matrix's engine: its cells in the order they ran make its section. */
export const kvEngine: WorkloadEngine<'kv', KvRecord> = {
  run: kvMatrix,
  describe: (r) =>
    r.type === 'kv'
      ? `KV ${r.cell.kvHeads} heads ${r.cell.kvDtype} window ${r.cell.window ?? 'none'}: ${r.cell.allocatedBytesPerToken} B/token`
      : `${taskVariant(r.taskQuality)}: ${r.taskQuality.metric} on the ${r.taskQuality.slice} slice`,
  collect: (records) => {
    const cells = records.flatMap((r) => (r.type === 'kv' ? [r] : []));
    if (cells.length === 0) return {};
    const tasks = records.flatMap((r) => (r.type === 'kvTask' ? [r.taskQuality] : []));
    return {
      kv: {
        ...cells[0].common,
        cells: cells.map((r) => r.cell),
        ...(tasks.length > 0 ? { taskQuality: tasks } : {}),
      },
    };
  },
  targets: () => [],
};
