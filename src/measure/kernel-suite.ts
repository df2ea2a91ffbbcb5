import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import {
  type AttentionConfig,
  PagedAttentionDecodeKernel,
  PagedAttentionPrefillKernel,
} from '../kernels/attention.ts';
import { EmbeddingKernel, ResidualAddKernel, RopeKernel, SwigluKernel } from '../kernels/elementwise.ts';
import { GemvKernel } from '../kernels/gemv.ts';
import { disposeCalls, type KernelCall, type KernelContext } from '../kernels/kernel.ts';
import { KvWriteKernel } from '../kernels/kv-write.ts';
import { MatmulKernel } from '../kernels/matmul.ts';
import { RmsNormKernel } from '../kernels/rowwise.ts';
import {
  type AttentionVariant,
  type KernelVariants,
  VARIANT_CANDIDATES,
  variantName,
  variantSupported,
} from '../kernels/variants.ts';
import { dims, type ModelConfig } from '../model/config.ts';
import { attentionRef, compare, matmulRef, rmsNormRef, ropeRef, swigluRef } from '../model/reference.ts';
import { ropeTable } from '../model/rope.ts';
import type { KernelPoint } from '../results/schema.ts';
import {
  attentionCost,
  type Cost,
  embeddingCost,
  linearCost,
  residualCost,
  rmsNormCost,
  ropeCost,
  swigluCost,
} from './cost.ts';
import { KernelTimer, seededData } from './kernel-timer.ts';
import { placeKernel, type Roofs } from './roofline.ts';
import { percentile } from './stats.ts';

/** The kernel suite's sweep: the presets' real shapes, at sizes a software adapter finishes in minutes. */
export const KERNEL_SUITE = {
  prefillLengths: [64, 256, 1024],
  gemvBatches: [1, 4, 8],
  decodeDepths: [256, 1023],
  decodeBatches: [1, 4],
  /** A GEMV whose weights (128 MiB of f32) dwarf any cache: the decode bandwidth target is judged here. */
  largeGemv: { N: 8192, K: 4096 },
  /** Tolerance of each kernel against the float64 reference on the rows it checks. */
  tolerance: { atol: 1e-4, rtol: 1e-4 },
  warmup: 1,
  reps: 3,
} as const;

export interface Case {
  name: string;
  variant: string;
  shape: Record<string, number>;
  cost: Cost;
  /** The largest single buffer the case allocates, checked against the device limits first. */
  bufferBytes: number;
  /** Builds inputs and the call; returns the call to time and a check against the reference. */
  prepare(t: KernelTimer): Promise<{ setup?: KernelCall[]; call: KernelCall; check: () => Promise<boolean> }>;
}

/** Rows of a matrix to check against the reference: first, middle, last (every row when few). */
function sampleRows(M: number): number[] {
  return M <= 8 ? Array.from({ length: M }, (_, i) => i) : [0, Math.floor(M / 2), M - 1];
}

function rowsOf(data: Float32Array, rows: number[], width: number): Float32Array {
  const out = new Float32Array(rows.length * width);
  rows.forEach((r, i) => {
    out.set(data.subarray(r * width, (r + 1) * width), i * width);
  });
  return out;
}

function linearCase(
  ctx: KernelContext,
  variants: KernelVariants,
  name: string,
  M: number,
  N: number,
  K: number,
  gemv: boolean,
): Case {
  return {
    name,
    variant: variantName(gemv ? variants.gemv : variants.matmul),
    shape: { M, K, N },
    cost: linearCost(M, N, K),
    bufferBytes: 4 * Math.max(M * K, N * K, M * N),
    async prepare(t) {
      const a = seededData(M * K, M + N);
      const b = seededData(N * K, N + K);
      const [aBuf, bBuf, cBuf] = [t.input(a), t.input(b), t.output(M * N)];
      const call = gemv
        ? (await GemvKernel.create(ctx, variants.gemv, M)).call({ x: aBuf, w: bBuf, y: cBuf, M, N, K })
        : (await MatmulKernel.create(ctx, variants.matmul)).call({ a: aBuf, b: bBuf, c: cBuf, M, N, K });
      const check = async () => {
        const rows = sampleRows(M);
        const want = matmulRef(rowsOf(a, rows, K), b, rows.length, K, N);
        const got = rowsOf(await t.read(cBuf, M * N), rows, N);
        return compare(got, want, KERNEL_SUITE.tolerance).passed;
      };
      return { call, check };
    },
  };
}

