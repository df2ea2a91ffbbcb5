import type { BenchResult } from '../../results/schema.ts';
import type { WorkloadKind } from '../../spec/workloads/index.ts';
import { FormatsView } from '../formats/view.ts';
import { FusionView } from '../fusion-view.ts';
import { KvView } from '../kv-view.ts';
import { BatchScalingView } from '../serve/batch-view.ts';
import { CaseView } from '../serve/case-view.ts';
import { ServeView } from '../serve/view.ts';
import { SpecView } from '../speculative/view.ts';
import { SustainedView } from '../sustained-view.ts';
import { TasksView } from '../tasks-view.ts';

/** What the run view asks of a workload's own section on the page. */
export interface WorkloadView {
  readonly element: HTMLElement;
  /** Draws the section of a finished run; null (a run in progress, or none) hides it. */
  show(result: BenchResult | null): void;
}

export interface ViewOptions {
  /** Prefixes the view's test ids where a page holds more than one. */
  idPrefix: string;
  /** The file name stem of the charts' downloads. */
  fileStem: () => string;
}

/** A workload's page view, where it sits, and what the run's summary line says of its section. */
export interface ViewSlot {
  make(options: ViewOptions): WorkloadView;
  /** Above the roofline and point charts (a section that sums up the points), or below them. */
  place: 'above-charts' | 'below-charts';
  /** A few words for the run's summary line, '' when the result holds none of its section. */
  summary(r: BenchResult): string;
  /** What the run measured, in words, when its section is all the run has (no pass points); null if it has none. */
  alone(r: BenchResult): string | null;
}

const nothing = { summary: () => '', alone: () => null };

/**
 * Every workload's view on the page, by kind. The type is over the registry's kinds
 * (spec/workloads/index.ts), so a new workload without its entry here fails to compile; null for a
 * workload whose points the run's charts and tables draw already.
 */
export const VIEWS: { [K in WorkloadKind]: ViewSlot | null } = {
  // Prefill and decode points are the run's tables and charts; the kernel suite and the capacity
  // probe are CLI jobs whose sections the page does not draw.
  prefill: null,
  kernels: null,
  capacity: null,
  spec: {
    make: (o) => new SpecView(o),
    place: 'below-charts',
    summary: (r) => {
      const s = r.speculative;
      if (!s) return '';
      return ` · speculative decoding: ${s.runs.length} run${s.runs.length === 1 ? '' : 's'}, ${s.verifyCurve.length} verify-curve points`;
    },
    alone: (r) => (r.speculative ? 'speculative decoding' : null),
  },
  serve: {
    make: (o) => new ServeView(o),
    place: 'below-charts',
    summary: (r) => {
      const s = r.serve;
      if (!s) return '';
      const requests = s.runs.reduce((n, run) => n + run.requests.length, 0);
      return ` · load test: ${s.runs.length} arm${s.runs.length === 1 ? '' : 's'}, ${requests} requests`;
    },
    alone: (r) => (r.serve ? 'a load test' : null),
  },
  case: {
    make: (o) => new CaseView(o),
    place: 'below-charts',
    summary: (r) =>
      r.caseStudy ? ` · case study: ${r.caseStudy.runs.filter((x) => x.caseRole).length} arms` : '',
    alone: (r) => (r.caseStudy ? 'the case study' : null),
  },
  decode: { make: (o) => new BatchScalingView(o), place: 'below-charts', ...nothing },
  formats: { make: (o) => new FormatsView(o), place: 'above-charts', ...nothing },
  fusion: { make: (o) => new FusionView(o.idPrefix), place: 'above-charts', ...nothing },
  sustained: {
    make: (o) => new SustainedView(o),
    place: 'above-charts',
    summary: (r) =>
      r.sustained
        ? ` · sustained load: ${r.sustained.windows.length} windows, roofs measured ${r.sustained.roofs.length} times`
        : '',
    alone: (r) => (r.sustained ? 'sustained load' : null),
  },
  kv: {
    make: (o) => new KvView(o),
    place: 'above-charts',
    summary: (r) =>
      r.kv ? ` · KV matrix: ${r.kv.cells.length} cell${r.kv.cells.length === 1 ? '' : 's'}` : '',
    alone: (r) => (r.kv ? 'the KV cache matrix' : null),
  },
  tasks: {
    make: (o) => new TasksView(o),
    place: 'above-charts',
    summary: (r) => (r.tasks ? ` · task quality: ${r.tasks.length} slices` : ''),
    alone: (r) => (r.tasks ? 'task quality on the held-out set' : null),
  },
};
