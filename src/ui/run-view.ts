/**
 * The run view: charts filling in live as points finish, then, once the run returns, its summary,
 * the results table, latency percentiles and the exports, and its weight-format (above the charts,
 * whose points it summarises), speculative-decoding, load-test and B-scaling sections when it has them.
 */

import { formatError } from '../error-figure.ts';
import type { Roofs } from '../measure/roofline.ts';
import { adapterLabel, EXPORT_FORMATS, type ExportFormat, graphText, kvText } from '../results/export.ts';
import type { BenchResult, Point } from '../results/schema.ts';
import { WORKLOAD_KINDS } from '../spec/workloads/index.ts';
import { ChartSet } from './charts/chart-set.ts';
import { button, h } from './dom.ts';
import { downloadResult, resultFileStem } from './export.ts';
import { formatCount, formatDate, formatMs } from './format.ts';
import { bitsText, resultWeights } from './formats/weights.ts';
import { GenerationView } from './generation-view.ts';
import { PeersView } from './peers-view.ts';
import { latencyTable, resultsTable } from './results-table.ts';
import { VIEWS, type ViewSlot } from './views/index.ts';

/** Export buttons: label and test id per format. */
const EXPORTS: Record<ExportFormat, { label: string; testId: string }> = {
  json: { label: 'JSON', testId: 'export-json' },
  jsonl: { label: 'JSONL', testId: 'export-jsonl' },
  csv: { label: 'CSV', testId: 'export-csv' },
  md: { label: 'Markdown', testId: 'export-md' },
};

export class RunView {
  readonly element: HTMLElement;
  private result: BenchResult | null = null;
  private readonly intro: HTMLElement;
  private readonly content: HTMLElement;
  private readonly summary = h('div', { className: 'summary' });
  private readonly tableHost = h('div');
  private readonly latencyHost = h('div');
  private readonly exportButtons: HTMLButtonElement[];
  private readonly charts = new ChartSet({
    idPrefix: '',
    fileStem: () => (this.result ? resultFileStem(this.result) : 'live-run'),
  });
  /** The peers beside the run (llama.cpp, wllama), when it has any. */
  private readonly peersView = new PeersView();
  /** Text the model generated: a run's, after its workloads, or the Prompt box's Generate. */
  readonly generation = new GenerationView();
  /** Each workload's own section, in the registry's order, where its view sits. */
  private readonly views = WORKLOAD_KINDS.flatMap((kind) => {
    const slot = VIEWS[kind];
    return slot
      ? [
          {
            slot,
            view: slot.make({
              idPrefix: '',
              fileStem: () => (this.result ? resultFileStem(this.result) : 'run'),
            }),
          },
        ]
      : [];
  });

  constructor() {
    this.exportButtons = EXPORT_FORMATS.map((format) =>
      button(EXPORTS[format].label, () => this.result && downloadResult(this.result, format), {
        className: 'btn btn-small',
        testId: EXPORTS[format].testId,
        attrs: { disabled: true, 'aria-label': `Export the run as ${EXPORTS[format].label}` },
      }),
    );
    this.intro = h('section', { className: 'card intro' }, [
      h('h2', { text: 'Where does your GPU’s time go?' }),
      h('p', {
        text: 'Press Run. The page measures your GPU’s peaks (FMA throughput, copy bandwidth, launch and submit overhead), then runs a small Llama-style model with random weights: prefill at several prompt lengths and decode at several context depths.',
      }),
      h('p', {
        text: 'Every pass lands on a roofline built from those peaks, so you can see whether it is limited by compute, by memory bandwidth, or by launch overhead. Nothing leaves this page.',
      }),
    ]);
    this.content = h('div', { className: 'run-content', attrs: { hidden: true } }, [
      h('section', { className: 'card' }, [
        h('div', { className: 'card-head' }, [
          h('h2', { text: 'Results' }),
          h('div', { className: 'button-row' }, [
            h('span', { className: 'muted small', text: 'Export:' }),
            ...this.exportButtons,
          ]),
        ]),
        this.summary,
        this.tableHost,
        this.latencyHost,
      ]),
      ...this.viewsAt('above-charts'),
      this.charts.element,
      this.peersView.element,
      ...this.viewsAt('below-charts'),
    ]);
    this.element = h('div', { className: 'run-view' }, [this.generation.element, this.intro, this.content]);
  }

