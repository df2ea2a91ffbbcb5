import { z } from 'zod';
import type { ReportContext, Unfit, WorkloadDescriptor, WorkloadNeeds } from '../workload.ts';
import { capacity } from './capacity.ts';
import { caseStudy } from './case.ts';
import { decode } from './decode.ts';
import { formats } from './formats.ts';
import { fusion } from './fusion.ts';
import { kernels } from './kernels.ts';
import { kv } from './kv.ts';
import { prefill } from './prefill.ts';
import { serve } from './serve.ts';
import { speculative } from './speculative.ts';
import { sustained } from './sustained.ts';
import { tasks } from './tasks.ts';

/**
 * Every workload, by its descriptor: the one list the spec, the result schema, the reports, the CLI
 * help and the page read. A new workload is its descriptor file and one line here; the runner table
 * (src/workloads/index.ts) and the view table (src/ui/views/index.ts) are typed by the kinds listed
 * here, so the compiler names what a new kind still lacks. The order is the report's order.
 */
export const WORKLOADS = [
  prefill,
  kernels,
  capacity,
  speculative,
  serve,
  caseStudy,
  decode,
  formats,
  fusion,
  sustained,
  kv,
  tasks,
] as const;

type Descriptor = (typeof WORKLOADS)[number];

/** One workload's settings, as the spec holds them. */
export type Workload = z.infer<Descriptor['settings']>;
export type WorkloadKind = Workload['kind'];
export type WorkloadOf<K extends WorkloadKind> = Extract<Workload, { kind: K }>;

export const WORKLOAD_KINDS = WORKLOADS.map((d) => d.kind) as WorkloadKind[];

/** A workload's settings: the union of every descriptor's, told apart by `kind`. */
export const WorkloadSchema = z.discriminatedUnion(
  'kind',
  WORKLOADS.map((d) => d.settings) as [Descriptor['settings'], ...Descriptor['settings'][]],
);

/** Every descriptor's section shape, merged in registry order (a tuple walk: a union would collapse the empty ones). */
type MergeSections<T extends readonly unknown[]> = T extends readonly [infer H, ...infer R]
  ? (H extends { section: infer S } ? S : never) & MergeSections<R>
  : unknown;

/** The result fields every workload writes, merged: each workload's own section. */
export type SectionsShape = Flat<MergeSections<typeof WORKLOADS>>;
type Flat<T> = { [K in keyof T]: T[K] };
export const SECTIONS = Object.assign({}, ...WORKLOADS.map((d) => d.section)) as SectionsShape;

/** The descriptor of a workload, typed for its own settings. */
export function descriptorOf<W extends Workload>(w: W): WorkloadDescriptor<W> {
  const d = WORKLOADS.find((x) => x.kind === w.kind);
  return d as unknown as WorkloadDescriptor<W>;
}

/** A workload's progress units (its points; 0 when it counts its own once it knows). */
export function workloadUnits(w: Workload): number {
  return descriptorOf(w).units(w);
}

/** A short human name of a workload, for progress lines and reports. */
export function workloadLabel(w: Workload): string {
  return descriptorOf(w).label(w);
}

export function workloadUnfit(w: Workload, maxSeqLen: number): Unfit[] {
  return descriptorOf(w).unfit(w, maxSeqLen);
}

export function workloadFit(w: Workload, maxSeqLen: number): Workload | null {
  return descriptorOf(w).fit(w, maxSeqLen);
}

export function workloadNeeds(w: Workload): WorkloadNeeds {
  return descriptorOf(w).needs(w);
}

/** The report blocks of every workload kind in `kinds` that wrote a section, in the registry's order. */
export function sectionReports(
  result: Partial<Record<keyof SectionsShape, unknown>>,
  run: ReportContext,
): string[][] {
  return WORKLOADS.flatMap((d) =>
    (d as unknown as WorkloadDescriptor<Workload>).report(result as never, run),
  );
}
