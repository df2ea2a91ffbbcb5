/**
 * The load test's section of a result (result.serve): a card with the headline figures, the A/B
 * deltas, goodput, slowdown, the identical-to-solo check and the tables of arms and classes; then
 * the charts: the batch slots over time, a waterfall of chosen requests beside TTFT split into
 * queue and prefill, latency CDFs by class, KV usage and batch size over time, and the rate sweep.
 * Per-arm charts draw the A/B arms (chartArms). The run view shows one for the run on screen; the
 * compare view one per compared file that has it.
 */
import type { BenchResult } from '../../results/schema.ts';
import type { ServeResult, ServeRun } from '../../spec/workloads/serve-result.ts';
import { ChartPanel } from '../charts/panel.ts';
import { CDF_METRICS, type CdfMetric, latencyCdfChart } from '../charts/serve-cdf.ts';
import { chartArms } from '../charts/serve-common.ts';
import { kvBatchChart } from '../charts/serve-kv.ts';
import { sweepChart } from '../charts/serve-sweep.ts';
import { slotTimelineChart } from '../charts/serve-timeline.ts';
import { ttftSplitChart } from '../charts/serve-ttft-split.ts';
import { requestWaterfallChart, WATERFALL_PICKS, type WaterfallPick } from '../charts/serve-waterfall.ts';
import { h, setChildren } from '../dom.ts';
import {
  serveClassTable,
  serveHttpTable,
  servePoolsTable,
  serveRunsTable,
  serveSessionsTable,
} from './runs-table.ts';
import { abList, goodputLine, identicalNotice, serveTiles, slowdownLine, stoppedNotice } from './summary.ts';

export interface ServeViewOptions {
  /** Prefix of the test ids; the run view's are plain (`serve-timeline-chart`). */
  idPrefix: string;
  /** Stem of SVG file names. */
  fileStem: () => string;
}

/** A labelled select for a chart's controls. */
function select(
  label: string,
  testId: string,
  onChange: () => void,
): { element: HTMLElement; input: HTMLSelectElement } {
  const input = h('select', { testId, attrs: { 'aria-label': label } });
  input.addEventListener('change', onChange);
  return { element: h('label', { className: 'toggle' }, [`${label} `, input]), input };
}

function options(input: HTMLSelectElement, entries: readonly (readonly [string, string])[]): void {
  const keep = input.value;
  input.replaceChildren(...entries.map(([value, text]) => h('option', { text, attrs: { value } })));
  if (entries.some(([value]) => value === keep)) input.value = keep;
}

export class ServeView {
  readonly element: HTMLElement;
  private readonly heading = h('h2', { text: 'Load test' });
  private readonly body: HTMLElement;
  private readonly id: (name: string) => string;
  private readonly timeline: ChartPanel;
  private readonly waterfall: ChartPanel;
  private readonly split: ChartPanel;
  private readonly cdf: ChartPanel;
  private readonly kv: ChartPanel;
  private readonly sweep: ChartPanel;
  private readonly waterfallArm: HTMLSelectElement;
  private readonly waterfallPick: HTMLSelectElement;
  private readonly cdfMetric: HTMLSelectElement;
  private serve: ServeResult | null = null;
  private arms: ServeRun[] = [];

