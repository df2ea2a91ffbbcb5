/**
 * How the charts tell the fusion workload's points apart from the sweeps'. That workload times the
 * fused and the unfused graph at one L and one depth in the same run; its points carry the graph,
 * and drawn in the sweep's series they would put two or three values at one x. So a run's points
 * become one series for the sweeps, named as such (the sweeps run one graph too, the run's), and one
 * per arm of the fusion workload (`fusion workload: fused graph`, prefixed by the run's label when
 * runs are compared), each with its own legend entry (issue 37, item 6).
 */
import type { ChartRun } from './common.ts';

export function splitByGraph(runs: readonly ChartRun[]): ChartRun[] {
  const compared = runs.length > 1;
  return runs.flatMap((run) => {
    const graphs = [...new Set(run.points.flatMap((p) => (p.graph ? [p.graph] : [])))].sort();
    if (graphs.length === 0) return [run];
    const plain = run.points.filter((p) => p.graph === undefined);
    const named = (what: string) => (compared ? `${run.label} · ${what}` : what);
    return [
      ...(plain.length > 0 ? [{ ...run, label: named('sweeps'), points: plain }] : []),
      ...graphs.map((graph) => ({
        ...run,
        label: named(`fusion workload: ${graph} graph`),
        points: run.points.filter((p) => p.graph === graph),
      })),
    ];
  });
}