  get current(): BenchResult | null {
    return this.result;
  }

  /** Points so far of a run in progress, drawn against the device they run on. */
  showLive(label: string, points: readonly Point[], peaks: Roofs | null): void {
    this.result = null;
    this.reveal();
    for (const b of this.exportButtons) b.disabled = true;
    this.summary.replaceChildren(
      h('p', {
        className: 'muted',
        text: points.length === 0 ? 'Waiting for the first point…' : 'Measuring…',
      }),
    );
    this.tableHost.replaceChildren(points.length > 0 ? resultsTable(points) : '');
    this.latencyHost.replaceChildren();
    this.charts.element.hidden = false;
    this.charts.update(points.length > 0 || peaks ? [{ label, points, peaks }] : []);
    for (const { view } of this.views) view.show(null);
    this.peersView.show(null);
  }

  /** A finished run (complete, cancelled or failed), from the engine or from history. */
  showResult(r: BenchResult): void {
    this.result = r;
    this.reveal();
    for (const b of this.exportButtons) b.disabled = false;
    this.summary.replaceChildren(...this.summaryLines(r));
    // A speculative run or a load test alone has no prefill or decode points: its own section below
    // says it all, so the empty point charts give way to it.
    const section = this.views.map(({ slot }) => slot.alone(r)).find((s) => s !== null) ?? null;
    const sectionOnly = r.points.length === 0 && section !== null;
    this.tableHost.replaceChildren(
      r.points.length > 0
        ? resultsTable(r.points)
        : h('p', {
            className: 'muted',
            text: sectionOnly
              ? `No prefill or decode points: this run measured ${section} (below).`
              : 'No measured points.',
          }),
    );
    this.latencyHost.replaceChildren(r.points.length > 0 ? latencyTable(r.points) : '');
    this.charts.element.hidden = sectionOnly;
    this.charts.update([
      { label: adapterLabel(r.env.adapter), points: r.points, peaks: r.peaks, peers: r.peers },
    ]);
    for (const { view } of this.views) view.show(r);
    this.peersView.show(r);
    this.generation.show(r.generation, r.warnings);
  }

  private viewsAt(place: ViewSlot['place']): HTMLElement[] {
    return this.views.filter(({ slot }) => slot.place === place).map(({ view }) => view.element);
  }

  private reveal(): void {
    this.intro.hidden = true;
    this.content.hidden = false;
  }

  private summaryLines(r: BenchResult): HTMLElement[] {
    const c = r.model.config;
    const v = r.validation;
    const status =
      r.status === 'complete'
        ? h('span', { className: 'tag tag-ok', text: 'complete' })
        : h('span', { className: 'tag tag-warn', text: r.status });
    const lines: HTMLElement[] = [
      h('p', { className: 'summary-line' }, [
        status,
        ` ${r.points.length} points${this.views.map(({ slot }) => slot.summary(r)).join('')} · ${r.model.preset} (${formatCount(r.model.params)} params, d=${c.hiddenSize}, ${c.numLayers} layers) · weights ${resultWeights(r)}${bitsText(r)}${r.model.graph ? ` · ${graphText(r)} graph` : ''}${kvText(r) ? ` · ${kvText(r)}` : ''} · ${formatDate(r.createdAt)}`,
      ]),
      h('p', {
        className: 'summary-line muted',
        text: `Cold start: compile ${formatMs(r.coldStart.compileMs)} ms, load ${formatMs(r.coldStart.loadMs)} ms · validation against the CPU reference ${v.passed ? 'passed' : 'FAILED'} (max rel err ${formatError(v.maxRelErr, 1)}) · ${r.env.browser}`,
      }),
    ];
    if (r.error) {
      lines.push(
        h('p', { className: 'summary-line status-note', text: `${r.error.name}: ${r.error.message}` }),
      );
    }
    if (r.warnings.length > 0) {
      lines.push(
        h(
          'ul',
          { className: 'warnings' },
          r.warnings.map((w) => h('li', { text: w })),
        ),
      );
    }
    return lines;
  }
}