  constructor(options_: ServeViewOptions) {
    this.id = (name) => (options_.idPrefix ? `${options_.idPrefix}-${name}` : name);
    const stem = (name: string) => () => `${options_.fileStem()}-${name}`;
    const arm = select('Arm', this.id('serve-waterfall-arm'), () => this.waterfall.render());
    const pick = select('Show', this.id('serve-waterfall-pick'), () => this.waterfall.render());
    const metric = select('Latency', this.id('serve-cdf-metric'), () => this.cdf.render());
    this.waterfallArm = arm.input;
    this.waterfallPick = pick.input;
    this.cdfMetric = metric.input;
    options(
      this.waterfallPick,
      Object.entries(WATERFALL_PICKS).map(([value, text]) => [value, text] as const),
    );
    options(
      this.cdfMetric,
      Object.entries(CDF_METRICS).map(([value, m]) => [value, m.label] as const),
    );
    this.body = h('div', { className: 'serve-body' });
    this.timeline = new ChartPanel({
      title: 'Batch slots over time',
      testId: this.id('serve-timeline-chart'),
      fileStem: stem('slots'),
      wide: true,
      emptyText: 'No slot stays recorded.',
      caption:
        'One row per place in the running batch, one bar per stay of a request there, coloured by class; ' +
        'a cross marks a stay ended by preemption (the request gave its KV pages back and recomputes ' +
        'later). The arms ran the same trace and share the time axis. Static batching starts a batch ' +
        'together and admits nothing until its longest request ends, so slots sit idle under it; ' +
        'continuous batching refills a slot at the next step.',
    });
    this.waterfall = new ChartPanel({
      title: 'Request waterfall',
      testId: this.id('serve-waterfall-chart'),
      fileStem: stem('waterfall'),
      controls: [arm.element, pick.element],
      emptyText: 'No finished request matches.',
      caption:
        'Each row is one request of the chosen arm on the run’s clock: the dot is its arrival, grey its ' +
        'wait for admission, blue admission to first token (its prompt’s chunks, sharing steps with ' +
        'others), orange the decode to its last token, a tick per token. Sparse ticks mean slow steps: ' +
        'a crowded batch or prompt chunks of others in the same step.',
    });
    this.split = new ChartPanel({
      title: 'TTFT: queue and prefill by class',
      testId: this.id('serve-split-chart'),
      fileStem: stem('ttft-split'),
      emptyText: 'No finished requests.',
      caption:
        'Mean time to first token of each class, split into waiting for admission (queue) and admission ' +
        'to first token (prefill). Means, so the two parts add up to the mean TTFT written at the end. ' +
        'Static batching’s TTFT is mostly queue: a request waits for the whole batch before it.',
    });
    this.cdf = new ChartPanel({
      title: 'Latency CDFs by class',
      testId: this.id('serve-cdf-chart'),
      fileStem: stem('latency-cdf'),
      wide: true,
      controls: [metric.element],
      emptyText: 'No finished requests.',
      caption:
        'For each class, the share of finished requests at or under each latency (log axis), one line per ' +
        'arm: further left is faster, the top end is the slowest request, and where a line crosses the ' +
        'dotted 95% rule is its p95. The dashed rule is the metric’s SLO when the run set one.',
    });
    this.kv = new ChartPanel({
      title: 'KV cache and batch over time',
      testId: this.id('serve-kv-chart'),
      fileStem: stem('kv-batch'),
      wide: true,
      emptyText: 'No engine steps recorded.',
      caption:
        'After every engine step: KV pages held by running requests against the pool, then the running ' +
        'batch against its maximum and the requests waiting. A full pool is what holds admission back ' +
        'and what triggers preemption; a batch well under its maximum while requests wait is lost throughput.',
    });
    this.sweep = new ChartPanel({
      title: 'Goodput and p95 TTFT against request rate',
      testId: this.id('serve-sweep-chart'),
      fileStem: stem('rate-sweep'),
      wide: true,
      emptyText: 'No rate sweep in this result.',
      caption:
        'Each mark is one swept run: one request at a time (synchronous), everything at once (saturating), ' +
        'and Poisson rates between, at the rate offered. Goodput counts only requests meeting every SLO; a ' +
        'filled mark met them (at least the attainment share of its requests did). The dashed green rule ' +
        'is the highest rate that met them: the load to plan for.',
    });
    this.sweep.element.hidden = true;
    this.element = h('div', { className: 'serve-view', attrs: { hidden: true } }, [
      h('section', { className: 'card serve-summary', testId: this.id('serve-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        h('p', {
          className: 'lede',
          text: 'Requests arrive as traffic would; the scheduler batches them step by step on this GPU. Continuous batching admits a request whenever a slot and its KV pages are free; static batching, the baseline, waits for a whole batch to finish. Every figure is timed per request, with vLLM’s definitions.',
        }),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [
        this.timeline.element,
        this.waterfall.element,
        this.split.element,
        this.cdf.element,
        this.kv.element,
        this.sweep.element,
      ]),
    ]);
  }

  /** Shows a result's load test, or hides the view when it has none. */
  show(result: BenchResult | null, heading = 'Load test'): void {
    const s = result?.serve;
    this.element.hidden = !s;
    this.serve = s ?? null;
    const panels = [this.timeline, this.waterfall, this.split, this.cdf, this.kv, this.sweep];
    if (!s) {
      for (const panel of panels) panel.update(null);
      this.body.replaceChildren();
      return;
    }
    this.heading.textContent = heading;
    this.arms = chartArms(s);
    options(
      this.waterfallArm,
      this.arms.map((r, i) => [String(i), r.label] as const),
    );
    setChildren(this.body, [
      serveTiles(s, this.id),
      identicalNotice(s, this.id),
      abList(s, this.id('serve-ab')),
      goodputLine(s, this.id('serve-goodput')),
      slowdownLine(s, this.id('serve-slowdown')),
      stoppedNotice(s, this.id('serve-stopped')),
      serveRunsTable(s.runs, this.id('serve-runs-table')),
      ...serveHttpTable(s.runs, this.id('serve-http-table')),
      serveClassTable(s.runs, this.id('serve-class-table')),
      ...serveSessionsTable(s.runs, this.id('serve-sessions-table')),
      ...servePoolsTable(s.runs, this.id('serve-pools-table')),
      h('p', { className: 'spec-note', testId: this.id('serve-clock') }, [
        h('strong', { text: 'Clock: ' }),
        s.clock,
      ]),
      h('p', { className: 'spec-note', testId: this.id('serve-definitions') }, [
        h('strong', { text: 'Definitions: ' }),
        s.definitions,
      ]),
    ]);
    const arms = this.arms;
    this.sweep.element.hidden = !s.sweep;
    this.timeline.update((width) => slotTimelineChart(arms, width));
    this.waterfall.update((width) => {
      const run = arms[Number(this.waterfallArm.value)] ?? arms[0];
      return run ? requestWaterfallChart(run, this.waterfallPick.value as WaterfallPick, width) : null;
    });
    this.split.update((width) => ttftSplitChart(arms, width));
    this.cdf.update((width) => latencyCdfChart(arms, this.cdfMetric.value as CdfMetric, width));
    this.kv.update((width) => kvBatchChart(arms, width));
    this.sweep.update((width) => (this.serve ? sweepChart(this.serve, width) : null));
  }
}
