import { z } from 'zod';
import { fixed, formatMs, formatPerLayer, MISSING, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { GraphSchema, nonNegative } from '../fields.ts';
import {
  type CommonOptions,
  depth,
  length,
  MAX_TIMED_PASSES,
  pointNeeds,
  pointUnfit,
  repetitions,
  type WorkloadDescriptor,
} from '../workload.ts';

/**
 * The fusion workload's summary: one row per graph, from its prefill and decode points in the same
 * run and the dispatches the engine recorded in those passes (not the cost model's count).
 */
export const FusionSummarySchema = z
  .object({
    /** The graph asked for. */
    graph: GraphSchema,
    /** Whether the model really ran the fused graph (the chosen kernel families may not take the fusions). */
    fused: z.boolean(),
    /** Dispatches the engine recorded in one prefill of `prefillTokens` and in one decode step, all roles. */
    prefillDispatches: z.number().int().nonnegative(),
    decodeDispatches: z.number().int().nonnegative(),
    /** The same without the dispatches outside the layers (embedding, LM head, argmax, the unfused final norm), per layer. */
    prefillPerLayer: nonNegative,
    decodePerLayer: nonNegative,
    prefillTokens: z.number().int().positive(),
    decodeDepth: z.number().int().nonnegative(),
    /** Prefill: TTFT p50 of the point; decode: TPOT p50 (both wall clock, as the points record them). */
    prefillMs: nonNegative,
    tpotMs: nonNegative,
    /** Over the unfused row's in the same run (1 on the unfused row); null without an unfused row. */
    prefillRatio: nonNegative.nullable(),
    tpotRatio: nonNegative.nullable(),
  })
  .strict();

export type FusionSummary = z.infer<typeof FusionSummarySchema>;

/**
 * The fused graph against the unfused one in the same run: for each graph (fused first), a model
 * built from the run's weights and kernel families, checked against the CPU forward, then a prefill
 * at one L and a decode at one depth (timed as the prefill and decode sweeps time them; their points
 * carry the graph), and the dispatches the engine recorded in each pass.
 */
export const FusionWorkloadSchema = z
  .object({
    kind: z.literal('fusion'),
    length,
    depth,
    gen: z.number().int().min(2).max(MAX_TIMED_PASSES),
    ...repetitions,
  })
  .strict();

export function fusionTable(rows: readonly FusionSummary[]): string[] {
  return [
    `**${FUSION_CAPTION}**`,
    '',
    markdownRow([
      'graph',
      'dispatches / layer, prefill',
      'dispatches / layer, decode',
      'dispatches per pass (prefill, decode)',
      'prefill ms',
      'TPOT ms',
      'prefill ÷ unfused',
      'TPOT ÷ unfused',
    ]),
    markdownDelimiter('lrrrrrrr'),
    ...rows.map((f) =>
      markdownRow([
        fusionGraphLabel(f),
        formatPerLayer(f.prefillPerLayer),
        formatPerLayer(f.decodePerLayer),
        `${f.prefillDispatches}, ${f.decodeDispatches}`,
        `${formatMs(f.prefillMs)} (L=${f.prefillTokens})`,
        `${formatMs(f.tpotMs)} (depth ${f.decodeDepth})`,
        f.prefillRatio === null ? MISSING : fixed(f.prefillRatio, 2),
        f.tpotRatio === null ? MISSING : fixed(f.tpotRatio, 2),
      ]),
    ),
  ];
}

/** What the fusion table's columns are, in the words the report and the page use. */
export const FUSION_CAPTION =
  'Fused against unfused graph (same weights, kernel families and run; dispatches as the engine recorded them, per layer without the embedding, LM head, argmax and final norm; prefill ms and TPOT are wall-clock p50)';

/** A graph as a row names it, saying so when a fused model ran unfused. */
export function fusionGraphLabel(f: Pick<FusionSummary, 'graph' | 'fused'>): string {
  return f.graph === 'fused' && !f.fused ? 'fused (ran unfused)' : f.graph;
}

/** A prefill of 256 and 16 tokens at depth 16, per graph. */
const FUSION_SUITE = { prefill: [256], depths: [16], gen: 16, reps: 3 } as const;

type FusionWorkload = z.infer<typeof FusionWorkloadSchema>;

const section = {
  /** The fused graph against the unfused one (`--suite fusion`, and the quick suite's last workload). */
  fusion: z.array(FusionSummarySchema).optional(),
};

/** The fused graph against the unfused one: each graph builds its own model (one sequence at a time); the run's model validates. */
export const fusion = {
  kind: 'fusion',
  settings: FusionWorkloadSchema,
  unitName: 'points',
  // A prefill and a decode point per graph.
  units: () => 4,
  label: (w) => `fused against unfused graph (prefill L = ${w.length}, decode at depth ${w.depth})`,
  unfit: pointUnfit,
  fit: (w, maxSeqLen) => (pointUnfit(w, maxSeqLen).length === 0 ? w : null),
  modelErrors: () => [],
  needs: pointNeeds,
  section,
  suite: {
    name: 'fusion' as const,
    help: `the fused graph against the unfused one in the same run: a model of each, checked against the CPU forward, a prefill of L=${FUSION_SUITE.prefill[0]} and ${FUSION_SUITE.gen} tokens at depth ${FUSION_SUITE.depths[0]} each, the dispatches per layer the engine recorded, TPOT fused ÷ unfused (--prefill, --depth: the one L and depth)`,
    /** A prefill of 256 and 16 tokens at depth 16, per graph. */
    defaults: FUSION_SUITE,
    weightList: false,
    // --prefill and --depth name the one L and the one depth each graph is timed at.
    build: (o: CommonOptions): FusionWorkload[] => [
      {
        kind: 'fusion',
        length: o.prefill?.[0] ?? FUSION_SUITE.prefill[0],
        depth: o.depths?.[0] ?? FUSION_SUITE.depths[0],
        gen: o.gen ?? FUSION_SUITE.gen,
        reps: o.reps,
        warmup: o.warmup,
      },
    ],
  },
  report: (s) => (s.fusion && s.fusion.length > 0 ? [fusionTable(s.fusion)] : []),
} satisfies WorkloadDescriptor<FusionWorkload, typeof section>;
