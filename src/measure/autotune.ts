import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import { GemvKernel } from '../kernels/gemv.ts';
import { disposeCalls, type KernelCall, type KernelContext } from '../kernels/kernel.ts';
import { MatmulKernel } from '../kernels/matmul.ts';
import { RmsNormKernel } from '../kernels/rowwise.ts';
import {
  type AnyVariant,
  type AttentionVariant,
  type KernelVariants,
  VARIANT_CANDIDATES,
  variantName,
  variantSupported,
} from '../kernels/variants.ts';
import { dims, type ModelConfig } from '../model/config.ts';
import { compare, matmulRef, rmsNormRef } from '../model/reference.ts';
import { attentionDecodeCase, attentionPrefillCase, type Case } from './kernel-suite.ts';
import { seededData as data, KernelTimer } from './kernel-timer.ts';

/** How the search times each candidate. */
const SEARCH = {
  warmup: 1,
  reps: 3,
  /** Allclose tolerance against the float64 reference; a candidate outside it is never chosen. */
  tolerance: { atol: 1e-4, rtol: 1e-4 },
  /** Rows of the prefill-shaped timing problems (the model's own widths, a typical prompt length). */
  prefillRows: 256,
} as const;

export interface TuningTrial {
  variant: string;
  valid: boolean;
  /** Median GPU (or wall) time on the op's timing shape; null when invalid or failed. */
  ms: number | null;
  error?: string;
}

export interface TuningChoice {
  op: keyof KernelVariants;
  shape: string;
  chosen: string;
  trials: TuningTrial[];
}

export interface TuneResult {
  variants: KernelVariants;
  choices: TuningChoice[];
  searchMs: number;
}

/**
 * One op's search: each candidate is first checked against the CPU reference on a small shape
 * that is not a tile multiple, then timed on the model's own shape; the fastest valid one wins.
 * A candidate that fails to compile or validate is recorded and never chosen.
 */
type Prepared = Awaited<ReturnType<Case['prepare']>>;

async function search<V extends AnyVariant>(
  op: keyof KernelVariants,
  shape: string,
  candidates: readonly V[],
  check: (v: V) => Promise<boolean>,
  time: (v: V) => Promise<number>,
): Promise<{ chosen: V; choice: TuningChoice }> {
  const trials: TuningTrial[] = [];
  let best: { v: V; ms: number } | undefined;
  for (const v of candidates) {
    try {
      const valid = await check(v);
      const ms = valid ? await time(v) : null;
      trials.push({ variant: variantName(v), valid, ms });
      if (ms !== null && (!best || ms < best.ms)) best = { v, ms };
    } catch (e) {
      trials.push({
        variant: variantName(v),
        valid: false,
        ms: null,
        error: (e as Error).message.slice(0, 300),
      });
    }
  }
  if (!best) throw new Error(`autotune: no ${op} variant passed validation (${JSON.stringify(trials)})`);
  return { chosen: best.v, choice: { op, shape, chosen: variantName(best.v), trials } };
}

/**
 * Per-device kernel selection: for each op with more than one family, validate and time every
 * candidate on this model's shapes and keep the fastest correct one.
 */