/** Fills a paged pool (pages of 16, shuffled order) or a contiguous slot with `tokens` K/V rows. */
async function fillCache(
  ctx: KernelContext,
  t: KernelTimer,
  a: AttentionConfig & { kvWidth: number },
  sequences: number,
  tokens: number,
  seed: number,
) {
  const pagesPerSeq = Math.ceil(tokens / a.pageSize);
  const totalPages = sequences * pagesPerSeq;
  const order = Array.from({ length: totalPages }, (_, i) => (i * 7919) % totalPages);
  const unique = new Set(order).size === totalPages ? order : order.map((_, i) => i);
  const tables = Array.from({ length: sequences }, (_, s) =>
    unique.slice(s * pagesPerSeq, (s + 1) * pagesPerSeq),
  );
  const pool = t.output(totalPages * 2 * a.kvWidth * a.pageSize);
  const write = await KvWriteKernel.create(ctx);
  const k = seededData(sequences * tokens * a.kvWidth, seed);
  const v = seededData(sequences * tokens * a.kvWidth, seed + 1);
  const slots = tables.flatMap((table) =>
    Array.from(
      { length: tokens },
      (_, p) => table[Math.floor(p / a.pageSize)] * a.pageSize + (p % a.pageSize),
    ),
  );
  const setup = write.call({
    k: t.input(k),
    v: t.input(v),
    slots: t.inputU32(slots),
    pool,
    rows: sequences * tokens,
    kvHeads: a.kvHeads,
    headDim: a.headDim,
    pageSize: a.pageSize,
  });
  return { pool, tables, k, v, setup };
}

/** Prefill attention over L new tokens (paged in pages of 16, or contiguous). */
export function attentionPrefillCase(
  ctx: KernelContext,
  c: ModelConfig,
  L: number,
  paged: boolean,
  variant: AttentionVariant,
): Case {
  const dm = dims(c);
  const pageSize = paged ? 16 : L;
  const a = {
    heads: dm.heads,
    kvHeads: dm.kvHeads,
    headDim: dm.headDim,
    pageSize,
    paged,
    kvWidth: dm.kvWidth,
  };
  return {
    name: 'attention prefill',
    variant: `${variantName(variant)} ${paged ? 'paged(16)' : 'contiguous'}`,
    shape: { L, depth: 0, batch: 1, heads: dm.heads, headDim: dm.headDim },
    cost: attentionCost(dm, L, (L * (L + 1)) / 2, L),
    bufferBytes: 4 * 2 * Math.ceil(L / pageSize) * pageSize * dm.kvWidth,
    async prepare(t) {
      const { pool, tables, k, v, setup } = await fillCache(ctx, t, a, 1, L, 40);
      const q = seededData(L * dm.qWidth, 41);
      const out = t.output(L * dm.qWidth);
      const kernel = await PagedAttentionPrefillKernel.create(ctx, a, variant);
      const call = kernel.call({ q: t.input(q), pool, blockTable: t.inputU32(tables[0]), out, L, start: 0 });
      const check = async () => {
        const got = await t.read(out, L * dm.qWidth);
        return sampleRows(L).every((l) => {
          const want = attentionRef(q.subarray(l * dm.qWidth, (l + 1) * dm.qWidth), k, v, 1, l, dm);
          return compare(got.subarray(l * dm.qWidth, (l + 1) * dm.qWidth), want, KERNEL_SUITE.tolerance)
            .passed;
        });
      };
      return { setup: [setup], call, check };
    },
  };
}

