import { z } from 'zod';
import { KV_DTYPES } from '../../kv/format.ts';
import {
  escapeMarkdown,
  fixed,
  formatBytes,
  MISSING,
  markdownDelimiter,
  markdownRow,
} from '../../markdown.ts';
import { count, nonNegative } from '../fields.ts';
import { NO_NEEDS, pageSize, type WorkloadDescriptor } from '../workload.ts';

const pagedContiguous = z.object({ paged: count, contiguous: count }).strict();

const poolBytes = z.object({ reservedBytes: count, usedBytes: count, wastedBytes: count }).strict();

/**
 * The capacity probe (workload 'capacity'): how many sequences of a seeded length mix the real
 * KV pool admitted, paged and contiguous, against what the KV calculator predicts for the same
 * pool bytes and the same lengths.
 */
export const CapacityResultSchema = z
  .object({
    /** The KV type the pool stored (`--kv-dtype`); absent in results from before it existed (f32). */
    kvDtype: z.enum(KV_DTYPES).optional(),
    /** From the calculator: 2 · layers · kvHeads · (headDim · bytes per value, + 4 per row for int8's scale). */
    kvBytesPerToken: count,
    pageSize: count,
    maxSeqLen: count,
    /** The pool asked for, and the per-layer buffer limit of the device that may have capped it. */
    requestedBytes: count,
    deviceLimitBytes: count,
    /** The mix the sequences were drawn from. */
    mix: z
      .object({ meanTokens: count, longShare: nonNegative, longFactor: nonNegative, seed: count })
      .strict(),
    /** The calculator's admission count for the pool's bytes: pages rounded up, or maxSeqLen reserved each. */
    predicted: pagedContiguous,
    /** The same without page rounding (exact tokens): the upper end of "up to page rounding". */
    predictedUnrounded: count,
    /** Sequences the allocator admitted before the first failure. */
    reached: pagedContiguous,
    /** reached.paged ÷ reached.contiguous (null when contiguous admitted none). */
    pagedOverContiguous: nonNegative.nullable(),
    /** The paged pool at its fullest (the top-level figures the issue names). */
    ...poolBytes.shape,
    contiguous: poolBytes,
    /** Every admitted token's slot was written on the GPU and read back holding its own sequence's marker. */
    slotsVerified: z.boolean(),
    /** 'exact': reached = predicted; 'page-rounding': between the rounded and the unrounded prediction; else 'mismatch'. */
    agreement: z.enum(['exact', 'page-rounding', 'mismatch']),
    /** Why the numbers differ, when they do. */
    note: z.string().max(2000).nullable(),
  })
  .strict();

export type CapacityResult = z.infer<typeof CapacityResultSchema>;

/**
 * The capacity probe: builds the largest paged KV pool the device's buffer limits allow within
 * `poolMiB`, admits seeded sequences until allocation fails, once paged and once contiguous
 * (each sequence reserving maxSeqLen), and checks the reached counts against the calculator's.
 */
export const CapacityWorkloadSchema = z
  .object({
    kind: z.literal('capacity'),
    /** KV pool to build, all layers together, MiB (the device's buffer limits may allow less). */
    poolMiB: z
      .number()
      .int()
      .min(1)
      .max(1 << 20),
    pageSize: pageSize,
    /** Mean context tokens of a sequence; null: the model's maxSeqLen ÷ 8. */
    meanTokens: z
      .number()
      .int()
      .positive()
      .max(1 << 17)
      .nullable(),
    /** Share of long sequences. */
    longShare: z.number().min(0).max(1),
    /** A long sequence holds this many times the mean (capped at maxSeqLen). */
    longFactor: z.number().min(1).max(64),
    seed: z.number().int().nonnegative(),
  })
  .strict();

/** The capacity probe: predicted against reached concurrency, and the pool's bytes, paged and contiguous. */
export function capacityTable(c: CapacityResult): string[] {
  const bytes = (n: number) => `${n.toLocaleString('en-US')} (${formatBytes(n)})`;
  const mix = `mean ${c.mix.meanTokens} tokens, ${fixed(c.mix.longShare * 100, 0)}% long at ${c.mix.longFactor}×, seed ${c.mix.seed}`;
  return [
    `**Capacity probe** (KV ${c.kvDtype ?? 'f32'}, ${c.kvBytesPerToken} bytes per token, pages of ${c.pageSize}, maxSeqLen ${c.maxSeqLen}; ${mix}; slots verified on the GPU: ${c.slotsVerified ? 'yes' : '**no**'}; agreement: ${c.agreement})`,
    '',
    '| KV pool | predicted | reached | reserved bytes | used bytes | wasted bytes |',
    markdownDelimiter('lrrrrr'),
    markdownRow([
      'paged',
      `${c.predicted.paged} (${c.predictedUnrounded} unrounded)`,
      String(c.reached.paged),
      bytes(c.reservedBytes),
      bytes(c.usedBytes),
      bytes(c.wastedBytes),
    ]),
    markdownRow([
      `contiguous (maxSeqLen each)`,
      String(c.predicted.contiguous),
      String(c.reached.contiguous),
      bytes(c.contiguous.reservedBytes),
      bytes(c.contiguous.usedBytes),
      bytes(c.contiguous.wastedBytes),
    ]),
    '',
    `Paged ÷ contiguous concurrency: ${c.pagedOverContiguous === null ? MISSING : `${fixed(c.pagedOverContiguous, 2)}×`}.${c.note ? ` ${escapeMarkdown(c.note)}` : ''}`,
  ];
}

/** The capacity probe's sequence mix: a share of long sequences, each this many times the mean. */
/** The capacity probe's pool when `--pool-mib` is not given, MiB over all layers. */
export const CAPACITY_POOL_MIB = 32;

export const CAPACITY_MIX = { longShare: 0.2, longFactor: 4 } as const;

type CapacityWorkload = z.infer<typeof CapacityWorkloadSchema>;

const section = {
  /** The capacity probe: admission counted in a real pool, against the calculator's prediction. */
  capacity: CapacityResultSchema.optional(),
};

/** The capacity probe: builds its own pool and runs only the KV write, so it asks nothing of the run's model. */
export const capacity = {
  kind: 'capacity',
  settings: CapacityWorkloadSchema,
  unitName: 'pools',
  // Paged, then contiguous.
  units: () => 2,
  label: (w) => `capacity probe (${w.poolMiB} MiB KV pool, pages of ${w.pageSize})`,
  unfit: () => [],
  fit: (w) => w,
  modelErrors: () => [],
  needs: () => NO_NEEDS,
  section,
  suite: {
    name: 'capacity' as const,
    help: 'the capacity probe: builds a real KV pool (--pool-mib), admits seeded sequences until allocation fails, paged then contiguous, and checks the counts against the KV calculator (see npm run capacity for the estimator)',
    defaults: { prefill: [], depths: [], gen: 16, reps: 3 },
    weightList: false,
    build: (o: { poolMiB?: number; pageSize: number }): CapacityWorkload[] => [
      {
        kind: 'capacity',
        poolMiB: o.poolMiB ?? CAPACITY_POOL_MIB,
        pageSize: o.pageSize,
        meanTokens: null,
        longShare: CAPACITY_MIX.longShare,
        longFactor: CAPACITY_MIX.longFactor,
        seed: 0,
      },
    ],
  },
  report: (s) => (s.capacity ? [capacityTable(s.capacity)] : []),
} satisfies WorkloadDescriptor<CapacityWorkload, typeof section>;
