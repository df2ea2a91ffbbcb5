import { KernelError, ReferenceMismatchError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import { attentionDecodeCase, attentionPrefillCase } from '../kernels/cases/attention.ts';
import type { KernelCase } from '../kernels/cases/case.ts';
import { ODD_SHAPES } from '../kernels/cases/catalogue.ts';
import { rmsNormCase } from '../kernels/cases/elementwise.ts';
import { gemvCase, matmulCase } from '../kernels/cases/linear.ts';
import { packedGemvCase, packedMatmulCase } from '../kernels/cases/packed.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import { KernelRig } from '../kernels/rig.ts';
import {
  type AnyVariant,
  DEFAULT_VARIANTS,
  type KernelVariants,
  packedVariantSupported,
  VARIANT_CANDIDATES,
  variantName,
  variantSupported,
} from '../kernels/variants.ts';
import { dims, type ModelConfig } from '../model/config.ts';
import type { PackedFormat } from '../model/formats.ts';
import { KernelTimer } from './kernel-timer.ts';

/** How the search times each candidate. */
const SEARCH = {
  warmup: 1,
  reps: 3,
  /** Rows of the prefill-shaped timing problems (the model's own widths, a typical prompt length). */
  prefillRows: 256,
  /** Page size of the attention problems, validated and timed (the paged cache's default). */
  pageSize: 16,
  /** Depth decode attention is timed at when the run names none (a kernel suite). */
  decodeDepth: 256,
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

/** The packed-weight kernels' choice for one format (what `autotunePacked` returns). */
export interface PackedTuneResult {
  variants: Pick<KernelVariants, 'packedGemv' | 'packedMatmul'>;
  choices: TuningChoice[];
  searchMs: number;
}

/** One op's search space: its candidates, the case each is validated on and the case it is timed on. */
interface OpSearch<V extends AnyVariant> {
  op: keyof KernelVariants;
  /** The timing shape, as the result reports it. */
  shape: string;
  candidates: readonly V[];
  validation: (v: V) => KernelCase;
  /** One case, or several whose medians are summed (an op the run calls at more than one shape). */
  timing: (v: V) => KernelCase | KernelCase[];
}

/**
 * One op's search: each candidate is first checked against the CPU reference on a small shape
 * that is not a tile multiple (every row), then timed on the model's own shape; the fastest valid
 * one wins. A candidate that fails to compile or validate is recorded and never chosen.
 */
async function search<V extends AnyVariant>(
  gpu: Gpu,
  profiler: GpuProfiler,
  s: OpSearch<V>,
  signal: AbortSignal | undefined,
): Promise<{ chosen: V; choice: TuningChoice }> {
  const trials: TuningTrial[] = [];
  let best: { v: V; ms: number } | undefined;
  for (const v of s.candidates) {
    signal?.throwIfAborted();
    const rig = new KernelRig(gpu, `autotune ${s.op} ${variantName(v)}`);
    try {
      const validation = await s.validation(v).prepare(rig);
      await rig.run(...validation.setup);
      const valid = (await validation.check()).passed;
      let ms: number | null = null;
      if (valid) {
        const timing = s.timing(v);
        ms = 0;
        for (const c of Array.isArray(timing) ? timing : [timing]) {
          const timed = await c.prepare(rig);
          await rig.run(...timed.setup);
          ms += await new KernelTimer(rig, profiler, SEARCH).time(timed.call);
        }
      }
      trials.push({ variant: variantName(v), valid, ms });
      if (ms !== null && (!best || ms < best.ms)) best = { v, ms };
    } catch (e) {
      trials.push({
        variant: variantName(v),
        valid: false,
        ms: null,
        error: (e as Error).message.slice(0, 300),
      });
    } finally {
      rig.destroy();
    }
  }
  if (!best) {
    const detail = `no ${s.op} variant passed validation (${JSON.stringify(trials)})`;
    // Candidates that ran and disagreed with the reference are a numerical bug; if every one
    // failed before producing output (compile errors, limits), the kernels themselves are at fault.
    throw trials.some((t) => t.error === undefined)
      ? new ReferenceMismatchError(`autotune: ${detail}`)
      : new KernelError(`autotune: ${detail}`);
  }
  return { chosen: best.v, choice: { op: s.op, shape: s.shape, chosen: variantName(best.v), trials } };
}

/**
 * Per-device kernel selection: for each op with more than one family, validate and time every
 * candidate on this model's shapes and keep the fastest correct one. An aborted `signal` stops the
 * search between candidates with the signal's reason.
 */
export async function autotune(
  gpu: Gpu,
  pipelines: PipelineCache,
  config: ModelConfig,
  gemvBatches: readonly number[],
  signal?: AbortSignal,
  /**
   * `format`: also choose the packed-weight kernels for weights in this format. `decodeContext`: the
   * longest context the run decodes at, where decode attention is timed (its families trade places
   * with the context's length: split-K wins long contexts); otherwise SEARCH.decodeDepth + 1.
   */
  opts: { format?: PackedFormat; decodeContext?: number } = {},
): Promise<TuneResult> {
  const batch = Math.max(...gemvBatches);
  const t0 = performance.now();
  const ctx: KernelContext = { gpu, pipelines };
  const profiler = new GpuProfiler(gpu, 1);
  const { d, ffn, heads, kvHeads, headDim } = dims(config);
  const L = Math.min(SEARCH.prefillRows, config.maxSeqLen);
  const context = Math.min(opts.decodeContext || SEARCH.decodeDepth + 1, config.maxSeqLen);
  const odd = ODD_SHAPES;
  const attention = { heads, kvHeads, headDim, paged: true, pageSize: SEARCH.pageSize };
  try {
    // Matmul: time the gate/up projection of an L-token prompt.
    const matmul = await search(
      gpu,
      profiler,
      {
        op: 'matmul',
        shape: `[${L}×${d}]·[${d}×${ffn}]`,
        candidates: VARIANT_CANDIDATES.matmul,
        validation: (variant) => matmulCase(ctx, { ...odd.matmul, variant }),
        timing: (variant) => matmulCase(ctx, { M: L, N: ffn, K: d, variant }),
      },
      signal,
    );
    // GEMV: time the gate projection of one decode step at each batch the run calls it with
    // (a speculative run decodes one row and verifies K+1), summed, so the choice does not favour
    // one side of a comparison the run reports.
    const gemv = await search(
      gpu,
      profiler,
      {
        op: 'gemv',
        shape: `${gemvBatches.map((m) => `[${m}×${d}]`).join('+')}·[${d}×${ffn}]`,
        candidates: VARIANT_CANDIDATES.gemv.filter((v) => variantSupported(v, gpu)),
        validation: (variant) => gemvCase(ctx, { ...odd.gemv, M: batch, variant }),
        timing: (variant) => gemvBatches.map((M) => gemvCase(ctx, { M, N: ffn, K: d, variant })),
      },
      signal,
    );
    // RMSNorm: time L rows of d.
    const rmsnorm = await search(
      gpu,
      profiler,
      {
        op: 'rmsnorm',
        shape: `[${L}×${d}]`,
        candidates: VARIANT_CANDIDATES.rmsnorm,
        validation: (variant) => rmsNormCase(ctx, { ...odd.rmsnorm, eps: config.rmsNormEps, variant }),
        timing: (variant) => rmsNormCase(ctx, { rows: L, d, eps: config.rmsNormEps, variant }),
      },
      signal,
    );
    // Attention: the model's heads in a paged cache, at a typical prompt and context depth.
    const attentionPrefill = await search(
      gpu,
      profiler,
      {
        op: 'attentionPrefill',
        shape: `L=${L}`,
        candidates: VARIANT_CANDIDATES.attentionPrefill,
        validation: (variant) =>
          attentionPrefillCase(ctx, { ...attention, ...odd.attentionPrefill, variant }),
        timing: (variant) => attentionPrefillCase(ctx, { ...attention, L, start: 0, variant }),
      },
      signal,
    );
    const attentionDecode = await search(
      gpu,
      profiler,
      {
        op: 'attentionDecode',
        shape: `depth=${context - 1} batch=${batch}`,
        candidates: VARIANT_CANDIDATES.attentionDecode,
        // Both with block tables as wide as the model's (maxSeqLen): the split family's grid covers
        // that many slices, empty ones included, as the model's replayed plan does.
        validation: (variant) =>
          attentionDecodeCase(ctx, {
            ...attention,
            lengths: odd.attentionDecode.lengths.slice(0, batch),
            capacity: config.maxSeqLen,
            variant,
          }),
        timing: (variant) =>
          attentionDecodeCase(ctx, {
            ...attention,
            lengths: Array<number>(batch).fill(context),
            capacity: config.maxSeqLen,
            variant,
          }),
      },
      signal,
    );
    const packed = opts.format
      ? await autotunePacked(gpu, pipelines, config, gemvBatches, opts.format, signal)
      : undefined;
    return {
      variants: {
        matmul: matmul.chosen,
        gemv: gemv.chosen,
        rmsnorm: rmsnorm.chosen,
        attentionPrefill: attentionPrefill.chosen,
        attentionDecode: attentionDecode.chosen,
        packedGemv: packed?.variants.packedGemv ?? DEFAULT_VARIANTS.packedGemv,
        packedMatmul: packed?.variants.packedMatmul ?? DEFAULT_VARIANTS.packedMatmul,
      },
      choices: [
        matmul.choice,
        gemv.choice,
        rmsnorm.choice,
        attentionPrefill.choice,
        attentionDecode.choice,
        ...(packed?.choices ?? []),
      ],
      searchMs: performance.now() - t0,
    };
  } finally {
    profiler.destroy();
  }
}

/**
 * The packed-weight kernels' search for weights in `format`, on the same shapes as the f32 GEMV and
 * matmul: the GEMV timed on the gate projection at every decode batch the run uses (summed), the
 * matmul on the gate projection of an L-token prompt; each candidate first validated on the odd
 * packed shapes (a part group at the end of K). Candidates that need shader-f16 are tried only on f16
 * weights where the device has it.
 */
export async function autotunePacked(
  gpu: Gpu,
  pipelines: PipelineCache,
  config: ModelConfig,
  gemvBatches: readonly number[],
  format: PackedFormat,
  signal?: AbortSignal,
): Promise<PackedTuneResult> {
  const batch = Math.max(...gemvBatches);
  const t0 = performance.now();
  const ctx: KernelContext = { gpu, pipelines };
  const profiler = new GpuProfiler(gpu, 1);
  const { d, ffn } = dims(config);
  const L = Math.min(SEARCH.prefillRows, config.maxSeqLen);
  const odd = ODD_SHAPES;
  try {
    const packedMatmul = await search(
      gpu,
      profiler,
      {
        op: 'packedMatmul',
        shape: `[${L}×${d}]·[${d}×${ffn}] ${format}`,
        candidates: VARIANT_CANDIDATES.packedMatmul.filter((v) => packedVariantSupported(v, format, gpu)),
        validation: (variant) => packedMatmulCase(ctx, { ...odd.packedMatmul, format, variant }),
        timing: (variant) => packedMatmulCase(ctx, { M: L, N: ffn, K: d, format, variant }),
      },
      signal,
    );
    const packedGemv = await search(
      gpu,
      profiler,
      {
        op: 'packedGemv',
        shape: `${gemvBatches.map((m) => `[${m}×${d}]`).join('+')}·[${d}×${ffn}] ${format}`,
        candidates: VARIANT_CANDIDATES.packedGemv.filter((v) => packedVariantSupported(v, format, gpu)),
        validation: (variant) => packedGemvCase(ctx, { ...odd.packedGemv, M: batch, format, variant }),
        timing: (variant) =>
          gemvBatches.map((M) => packedGemvCase(ctx, { M, N: ffn, K: d, format, variant })),
      },
      signal,
    );
    return {
      variants: { packedGemv: packedGemv.chosen, packedMatmul: packedMatmul.chosen },
      choices: [packedMatmul.choice, packedGemv.choice],
      searchMs: performance.now() - t0,
    };
  } finally {
    profiler.destroy();
  }
}