/** One decode step of attention for B sequences at a context depth. */
export function attentionDecodeCase(
  ctx: KernelContext,
  c: ModelConfig,
  depth: number,
  B: number,
  paged: boolean,
  variant: AttentionVariant,
): Case {
  const dm = dims(c);
  const len = depth + 1;
  const pageSize = paged ? 16 : len;
  const a = {
    heads: dm.heads,
    kvHeads: dm.kvHeads,
    headDim: dm.headDim,
    pageSize,
    paged,
    kvWidth: dm.kvWidth,
  };
  return {
    name: 'attention decode',
    variant: `${variantName(variant)} ${paged ? 'paged(16)' : 'contiguous'}`,
    shape: { L: 1, depth, batch: B, heads: dm.heads, headDim: dm.headDim },
    cost: attentionCost(dm, B, B * len, B * len),
    bufferBytes: 4 * 2 * B * Math.ceil(len / pageSize) * pageSize * dm.kvWidth,
    async prepare(t) {
      const { pool, tables, k, v, setup } = await fillCache(ctx, t, a, B, len, 50);
      const q = seededData(B * dm.qWidth, 51);
      const out = t.output(B * dm.qWidth);
      const stride = tables[0].length;
      const kernel = await PagedAttentionDecodeKernel.create(ctx, a, variant);
      const call = kernel.call({
        q: t.input(q),
        pool,
        blockTables: t.inputU32(paged ? tables.flat() : tables.map((tb) => tb[0])),
        seqLens: t.inputU32(Array(B).fill(len)),
        out,
        batch: B,
        tableStride: paged ? stride : 1,
      });
      const check = async () => {
        const got = await t.read(out, B * dm.qWidth);
        const span = len * dm.kvWidth;
        return Array.from({ length: B }, (_, b) => b).every((b) => {
          const want = attentionRef(
            q.subarray(b * dm.qWidth, (b + 1) * dm.qWidth),
            k.subarray(b * span, (b + 1) * span),
            v.subarray(b * span, (b + 1) * span),
            1,
            len - 1,
            dm,
          );
          return compare(got.subarray(b * dm.qWidth, (b + 1) * dm.qWidth), want, KERNEL_SUITE.tolerance)
            .passed;
        });
      };
      return { setup: [setup], call, check };
    },
  };
}

