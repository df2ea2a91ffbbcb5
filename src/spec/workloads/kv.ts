import { z } from 'zod';
import { KV_DTYPES, type KvDtype } from '../../kv/format.ts';
import type { ModelConfig } from '../../model/config.ts';
import {
  type CommonOptions,
  decodePrompt,
  depth,
  kvWindow,
  length,
  MAX_TIMED_PASSES,
  NO_NEEDS,
  repetitions,
  type Unfit,
  type WorkloadDescriptor,
  windowErrors,
} from '../workload.ts';
import { CapacityWorkloadSchema } from './capacity.ts';
import { FormatsWorkloadSchema, TASK_TOKENS_DEFAULT } from './formats.ts';
import { kvReport } from './kv-report.ts';
import { KvSectionSchema } from './kv-result.ts';

/** A list whose values are each given once. */
const unique = <T>(xs: readonly T[]) => new Set(xs).size === xs.length;

/**
 * The KV-shrinking matrix (`--suite kv`): on the run's model shape, variants over (KV heads, KV
 * element type, window), each measured for the memory a token costs, what fits one fixed pool, the
 * speed at depths and the error by position against f32 KV without a window. Every list is
 * optional: the runner chooses what is absent (the depths up to maxSeqLen among them).
 */
export const KvWorkloadSchema = z
  .object({
    kind: z.literal('kv'),
    /** KV head counts of the variants (`--kv-heads`); each must divide the model's heads. */
    kvHeads: z
      .array(z.number().int().positive().max(1024))
      .min(1)
      .max(16)
      .refine(unique, { message: 'a KV head count is listed twice' })
      .optional(),
    /** KV element types (`--kv-dtype` with --suite kv). */
    kvDtypes: z
      .array(z.enum(KV_DTYPES))
      .min(1)
      .max(KV_DTYPES.length)
      .refine(unique, { message: 'a KV type is listed twice' })
      .optional(),
    /** Windows, tokens; null is full attention (`--window none,64` with --suite kv). */
    windows: z
      .array(kvWindow.nullable())
      .min(1)
      .max(16)
      .refine(unique, { message: 'a window is listed twice' })
      .optional(),
    /** Decode depths of the speed and pages columns (`--depth`). */
    depths: z.array(depth).min(1).max(64).optional(),
    /** The prefill's L (`--prefill`, one length). */
    length: length.optional(),
    /** Tokens generated per TPOT sample (`--gen`). */
    gen: z.number().int().min(2).max(MAX_TIMED_PASSES).optional(),
    /** Tokens of the long context the error by position is measured over. */
    errorContext: length.optional(),
    /** The fixed pool of the fits columns, MiB over all layers (`--pool-mib`). */
    poolMiB: CapacityWorkloadSchema.shape.poolMiB.optional(),
    /**
     * A trained model: prompt tokens of each held-out slice every KV type and window is scored on
     * (`--task-tokens`; 0: every case), as the format sweep's task table.
     */
    taskTokens: FormatsWorkloadSchema.shape.taskTokens,
    taskSlices: FormatsWorkloadSchema.shape.taskSlices,
    ...repetitions,
  })
  .strict();

export type KvWorkload = z.infer<typeof KvWorkloadSchema>;

/** Whether a decode at `d` (its prompt, then `gen` tokens) fits a model of `maxSeqLen`. */
const depthFits = (d: number, gen: number, maxSeqLen: number) => decodePrompt(d) + gen - 1 <= maxSeqLen;

/** Decode depths and a prefill a model of `maxSeqLen` cannot hold (gen 2 when the runner picks it). */
function unfit(w: KvWorkload, maxSeqLen: number): Unfit[] {
  const gen = w.gen ?? 2;
  const out: Unfit[] = (w.depths ?? [])
    .filter((d) => !depthFits(d, gen, maxSeqLen))
    .map((d) => ({
      kind: 'kv',
      option: 'depths',
      value: d,
      message: `depth ${d} + ${gen} generated tokens exceeds the model's maxSeqLen of ${maxSeqLen}`,
    }));
  if (w.length !== undefined && w.length > maxSeqLen)
    out.push({
      kind: 'kv',
      option: 'prefill',
      value: w.length,
      message: `prompt length ${w.length} exceeds the model's maxSeqLen of ${maxSeqLen}`,
    });
  return out;
}

