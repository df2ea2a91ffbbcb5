import { KERNEL_ROLES } from '../kernels/roles.ts';
import { formatPerLayer } from '../markdown.ts';
import type { Graph } from '../measure/cost.ts';
import type { BenchResult, Point, Target } from '../results/schema.ts';
import type { FusionSummary } from '../spec/workloads/fusion.ts';

/** Roles of the dispatches outside the layers: the embedding before them, the LM head and argmax after. */
const OUTSIDE_LAYERS = [KERNEL_ROLES.embedding, KERNEL_ROLES.lmHead, KERNEL_ROLES.argmax] as const;

/**
 * Dispatches per layer of one pass, from the counts by role the engine recorded: all of them less
 * the embedding, LM head and argmax, and the unfused graph's final RMSNorm (the fused graph runs it
 * inside the LM head), over the layers.
 */
export function dispatchesPerLayer(
  dispatches: Readonly<Record<string, number>>,
  layers: number,
  fused: boolean,
): { total: number; perLayer: number } {
  const total = Object.values(dispatches).reduce((a, b) => a + b, 0);
  const outside =
    OUTSIDE_LAYERS.reduce((n, role) => n + (dispatches[role] ?? 0), 0) +
    (!fused && (dispatches[KERNEL_ROLES.norm] ?? 0) > 0 ? 1 : 0);
  return { total, perLayer: layers > 0 ? (total - outside) / layers : 0 };
}

/**
 * The fusion workload's table: for each graph measured (fused first), the dispatches the engine
 * recorded in its prefill and its decode step, in all and per layer, its prefill time (TTFT p50)
 * and TPOT (p50), both wall clock as the points record them, and both as ratios to the unfused
 * graph's in the same run. A graph without both points is left out.
 */
export function fusionSummary(points: readonly Point[], records: readonly FusionRecord[]): FusionSummary[] {
  const point = (graph: FusionRecord['graph'], pass: Point['pass']) =>
    points.filter((p) => p.graph === graph && p.pass === pass).at(-1);
  const rows: FusionSummary[] = [];
  for (const r of records) {
    const prefill = point(r.graph, 'prefill');
    const decode = point(r.graph, 'decode');
    if (!prefill?.ttftMs || !decode?.tpotMs) continue;
    const p = dispatchesPerLayer(r.prefill.dispatches, r.layers, r.fused);
    const d = dispatchesPerLayer(r.decode.dispatches, r.layers, r.fused);
    rows.push({
      graph: r.graph,
      fused: r.fused,
      prefillDispatches: p.total,
      decodeDispatches: d.total,
      prefillPerLayer: p.perLayer,
      decodePerLayer: d.perLayer,
      prefillTokens: r.prefill.tokens,
      decodeDepth: r.decode.depth,
      prefillMs: prefill.ttftMs.p50,
      tpotMs: decode.tpotMs.p50,
      prefillRatio: null,
      tpotRatio: null,
    });
  }
  const base = rows.find((r) => r.graph === 'unfused');
  for (const r of rows) {
    if (!base) break;
    r.prefillRatio = base.prefillMs > 0 ? r.prefillMs / base.prefillMs : null;
    r.tpotRatio = base.tpotMs > 0 ? r.tpotMs / base.tpotMs : null;
  }
  return rows;
}

/**
 * One graph of the fusion workload: the graph asked for, the one the model ran, its layers, and the
 * dispatches by role the engine recorded in the last prefill and the last decode step it timed.
 */
export interface FusionRecord {
  type: 'fusion';
  graph: Graph;
  fused: boolean;
  layers: number;
  prefill: { tokens: number; dispatches: Record<string, number> };
  decode: { depth: number; dispatches: Record<string, number> };
}

/** The fused graph's ceilings (the issue sets them on ci-tiny): its decode step against the unfused one's, and its dispatches. */
export const FUSION_TARGET = { tpotRatioMax: 0.7, dispatchesPerLayerMax: 10 } as const;

/**
 * The fused decode step against the unfused one in the same run, and the fused graph's dispatches
 * per layer of a decode step (as the engine recorded them). Judged only where the fusion workload ran.
 */
export function fusionTarget(r: Omit<BenchResult, 'targets'>): Target | null {
  if (!r.spec.workloads.some((w) => w.kind === 'fusion')) return null;
  const { tpotRatioMax, dispatchesPerLayerMax } = FUSION_TARGET;
  const name = `fused against unfused decode step (${r.model.preset})`;
  const target = `TPOT ≤ ${tpotRatioMax} × the unfused graph's in the same run, and ≤ ${dispatchesPerLayerMax} dispatches per layer`;
  const rows = r.fusion ?? [];
  const fused = rows.find((x) => x.graph === 'fused');
  const unfused = rows.find((x) => x.graph === 'unfused');
  if (!fused || !unfused || fused.tpotRatio === null) {
    return {
      name,
      target,
      reached: 'not measured',
      met: null,
      note: !fused
        ? 'the fused graph was not measured (its kernel families do not take the fusions, or the run stopped)'
        : 'the unfused graph was not measured',
    };
  }
  const perLayer = fused.decodePerLayer;
  return {
    name,
    target,
    reached: `${fused.tpotRatio.toFixed(2)} × (${fused.tpotMs.toFixed(2)} against ${unfused.tpotMs.toFixed(2)} ms at depth ${fused.decodeDepth}, wall clock); ${formatPerLayer(perLayer)} dispatches per layer against ${formatPerLayer(unfused.decodePerLayer)}`,
    met: fused.tpotRatio <= tpotRatioMax && perLayer <= dispatchesPerLayerMax,
  };
}