function elementwiseCases(ctx: KernelContext, c: ModelConfig, variants: KernelVariants, L: number): Case[] {
  const { d, ffn, heads, headDim, qWidth, vocab } = dims(c);
  const table = ropeTable(c);
  return [
    {
      name: 'rmsnorm',
      variant: variantName(variants.rmsnorm),
      shape: { M: L, K: d, N: d },
      cost: rmsNormCost(L, d),
      bufferBytes: 4 * L * d,
      async prepare(t) {
        const x = seededData(L * d, 60);
        const w = seededData(d, 61);
        const out = t.output(L * d);
        const k = await RmsNormKernel.create(ctx, variants.rmsnorm);
        const call = k.call({ x: t.input(x), weight: t.input(w), out, rows: L, d, eps: c.rmsNormEps });
        const check = async () =>
          compare(await t.read(out, L * d), rmsNormRef(x, w, L, d, c.rmsNormEps), KERNEL_SUITE.tolerance)
            .passed;
        return { call, check };
      },
    },
    {
      name: 'rope',
      variant: 'elementwise',
      shape: { M: L, K: headDim, N: heads },
      cost: ropeCost(L, heads, headDim),
      bufferBytes: 4 * L * qWidth,
      async prepare(t) {
        const x = seededData(L * qWidth, 62);
        const xBuf = t.input(x);
        const positions = Array.from({ length: L }, (_, i) => i);
        const k = await RopeKernel.create(ctx);
        const cos = t.input(table.cos);
        const sin = t.input(table.sin);
        const call = k.call({ x: xBuf, positions: t.inputU32(positions), cos, sin, rows: L, heads, headDim });
        // RoPE works in place; the check runs it once more on fresh input.
        const check = async () => {
          t.write(xBuf, x);
          await t.run(call);
          const want = Float64Array.from(x);
          ropeRef(want, positions, heads, headDim, table);
          return compare(await t.read(xBuf, L * qWidth), want, KERNEL_SUITE.tolerance).passed;
        };
        return { call, check };
      },
    },
    {
      name: 'swiglu',
      variant: 'elementwise',
      shape: { M: L, K: ffn, N: ffn },
      cost: swigluCost(L * ffn),
      bufferBytes: 4 * L * ffn,
      async prepare(t) {
        const g = seededData(L * ffn, 63);
        const u = seededData(L * ffn, 64);
        const out = t.output(L * ffn);
        const call = (await SwigluKernel.create(ctx)).call({
          gate: t.input(g),
          up: t.input(u),
          out,
          n: L * ffn,
        });
        const check = async () =>
          compare(await t.read(out, L * ffn), swigluRef(g, u), KERNEL_SUITE.tolerance).passed;
        return { call, check };
      },
    },
    {
      name: 'residual add',
      variant: 'elementwise',
      shape: { M: L, K: d, N: d },
      cost: residualCost(L * d),
      bufferBytes: 4 * L * d,
      async prepare(t) {
        const x = seededData(L * d, 65);
        const y = seededData(L * d, 66);
        const xBuf = t.input(x);
        const call = (await ResidualAddKernel.create(ctx)).call({ x: xBuf, y: t.input(y), n: L * d });
        const check = async () => {
          t.write(xBuf, x);
          await t.run(call);
          const want = x.map((v, i) => v + y[i]);
          return compare(await t.read(xBuf, L * d), want, KERNEL_SUITE.tolerance).passed;
        };
        return { call, check };
      },
    },
    {
      name: 'embedding',
      variant: 'elementwise',
      shape: { M: L, K: d, N: vocab },
      cost: embeddingCost(L, d),
      bufferBytes: 4 * Math.min(vocab, 4096) * d,
      async prepare(t) {
        const rows = Math.min(vocab, 4096); // a slice of the table is enough to gather from
        const tableData = seededData(rows * d, 67);
        const tokens = Array.from({ length: L }, (_, i) => (i * 7919) % rows);
        const out = t.output(L * d);
        const call = (await EmbeddingKernel.create(ctx)).call({
          tokens: t.inputU32(tokens),
          table: t.input(tableData),
          out,
          rows: L,
          d,
          vocab: rows,
        });
        const check = async () => {
          const got = await t.read(out, L * d);
          return tokens.every((tok, l) =>
            got.subarray(l * d, (l + 1) * d).every((v, i) => v === tableData[tok * d + i]),
          );
        };
        return { call, check };
      },
    },
  ];
}