export async function autotune(
  gpu: Gpu,
  pipelines: PipelineCache,
  config: ModelConfig,
  batch: number,
): Promise<TuneResult> {
  const t0 = performance.now();
  const ctx: KernelContext = { gpu, pipelines };
  const profiler = new GpuProfiler(gpu, 1);
  const bench = new KernelTimer(gpu, profiler, SEARCH);
  const { d, ffn } = dims(config);
  const L = Math.min(SEARCH.prefillRows, config.maxSeqLen);
  const calls: KernelCall[] = [];
  const keep = (c: KernelCall) => {
    calls.push(c);
    return c;
  };
  try {
    // Matmul: validate on 33x67x132, time the gate/up projection of an L-token prompt.
    const [vm, vn, vk] = [33, 67, 132];
    const va = data(vm * vk, 1);
    const vb = data(vn * vk, 2);
    const vIn = bench.input(va);
    const vW = bench.input(vb);
    const vOut = bench.output(vm * Math.max(vn, vk));
    const matmulWant = matmulRef(va, vb, vm, vk, vn);
    const tIn = bench.input(data(L * d, 3));
    const tW = bench.input(data(ffn * d, 4));
    const tOut = bench.output(L * Math.max(ffn, d));
    const matmul = await search(
      'matmul',
      `[${L}×${d}]·[${d}×${ffn}]`,
      VARIANT_CANDIDATES.matmul,
      async (v) => {
        const k = await MatmulKernel.create(ctx, v);
        await bench.run(keep(k.call({ a: vIn, b: vW, c: vOut, M: vm, N: vn, K: vk })));
        return compare(await bench.read(vOut, vm * vn), matmulWant, SEARCH.tolerance).passed;
      },
      async (v) =>
        bench.time(
          keep((await MatmulKernel.create(ctx, v)).call({ a: tIn, b: tW, c: tOut, M: L, N: ffn, K: d })),
        ),
    );

    // GEMV: validate at the decode batch on 67x132, time the gate projection of one decode step.
    const gemvWant = matmulRef(va, vb, batch, vk, vn);
    const gemv = await search(
      'gemv',
      `[${batch}×${d}]·[${d}×${ffn}]`,
      VARIANT_CANDIDATES.gemv.filter((v) => variantSupported(v, gpu)),
      async (v) => {
        const k = await GemvKernel.create(ctx, v, batch);
        await bench.run(keep(k.call({ x: vIn, w: vW, y: vOut, M: batch, N: vn, K: vk })));
        return compare(await bench.read(vOut, batch * vn), gemvWant, SEARCH.tolerance).passed;
      },
      async (v) =>
        bench.time(
          keep(
            (await GemvKernel.create(ctx, v, batch)).call({ x: tIn, w: tW, y: tOut, M: batch, N: ffn, K: d }),
          ),
        ),
    );

    // RMSNorm: validate on 33 rows of 132, time L rows of d.
    const normW = data(vk, 5);
    const normWBuf = bench.input(normW);
    const normWant = rmsNormRef(va, normW, vm, vk, 1e-5);
    const tNormW = bench.input(data(d, 6));
    const rmsnorm = await search(
      'rmsnorm',
      `[${L}×${d}]`,
      VARIANT_CANDIDATES.rmsnorm,
      async (v) => {
        const k = await RmsNormKernel.create(ctx, v);
        await bench.run(keep(k.call({ x: vIn, weight: normWBuf, out: vOut, rows: vm, d: vk, eps: 1e-5 })));
        return compare(await bench.read(vOut, vm * vk), normWant, SEARCH.tolerance).passed;
      },
      async (v) =>
        bench.time(
          keep(
            (await RmsNormKernel.create(ctx, v)).call({
              x: tIn,
              weight: tNormW,
              out: tOut,
              rows: L,
              d,
              eps: 1e-5,
            }),
          ),
        ),
    );
    // Attention: the kernel suite's own cases (paged, pages of 16) at a typical prompt and depth.
    const viaCase = (make: (v: AttentionVariant) => Case) => {
      const prepared = new Map<AttentionVariant, Promise<Prepared>>();
      const prepare = (v: AttentionVariant) => {
        let p = prepared.get(v);
        if (!p) {
          p = make(v)
            .prepare(bench)
            .then(async (ready) => {
              for (const s of ready.setup ?? []) await bench.run(keep(s));
              keep(ready.call);
              return ready;
            });
          prepared.set(v, p);
        }
        return p;
      };
      return {
        check: async (v: AttentionVariant) => {
          const ready = await prepare(v);
          await bench.run(ready.call);
          return ready.check();
        },
        time: async (v: AttentionVariant) => bench.time((await prepare(v)).call),
      };
    };
    const prefillTrials = viaCase((v) => attentionPrefillCase(ctx, config, L, true, v));
    const attentionPrefill = await search(
      'attentionPrefill',
      `L=${L}`,
      VARIANT_CANDIDATES.attentionPrefill,
      prefillTrials.check,
      prefillTrials.time,
    );
    const depth = Math.min(SEARCH.prefillRows, config.maxSeqLen - 1);
    const decodeTrials = viaCase((v) => attentionDecodeCase(ctx, config, depth, batch, true, v));
    const attentionDecode = await search(
      'attentionDecode',
      `depth=${depth} batch=${batch}`,
      VARIANT_CANDIDATES.attentionDecode,
      decodeTrials.check,
      decodeTrials.time,
    );
    return {
      variants: {
        matmul: matmul.chosen,
        gemv: gemv.chosen,
        rmsnorm: rmsnorm.chosen,
        attentionPrefill: attentionPrefill.chosen,
        attentionDecode: attentionDecode.chosen,
      },
      choices: [matmul.choice, gemv.choice, rmsnorm.choice, attentionPrefill.choice, attentionDecode.choice],
      searchMs: performance.now() - t0,
    };
  } finally {
    disposeCalls(calls);
    bench.destroy();
    profiler.destroy();
  }
}