/** KV head counts that do not divide the heads, windows the model cannot take, a context too long. */
function modelErrors(w: KvWorkload, config: ModelConfig, kv: { pageSize: number }): string[] {
  const out = (w.kvHeads ?? [])
    .filter((k) => config.numHeads % k !== 0)
    .map(
      (k) =>
        `--kv-heads ${k} does not divide the model's ${config.numHeads} heads (query heads share KV heads in equal groups)`,
    );
  for (const window of w.windows ?? []) out.push(...windowErrors(window, kv.pageSize, config.maxSeqLen));
  if (w.errorContext !== undefined && w.errorContext > config.maxSeqLen)
    out.push(`errorContext ${w.errorContext} exceeds the model's maxSeqLen of ${config.maxSeqLen}`);
  return out;
}

const listText = (xs: readonly unknown[] | undefined, what: string) =>
  xs === undefined ? `${what} chosen by the run` : `${what} ${xs.map((x) => x ?? 'none').join(',')}`;

const section = {
  /** The KV-shrinking matrix (`--suite kv`): memory, fits, speed and error per cell. */
  kv: KvSectionSchema.optional(),
};

/** The options the kv suite reads: the lists its flags take, and the common sweep values. */
type KvOptions = CommonOptions & {
  kvHeads?: number[];
  kvDtype?: KvDtype[];
  window?: (number | null)[];
  poolMiB?: number;
  taskTokens?: number;
  taskSlices?: string[];
};

/** The KV-shrinking matrix: builds its own variants of the model; the run's model validates. */
export const kv = {
  kind: 'kv',
  settings: KvWorkloadSchema,
  unitName: 'cells',
  // The runner counts its own: the cells (lists it may choose) and, on a trained model, the task table.
  units: () => 0,
  label: (w) =>
    `KV matrix (${listText(w.kvHeads, 'KV heads')} × ${listText(w.kvDtypes, 'types')} × ${listText(w.windows, 'windows')})`,
  unfit,
  fit: (w, maxSeqLen) => {
    if (w.length !== undefined && w.length > maxSeqLen) return null;
    if (w.depths === undefined) return w;
    const depths = w.depths.filter((d) => depthFits(d, w.gen ?? 2, maxSeqLen));
    return depths.length > 0 ? { ...w, depths } : null;
  },
  modelErrors,
  // The variants are the runner's own models, one sequence at a time; the run's model is built to
  // validate, and the autotuner times decode attention at the longest depth asked for.
  needs: (w) => ({
    ...NO_NEEDS,
    model: true,
    kernels: true,
    decodeContext: w.depths ? Math.max(...w.depths.map(decodePrompt)) + (w.gen ?? 2) - 1 : 0,
  }),
  section,
  suite: {
    name: 'kv' as const,
    help: 'shrinking the KV cache: on the model shape, a matrix over KV heads (--kv-heads, each dividing the heads: MHA, GQA, MQA), KV types (--kv-dtype f32,f16,int8) and windows (--window none,W); per cell the KV bytes per token (calculated and allocated), the longest context and the most sequences that fit the --pool-mib pool, decode attention time and TPOT at --depth depths, a prefill of --prefill L, and the error by position against f32 KV without a window; on a trained model (trained-4m) also the task table by slice for each KV type and window of its own KV heads (--task-tokens N)',
    defaults: { prefill: [], depths: [], gen: 8, reps: 3 },
    weightList: false,
    build: (o: KvOptions): KvWorkload[] => [
      {
        kind: 'kv',
        ...(o.kvHeads && { kvHeads: o.kvHeads }),
        ...(o.kvDtype && { kvDtypes: o.kvDtype }),
        ...(o.window && { windows: o.window }),
        ...(o.depths && { depths: o.depths }),
        ...(o.prefill?.[0] !== undefined && { length: o.prefill[0] }),
        ...(o.gen !== undefined && { gen: o.gen }),
        ...(o.poolMiB !== undefined && { poolMiB: o.poolMiB }),
        taskTokens: o.taskTokens ?? TASK_TOKENS_DEFAULT,
        ...(o.taskSlices && { taskSlices: o.taskSlices }),
        reps: o.reps,
        warmup: o.warmup,
      },
    ],
  },
  report: (s) => (s.kv ? kvReport(s.kv) : []),
} satisfies WorkloadDescriptor<KvWorkload, typeof section>;