/** Every case of the suite for one model shape, in report order. */
function suiteCases(ctx: KernelContext, c: ModelConfig, variants: KernelVariants): Case[] {
  const { d, ffn, vocab, qWidth, kvWidth } = dims(c);
  const projections = [
    ['q proj', qWidth, d],
    ['k/v proj', kvWidth, d],
    ['o proj', d, qWidth],
    ['gate/up proj', ffn, d],
    ['down proj', d, ffn],
    ['lm head', vocab, d],
  ] as const;
  const lengths = KERNEL_SUITE.prefillLengths.filter((L) => L <= c.maxSeqLen);
  const cases: Case[] = [];
  for (const L of lengths) {
    for (const [name, N, K] of projections)
      cases.push(linearCase(ctx, variants, `matmul ${name}`, L, N, K, false));
  }
  for (const M of KERNEL_SUITE.gemvBatches) {
    for (const [name, N, K] of projections)
      cases.push(linearCase(ctx, variants, `gemv ${name}`, M, N, K, true));
  }
  const big = KERNEL_SUITE.largeGemv;
  // The bandwidth target is judged on this shape, so every GEMV family is timed on it: the
  // autotuner's pick on the model's small shapes need not be the best for a cache-busting one.
  for (const gemv of VARIANT_CANDIDATES.gemv.filter((v) => variantSupported(v, ctx.gpu))) {
    cases.push(linearCase(ctx, { ...variants, gemv }, 'gemv large', 1, big.N, big.K, true));
  }
  for (const L of lengths) {
    const v = variants.attentionPrefill;
    cases.push(attentionPrefillCase(ctx, c, L, true, v), attentionPrefillCase(ctx, c, L, false, v));
  }
  for (const depth of KERNEL_SUITE.decodeDepths.filter((x) => x + 1 <= c.maxSeqLen)) {
    for (const B of KERNEL_SUITE.decodeBatches) {
      const v = variants.attentionDecode;
      cases.push(
        attentionDecodeCase(ctx, c, depth, B, true, v),
        attentionDecodeCase(ctx, c, depth, B, false, v),
      );
    }
  }
  cases.push(...elementwiseCases(ctx, c, variants, Math.min(256, c.maxSeqLen)));
  return cases;
}

export interface KernelSuiteProgress {
  done: number;
  total: number;
  label: string;
  point?: KernelPoint;
}

/**
 * Times each kernel alone at the shapes the model really uses, after checking its output against
 * the CPU reference on the same inputs (sampled rows for large outputs). A kernel that fails the
 * check is recorded as failed and not timed.
 */
export async function runKernelSuite(
  gpu: Gpu,
  pipelines: PipelineCache,
  config: ModelConfig,
  variants: KernelVariants,
  roofs: Roofs,
  options: { onProgress?: (p: KernelSuiteProgress) => void; shouldStop?: () => boolean } = {},
): Promise<{ points: KernelPoint[]; failures: string[]; skipped: string[]; checked: number }> {
  const ctx: KernelContext = { gpu, pipelines };
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  const all = suiteCases(ctx, config, variants);
  const cases = all.filter((c) => c.bufferBytes <= limit);
  const points: KernelPoint[] = [];
  const failures: string[] = [];
  const skipped = all.filter((c) => c.bufferBytes > limit).map((c) => `${c.name} ${JSON.stringify(c.shape)}`);
  const profiler = new GpuProfiler(gpu, 1);
  try {
    for (const [i, kase] of cases.entries()) {
      if (options.shouldStop?.()) break;
      const timer = new KernelTimer(gpu, profiler, KERNEL_SUITE);
      const calls: KernelCall[] = [];
      const label = `${kase.name} ${JSON.stringify(kase.shape)}`;
      try {
        const { setup = [], call, check } = await kase.prepare(timer);
        calls.push(...setup, call);
        for (const s of setup) await timer.run(s);
        await timer.run(call);
        if (!(await check())) {
          failures.push(`${label} (${kase.variant}) differs from the CPU reference`);
          continue;
        }
        const samplesMs = await timer.samples(call);
        const medianMs = percentile(samplesMs, 50);
        const point: KernelPoint = {
          name: kase.name,
          variant: kase.variant,
          shape: kase.shape,
          medianMs,
          samplesMs,
          flops: kase.cost.flops,
          bytes: kase.cost.bytes,
          gflops: medianMs > 0 ? kase.cost.flops / (medianMs * 1e6) : 0,
          gbps: medianMs > 0 ? kase.cost.bytes / (medianMs * 1e6) : 0,
          ...placeKernel(kase.cost.flops, kase.cost.bytes, medianMs, roofs),
        };
        points.push(point);
        options.onProgress?.({ done: i + 1, total: cases.length, label, point });
      } finally {
        disposeCalls(calls);
        timer.destroy();
      }
    }
  } finally {
    profiler.destroy();
  }
  return { points, failures, skipped, checked: points.length + failures.length };
}
