/**
 * How the charts tell the fusion workload's points apart from the sweeps'. That workload times the
 * fused and the unfused graph at one L and one depth in the same run; its points carry the graph,
 * and drawn in the sweep's series they would put two or three values at one x. So a run's points
 * become one series for the sweeps (the run as it was) and one per graph (`fused graph`, or
 * `#1 Apple M2 Pro · fused graph` when runs are compared), each with its own legend entry.
 */
import type { ChartRun } from './common.ts';

export function splitByGraph(runs: readonly ChartRun[]): ChartRun[] {
  const compared = runs.length > 1;
  return runs.flatMap((run) => {
    const graphs = [...new Set(run.points.flatMap((p) => (p.graph ? [p.graph] : [])))].sort();
    if (graphs.length === 0) return [run];
    const plain = run.points.filter((p) => p.graph === undefined);
    return [
      ...(plain.length > 0 ? [{ ...run, points: plain }] : []),
      ...graphs.map((graph) => ({
        ...run,
        label: compared || plain.length > 0 ? `${run.label} · ${graph} graph` : `${graph} graph`,
        points: run.points.filter((p) => p.graph === graph),
      })),
    ];
  });
}
