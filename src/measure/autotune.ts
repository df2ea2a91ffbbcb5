import { attentionDecodeCase, attentionPrefillCase } from '../checks/attention.ts';
import type { KernelCase } from '../checks/case.ts';
import { ODD_SHAPES, packedOddShapes } from '../checks/catalogue.ts';
import { rmsNormCase } from '../checks/elementwise.ts';
import { gemvCase, matmulCase } from '../checks/linear.ts';
import { packedGemvCase, packedMatmulCase } from '../checks/packed.ts';
import { KernelError, ReferenceMismatchError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import { GpuProfiler } from '../gpu/profiler.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import { KernelRig } from '../kernels/rig.ts';
import {
  type AnyVariant,
  DEFAULT_VARIANTS,
  familyFuses,
  GEMV_FAMILIES,
  type KernelVariants,
  MATMUL_FAMILIES,
  packedVariantSupported,
  VARIANT_CANDIDATES,
  variantName,
  variantSupported,
} from '../kernels/variants.ts';
import { dims, type ModelConfig } from '../model/config.ts';
import type { PackedFormat } from '../weight-format.ts';
import { KernelTimer } from './kernel-timer.ts';
import { successiveHalving } from './search.ts';

/** How the search times each candidate (part of the tuning cache's key: other settings, another search). */
export const SEARCH = {
  warmup: 1,
  reps: 3,
  /** Rows of the prefill-shaped timing problems (the model's own widths, a typical prompt length). */
  prefillRows: 256,
  /** Page size of the attention problems, validated and timed (the paged cache's default). */
  pageSize: 16,
  /**
   * Successive halving over the spaces that have dozens of points (src/measure/search.ts): rung 0
   * times each candidate once, each later rung keeps a third and times it three times as often.
   * Their budgets (compiles included: SwiftShader's JIT takes 0.3–1 s per matmul pipeline) keep
   * the whole search under 30 s on the software adapter for ci-tiny; a GPU compiles in
   * milliseconds and tries every point.
   */
  halving: { eta: 3, reps0: 1 },
  budgetMs: { matmul: 15_000, gemv: 4_000 } as Partial<Record<keyof KernelVariants, number>>,
  /** Candidates tried whatever the budget: each family's centre, which the spaces list first. */
  minTried: { matmul: MATMUL_FAMILIES, gemv: GEMV_FAMILIES } as Partial<Record<keyof KernelVariants, number>>,
  /** Depth decode attention is timed at when the run names none (a kernel suite). */
  decodeDepth: 256,
} as const;

export interface TuningTrial {
  variant: string;
  valid: boolean;
  /** Median GPU (or wall) time on the op's timing shape, at the last rung it reached; null when invalid, failed or not tried. */
  ms: number | null;
  error?: string;
  /** The last successive-halving rung it was timed in (0 = the first timing); absent if never timed. */
  rung?: number;
  /** Not tried: the op's search budget was spent before its turn. */
  skipped?: true;
}

/** How one op's space was searched. */
export interface TuningSearch {
  method: 'successive-halving';
  /** Survivors per rung ⌈n / eta⌉; repetitions grow eta× per rung. */
  eta: number;
  /** Timing repetitions at rung 0. */
  reps0: number;
  /** The op's budget (null: unbounded, every candidate is tried). */
  budgetMs: number | null;
  /** Points in the space, tried (compiled, validated, timed or failed), and rungs run. */
  space: number;
  tried: number;
  rungs: number;
  budgetSpent: boolean;
}

export interface TuningChoice {
  op: keyof KernelVariants;
  shape: string;
  chosen: string;
  trials: TuningTrial[];
  search?: TuningSearch;
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
  /** Weights of the summed timing cases (how often the run calls each shape); 1 each if absent. */
  weights?: readonly number[];
}

/** Times `cases` (weighted sum of medians) with `reps` repetitions each, on buffers made for the purpose. */
async function timeCases(
  rig: KernelRig,
  profiler: GpuProfiler,
  cases: KernelCase | KernelCase[],
  weights: readonly number[] | undefined,
  reps: number,
): Promise<number> {
  let ms = 0;
  for (const [i, c] of (Array.isArray(cases) ? cases : [cases]).entries()) {
    const timed = await c.prepare(rig);
    await rig.run(...timed.setup);
    ms +=
      (weights?.[i] ?? 1) *
      (await new KernelTimer(rig, profiler, { warmup: SEARCH.warmup, reps }).time(timed.call));
  }
  return ms;
}

/**
 * One op's search: successive halving (src/measure/search.ts) over its candidates. In rung 0 each
 * candidate is first checked against the CPU reference on a small shape that is not a tile multiple
 * (every row), then timed on the model's own shape; a candidate that fails to compile or validate is
 * recorded and never chosen. Later rungs time the fastest third again, more often, on fresh buffers
 * (the pipelines stay compiled). The fastest of the last rung wins.
 */
async function search<V extends AnyVariant>(
  gpu: Gpu,
  profiler: GpuProfiler,
  s: OpSearch<V>,
  signal: AbortSignal | undefined,
  onProgress?: (label: string) => void,
): Promise<{ chosen: V; choice: TuningChoice }> {
  // Each trial says where the search is: the op, the family, and how many of its candidates have run.
  let tries = 0;
  const say = (v: V, what: string) =>
    onProgress?.(`${s.op}: ${what} ${variantName(v)} (trial ${++tries}; ${s.candidates.length} candidates)`);
  const budgetMs = SEARCH.budgetMs[s.op] ?? null;
  // Ops with a handful of candidates keep the old protocol: every one timed SEARCH.reps times.
  const halving =
    budgetMs === null ? { eta: Math.max(2, s.candidates.length), reps0: SEARCH.reps } : SEARCH.halving;
  const first = (v: V) => async (reps: number) => {
    signal?.throwIfAborted();
    say(v, 'validating and timing');
    const rig = new KernelRig(gpu, `autotune ${s.op} ${variantName(v)}`);
    try {
      const validation = await s.validation(v).prepare(rig);
      await rig.run(...validation.setup);
      if (!(await validation.check()).passed) return { valid: false, ms: null };
      return { valid: true, ms: await timeCases(rig, profiler, s.timing(v), s.weights, reps) };
    } catch (e) {
      return { valid: false, ms: null, error: (e as Error).message.slice(0, 300) };
    } finally {
      rig.destroy();
    }
  };
  const again = async (v: V, reps: number) => {
    signal?.throwIfAborted();
    say(v, 'timing again');
    const rig = new KernelRig(gpu, `autotune ${s.op} ${variantName(v)}`);
    try {
      return await timeCases(rig, profiler, s.timing(v), s.weights, reps);
    } finally {
      rig.destroy();
    }
  };
  const r = await successiveHalving(s.candidates, first, again, {
    ...halving,
    minTried: SEARCH.minTried[s.op] ?? 0,
    budgetMs: budgetMs ?? Number.POSITIVE_INFINITY,
    now: () => performance.now(),
  });
  const trials: TuningTrial[] = r.records.map((x) => ({
    variant: variantName(x.candidate),
    valid: x.valid,
    ms: x.ms,
    ...(x.error !== undefined ? { error: x.error } : {}),
    ...(x.rung >= 0 ? { rung: x.rung } : {}),
    ...(x.skipped ? { skipped: true as const } : {}),
  }));
  if (r.best === undefined) {
    const detail = `no ${s.op} variant passed validation (${JSON.stringify(trials)})`;
    // Candidates that ran and disagreed with the reference are a numerical bug; if every one
    // failed before producing output (compile errors, limits), the kernels themselves are at fault.
    throw trials.some((t) => t.error === undefined && !t.skipped)
      ? new ReferenceMismatchError(`autotune: ${detail}`)
      : new KernelError(`autotune: ${detail}`);
  }
  const search: TuningSearch = {
    method: 'successive-halving',
    eta: halving.eta,
    reps0: halving.reps0,
    budgetMs,
    space: s.candidates.length,
    tried: r.records.filter((x) => !x.skipped).length,
    rungs: r.rungs,
    budgetSpent: r.budgetSpent,
  };
  return {
    chosen: r.best,
    choice: { op: s.op, shape: s.shape, chosen: variantName(r.best), trials, search },
  };
}

/** One layer's prefill projections by shape (N outputs from K inputs), and how many of each it runs. */
export function matmulProjections(d: number, ffn: number, qWidth: number, kvWidth: number) {
  return [
    { name: 'q', N: qWidth, K: d, count: 1 },
    { name: 'k/v', N: kvWidth, K: d, count: 2 },
    { name: 'o', N: d, K: qWidth, count: 1 },
    { name: 'gate/up', N: ffn, K: d, count: 2 },
    { name: 'down', N: d, K: ffn, count: 1 },
  ];
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
   * `format`: also choose the packed-weight kernels for weights in this format. `fused` (default
   * true): the run's model runs the fused graph, so the linear ops search only the families that
   * take its fusions (src/kernels/fuse.ts); false searches every family, for the unfused graph.
   * `decodeContext`: the longest context the run decodes at, where decode attention is timed (its
   * families trade places with the context's length: split-K wins long contexts); otherwise
   * SEARCH.decodeDepth + 1.
   */
  opts: {
    format?: PackedFormat;
    /** The [N, K] the packed kernels are timed on: a tensor of the model in `format` (autotunePacked). */
    packedWeight?: { N: number; K: number };
    fused?: boolean;
    decodeContext?: number;
    /** Called before each trial with where the search is (the op, the family, the trial count). */
    onProgress?: (label: string) => void;
  } = {},
): Promise<TuneResult> {
  const fused = opts.fused ?? true;
  const batch = Math.max(...gemvBatches);
  const t0 = performance.now();
  const ctx: KernelContext = { gpu, pipelines };
  const profiler = new GpuProfiler(gpu, 1);
  const { d, ffn, heads, kvHeads, headDim, qWidth, kvWidth } = dims(config);
  const L = Math.min(SEARCH.prefillRows, config.maxSeqLen);
  const context = Math.min(opts.decodeContext || SEARCH.decodeDepth + 1, config.maxSeqLen);
  const odd = ODD_SHAPES;
  const attention = { heads, kvHeads, headDim, paged: true, pageSize: SEARCH.pageSize };
  try {
    // Matmul: one layer's projections of an L-token prompt, each shape weighted by how often a
    // layer calls it, so the choice is the fastest for the model's prefill, not for one shape.
    const projections = matmulProjections(d, ffn, qWidth, kvWidth);
    const matmul = await search(
      gpu,
      profiler,
      {
        op: 'matmul',
        shape: `L=${L}, K→N: ${projections.map((p) => `${p.name} ${p.count > 1 ? `${p.count}×` : ''}${p.K}→${p.N}`).join(', ')}`,
        candidates: VARIANT_CANDIDATES.matmul.filter((v) => !fused || familyFuses('matmul', v)),
        validation: (variant) => matmulCase(ctx, { ...odd.matmul, variant }),
        timing: (variant) => projections.map((p) => matmulCase(ctx, { M: L, N: p.N, K: p.K, variant })),
        weights: projections.map((p) => p.count),
      },
      signal,
      opts.onProgress,
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
        candidates: VARIANT_CANDIDATES.gemv.filter(
          (v) => variantSupported(v, gpu) && (!fused || familyFuses('gemv', v)),
        ),
        validation: (variant) => gemvCase(ctx, { ...odd.gemv, M: batch, variant }),
        timing: (variant) => gemvBatches.map((M) => gemvCase(ctx, { M, N: ffn, K: d, variant })),
      },
      signal,
      opts.onProgress,
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
      opts.onProgress,
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
      opts.onProgress,
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
      opts.onProgress,
    );
    const packed = opts.format
      ? await autotunePacked(gpu, pipelines, config, gemvBatches, opts.format, signal, {
          fused: opts.fused,
          weight: opts.packedWeight,
          onProgress: opts.onProgress,
        })
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
  /**
   * As autotune's: only the families that take the fused graph's fusions, unless false. `weight`:
   * the [N, K] to time on (a tensor of the model in `format`; a GGUF type's rows are whole blocks,
   * which the gate projection's may not be: SmolLM2's d of 576 is no multiple of 256), by default
   * the gate projection.
   */
  opts: { fused?: boolean; weight?: { N: number; K: number }; onProgress?: (label: string) => void } = {},
): Promise<PackedTuneResult> {
  const fused = opts.fused ?? true;
  const batch = Math.max(...gemvBatches);
  const t0 = performance.now();
  const ctx: KernelContext = { gpu, pipelines };
  const profiler = new GpuProfiler(gpu, 1);
  const { d, ffn } = dims(config);
  const { N, K } = opts.weight ?? { N: ffn, K: d };
  const L = Math.min(SEARCH.prefillRows, config.maxSeqLen);
  try {
    const packedMatmul = await search(
      gpu,
      profiler,
      {
        op: 'packedMatmul',
        shape: `[${L}×${K}]·[${K}×${N}] ${format}`,
        candidates: VARIANT_CANDIDATES.packedMatmul.filter(
          (v) => packedVariantSupported(v, format, gpu) && (!fused || familyFuses('packedMatmul', v)),
        ),
        validation: (variant) =>
          packedMatmulCase(ctx, { ...packedOddShapes(format).matmul, format, variant }),
        timing: (variant) => packedMatmulCase(ctx, { M: L, N, K, format, variant }),
      },
      signal,
      opts.onProgress,
    );
    const packedGemv = await search(
      gpu,
      profiler,
      {
        op: 'packedGemv',
        shape: `${gemvBatches.map((m) => `[${m}×${K}]`).join('+')}·[${K}×${N}] ${format}`,
        candidates: VARIANT_CANDIDATES.packedGemv.filter(
          (v) => packedVariantSupported(v, format, gpu) && (!fused || familyFuses('packedGemv', v)),
        ),
        validation: (variant) =>
          packedGemvCase(ctx, { ...packedOddShapes(format).gemv, M: batch, format, variant }),
        timing: (variant) => gemvBatches.map((M) => packedGemvCase(ctx, { M, N, K, format, variant })),
      },
      signal,
      opts.onProgress,
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
