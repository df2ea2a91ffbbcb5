/**
 * The compare view: result files imported (picker or drag and drop) or runs picked from history,
 * overlaid on the same charts with one colour per device, and a table of times with speed-up
 * columns; each run's weight format in its entry and its chart labels; below them, the
 * KV cells of every run that has a KV matrix, joined in one table, and the weight-format, sustained-load,
 * speculative-decoding, load-test and B-scaling sections of each run that has them. Imported files are untrusted; see import.ts. Their strings only ever become text.
 */
import {
  type ComparedFile,
  type Comparison,
  compareResults,
  comparisonToCsv,
  comparisonToMarkdown,
  ResultFileError,
} from '../results/compare.ts';
import { adapterLabel } from '../results/export.ts';
import {
  comparePeers,
  formatPeerMs,
  formatPeerRatio,
  mixedClocksNote,
  mixesPresets,
  type PeerComparisonRow,
  peerRowLabel,
} from '../results/peer-compare.ts';
import type { BenchResult } from '../results/schema.ts';
import { ChartSet } from './charts/chart-set.ts';
import { type ChartRun, runColor } from './charts/common.ts';
import { button, h, uniqueId } from './dom.ts';
import type { ErrorBanner } from './error-banner.ts';
import { download, resultFileStem } from './export.ts';
import { fixed, formatDate, formatMs, formatNumber } from './format.ts';
import { FormatsView } from './formats/view.ts';
import { resultWeights } from './formats/weights.ts';
import { readResultFiles, readResultFolder } from './import.ts';
import { kvCompareTable } from './kv-compare.ts';
import { LeaderboardView } from './leaderboard-view.ts';
import { BatchScalingView } from './serve/batch-view.ts';
import { ServeView } from './serve/view.ts';
import { type Column, sortableTable } from './sortable-table.ts';
import { SpecView } from './speculative/view.ts';
import { SustainedView } from './sustained-view.ts';
import { TasksView } from './tasks-view.ts';

interface Entry {
  /** Identity, so the same history run or file is not added twice. */
  key: string;
  name: string;
  result: BenchResult;
}

/** A speed-up this close to 1 is shown as a tie, not coloured: run-to-run noise is larger. */
const TIE_BAND = 0.05;

/** A colour chip; set through CSSOM, which the CSP does not restrict, rather than a style attribute. */
function swatch(color: string): HTMLElement {
  const el = h('span', { className: 'swatch', attrs: { 'aria-hidden': true } });
  el.style.background = color;
  return el;
}

function runLabel(e: Entry, i: number): string {
  return `#${i + 1} ${adapterLabel(e.result.env.adapter)}`;
}

export class CompareView {
  readonly element: HTMLElement;
  private entries: Entry[] = [];
  private readonly list = h('ol', { className: 'compare-list', testId: 'compare-list' });
  private readonly tableHost = h('div', { className: 'compare-table-host' });
  private readonly warnings = h('ul', { className: 'warnings' });
  private readonly peersHost = h('div', { className: 'compare-table-host' });
  private readonly peersCard: HTMLElement;
  private readonly exportButtons: HTMLButtonElement[];
  private readonly addCurrentButton: HTMLButtonElement;
  private readonly charts = new ChartSet({ idPrefix: 'compare', fileStem: () => 'comparison' });
  /** The speculative sections of the runs that have one, by entry key, in the order of the entries. */
  private readonly specHost = h('div', { className: 'compare-spec' });
  private readonly specViews = new Map<string, SpecView>();
  /** The load-test and B-scaling sections, likewise. */
  private readonly serveHost = h('div', { className: 'compare-spec' });
  private readonly serveViews = new Map<
    string,
    { serve: ServeView | null; batch: BatchScalingView | null }
  >();
  /** The format sweeps' sections, likewise. */
  private readonly formatsHost = h('div', { className: 'compare-spec' });
  private readonly formatsViews = new Map<string, FormatsView>();
  /** The sustained-load sections, likewise. */
  private readonly sustainedHost = h('div', { className: 'compare-spec' });
  private readonly tasksHost = h('div', { className: 'compare-spec' });
  private readonly tasksViews = new Map<string, TasksView>();
  private readonly sustainedViews = new Map<string, SustainedView>();
  /** Every run's KV cells in one table, keyed by device × cell, shown once a run has a KV matrix. */
  private readonly kvHost = h('div', { className: 'compare-table-host' });
  private readonly kvCard: HTMLElement;
  private comparison: Comparison | null = null;
  private readonly leaderboard = new LeaderboardView();
  /** Files of imported folders that did not validate: listed under the leaderboard, left out. */
  private skipped: { file: string; error: string }[] = [];

  constructor(
    private readonly errors: ErrorBanner,
    private readonly currentRun: () => BenchResult | null,
    private readonly onCountChange: (count: number) => void,
  ) {
    const inputId = uniqueId('import');
    const input = h('input', {
      className: 'visually-hidden',
      testId: 'import',
      attrs: { id: inputId, type: 'file', accept: '.json,application/json', multiple: true },
    });
    input.addEventListener('change', () => {
      const files = [...(input.files ?? [])];
      input.value = '';
      void this.importFiles(files);
    });
    const folderId = uniqueId('import-folder');
    const folder = h('input', {
      className: 'visually-hidden',
      testId: 'import-folder',
      attrs: { id: folderId, type: 'file', webkitdirectory: true, multiple: true },
    });
    folder.addEventListener('change', () => {
      const files = [...(folder.files ?? [])];
      folder.value = '';
      void this.importFolder(files);
    });
    const drop = h('div', { className: 'drop-zone' }, [
      h('label', { className: 'btn btn-primary', text: 'Import result files…', attrs: { for: inputId } }),
      input,
      h('label', { className: 'btn', text: 'Import a folder…', attrs: { for: folderId } }),
      folder,
      h('span', { className: 'muted', text: 'or drop .json files here (50 MB at most each)' }),
    ]);
    drop.addEventListener('dragover', (ev) => {
      ev.preventDefault();
      drop.classList.add('dragging');
    });
    drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
    drop.addEventListener('drop', (ev) => {
      ev.preventDefault();
      drop.classList.remove('dragging');
      void this.importFiles([...(ev.dataTransfer?.files ?? [])]);
    });

    this.addCurrentButton = button('Add the current run', () => this.addCurrent(), {
      className: 'btn',
      attrs: { disabled: true },
    });
    this.exportButtons = [
      button('Markdown', () => this.exportComparison('md'), {
        className: 'btn btn-small',
        testId: 'export-compare-md',
      }),
      button('CSV', () => this.exportComparison('csv'), {
        className: 'btn btn-small',
        testId: 'export-compare-csv',
      }),
    ];
    this.peersCard = h('section', { className: 'card', testId: 'compare-peers' }, [
      h('h2', { text: 'Beside llama.cpp' }),
      h('p', {
        className: 'muted small',
        text: 'Each run against the peer it measured on its own machine, on the same GGUF file; joined by engine, backend and weight type. Speed is this engine ÷ the peer: above 1, this engine was faster.',
      }),
      this.peersHost,
    ]);
    this.kvCard = h('section', { className: 'card', testId: 'compare-kv' }, [
      h('h2', { text: 'KV cache cells' }),
      h('p', {
        className: 'muted small',
        text: 'The KV matrix (--suite kv) of each run that has one: KV heads, KV type and window per row, with the memory a token costs, what fits that run’s pool, and its times and error. Bytes per token depend on the model alone; the times and what fits, on the device.',
      }),
      this.kvHost,
    ]);
    this.element = h('div', { className: 'compare-view' }, [
      h('section', { className: 'card' }, [
        h('h2', { text: 'Compare runs' }),
        h('p', {
          className: 'lede',
          text: 'Run the benchmark on each laptop, export JSON there, and import the files here; or pick runs from the history. Files are checked against the result schema and never leave this page.',
        }),
        drop,
        h('div', { className: 'button-row' }, [
          this.addCurrentButton,
          button('Clear', () => this.clear(), { className: 'btn btn-ghost' }),
        ]),
        this.list,
      ]),
      h('section', { className: 'card' }, [
        h('div', { className: 'card-head' }, [
          h('h2', { text: 'Times and speed-ups' }),
          h('div', { className: 'button-row' }, [
            h('span', { className: 'muted small', text: 'Export:' }),
            ...this.exportButtons,
          ]),
        ]),
        this.tableHost,
        this.warnings,
      ]),
      this.leaderboard.element,
      this.peersCard,
      this.charts.element,
      this.kvCard,
      this.formatsHost,
      this.tasksHost,
      this.sustainedHost,
      this.specHost,
      this.serveHost,
    ]);
    this.render();
  }

  /** Offers the current run once one exists. */
  setCurrentAvailable(available: boolean): void {
    this.addCurrentButton.disabled = !available;
  }

  async importFiles(files: readonly File[]): Promise<void> {
    if (files.length === 0) return;
    let imported: ComparedFile[];
    try {
      imported = await readResultFiles(files);
    } catch (e) {
      const message =
        e instanceof ResultFileError ? e.message : `${(e as Error).name}: ${(e as Error).message}`;
      this.errors.show('import', 'Import failed; nothing was imported.', message);
      return;
    }
    this.errors.clearFrom('import');
    for (const f of imported) this.add(`file:${f.name}:${f.result.createdAt}`, f.name, f.result, false);
    this.render();
  }

  /** A folder of results (a fleet's --out-dir): its valid files are added, the others listed. */
  async importFolder(files: readonly File[]): Promise<void> {
    if (files.length === 0) return;
    const { files: imported, skipped } = await readResultFolder(files);
    this.skipped = skipped;
    if (imported.length === 0 && skipped.length === 0)
      this.errors.show('import', 'Import failed; nothing was imported.', 'The folder has no .json files.');
    else this.errors.clearFrom('import');
    for (const f of imported) this.add(`file:${f.name}:${f.result.createdAt}`, f.name, f.result, false);
    this.render();
  }

  /** Adds a run from history or the current run; `key` keeps it from being added twice. */
  add(key: string, name: string, result: BenchResult, render = true): void {
    if (this.entries.some((e) => e.key === key)) return;
    this.entries.push({ key, name, result });
    if (render) this.render();
  }

  /** Redraws charts that were laid out while hidden. */
  shown(): void {
    this.charts.update(this.chartRuns());
  }

  private addCurrent(): void {
    const r = this.currentRun();
    if (r) this.add(`run:${r.createdAt}`, `this run (${formatDate(r.createdAt)})`, r);
  }

  private clear(): void {
    this.entries = [];
    this.skipped = [];
    this.render();
  }

  private remove(key: string): void {
    this.entries = this.entries.filter((e) => e.key !== key);
    this.render();
  }

  private chartRuns(): ChartRun[] {
    return this.entries.map((e, i) => ({
      label: runLabel(e, i),
      points: e.result.points,
      peaks: e.result.peaks,
      peers: e.result.peers,
    }));
  }

  private render(): void {
    this.onCountChange(this.entries.length);
    this.list.replaceChildren(...this.entries.map((e, i) => this.listItem(e, i)));
    this.comparison = this.entries.length > 0 ? compareResults(this.entries) : null;
    for (const b of this.exportButtons) b.disabled = this.entries.length < 2;

    if (this.comparison && this.entries.length >= 2) {
      this.tableHost.replaceChildren(this.table(this.comparison));
    } else {
      this.tableHost.replaceChildren(
        h('p', {
          className: 'muted',
          text:
            this.entries.length === 0
              ? 'No runs yet: import two or more result files.'
              : 'Add one more run to compare.',
        }),
      );
    }
    const notes = [...(this.comparison?.warnings ?? [])];
    if (new Set(this.entries.map((e) => e.result.model.preset)).size > 1) {
      notes.push('The runs use different models: only points of the same preset are joined.');
    }
    this.warnings.replaceChildren(...notes.map((w) => h('li', { text: w })));
    // Runs of speculative decoding or load tests alone have no points: their sections below say it all.
    this.charts.element.hidden =
      this.entries.length > 0 &&
      this.entries.every(
        (e) =>
          e.result.points.length === 0 &&
          (e.result.speculative || e.result.serve || e.result.sustained || e.result.kv),
      );
    this.charts.update(this.chartRuns());
    this.leaderboard.update(this.entries, this.skipped);
    this.renderPeers();
    this.renderKv();
    this.renderFormats();
    this.renderTasks();
    this.renderSustained();
    this.renderSpec();
    this.renderServe();
  }

  /** The peers' table, shown once any run has a measured peer point. */
  private renderPeers(): void {
    const rows = comparePeers(this.entries);
    this.peersCard.hidden = rows.length === 0;
    this.peersHost.replaceChildren(rows.length > 0 ? this.peersTable(rows) : '');
  }

  private peersTable(rows: PeerComparisonRow[]): HTMLElement {
    type Row = PeerComparisonRow;
    const withPreset = mixesPresets(rows);
    const columns: Column<Row>[] = [
      {
        header: 'peer',
        cell: (r) => peerRowLabel(r.key, withPreset),
        sortValue: (r) => peerRowLabel(r.key, withPreset),
      },
      {
        header: 'test',
        title: "llama-bench's name: ppL is a prefill of L tokens, tgN @ dD is N decode steps at context D",
        cell: (r) => r.test,
        sortValue: (r) => r.test,
      },
    ];
    this.entries.forEach((e, i) => {
      columns.push({
        header: `#${i + 1} peer ms`,
        title: `The peer's median in ${e.name}, on its own clock (see that run's report)`,
        cell: (r) => formatPeerMs(r, i),
        sortValue: (r) => r.peerMs[i] ?? Number.POSITIVE_INFINITY,
        numeric: true,
      });
    });
    this.entries.forEach((e, i) => {
      columns.push({
        header: `#${i + 1} speed`,
        title: `This engine's speed over the peer's in ${e.name}: the peer's time ÷ this engine's on the same test`,
        cell: (r) => formatPeerRatio(r.ratio[i] ?? null),
        sortValue: (r) => r.ratio[i] ?? -1,
        numeric: true,
        cellClass: (r) => {
          const x = r.ratio[i];
          if (x === null || Math.abs(x - 1) <= TIE_BAND) return 'ratio';
          return x > 1 ? 'ratio faster' : 'ratio slower';
        },
      });
    });
    const note = mixedClocksNote(
      rows,
      this.entries.map((_, i) => `#${i + 1}`),
    );
    return sortableTable(columns, rows, {
      testId: 'compare-peers-table',
      caption: `Each run's peer time and this engine's speed against it (above 1: this engine faster).${note ? ` ${note}` : ''}`,
    });
  }

  /** The KV cells of every run that has a KV matrix, joined in one table. */
  private renderKv(): void {
    const table = kvCompareTable(
      this.entries.map((e, i) => ({ label: runLabel(e, i), result: e.result })),
      'compare-kv-table',
    );
    this.kvCard.hidden = table === null;
    this.kvHost.replaceChildren(table ?? '');
  }

  /** One format-sweep section per run that has one, reused while its entry stays. */
  private renderFormats(): void {
    this.renderPerRun(
      this.formatsViews,
      this.formatsHost,
      (r) => Boolean(r.formats?.length || r.quality?.length),
      (result) => new FormatsView({ idPrefix: 'compare', fileStem: () => resultFileStem(result) }),
      'weight formats',
    );
  }

  /** What each run's model got right on its held-out set (the quick suite on a trained preset), one per run. */
  private renderTasks(): void {
    this.renderPerRun(
      this.tasksViews,
      this.tasksHost,
      (r) => Boolean(r.tasks?.length),
      (result, i) => new TasksView({ idPrefix: `compare-${i + 1}`, fileStem: () => resultFileStem(result) }),
      'task quality',
    );
  }

  /** The sustained-load sections (tok/s and roofs over time), one per run that has one. */
  private renderSustained(): void {
    this.renderPerRun(
      this.sustainedViews,
      this.sustainedHost,
      (r) => Boolean(r.sustained),
      (result, i) =>
        new SustainedView({ idPrefix: `compare-${i + 1}`, fileStem: () => resultFileStem(result) }),
      'sustained load',
    );
  }

  /** The load-test and B-scaling sections of each run that has them, reused while its entry stays. */
  private renderServe(): void {
    const shown: HTMLElement[] = [];
    const keys = new Set<string>();
    this.entries.forEach((e, i) => {
      const result = e.result;
      if (!result.serve && !result.batchScaling?.length) return;
      let views = this.serveViews.get(e.key);
      if (!views) {
        const options = { idPrefix: 'compare', fileStem: () => resultFileStem(result) };
        views = {
          serve: result.serve ? new ServeView(options) : null,
          batch: result.batchScaling?.length ? new BatchScalingView(options) : null,
        };
        this.serveViews.set(e.key, views);
      }
      views.serve?.show(result, `${runLabel(e, i)}: load test`);
      views.batch?.show(result, `${runLabel(e, i)}: B-scaling`);
      for (const view of [views.serve, views.batch]) if (view) shown.push(view.element);
      keys.add(e.key);
    });
    for (const key of [...this.serveViews.keys()]) if (!keys.has(key)) this.serveViews.delete(key);
    this.serveHost.replaceChildren(...shown);
  }

  /** One speculative section per run that has one, reused while its entry stays. */
  private renderSpec(): void {
    this.renderPerRun(
      this.specViews,
      this.specHost,
      (r) => Boolean(r.speculative),
      (result) => new SpecView({ idPrefix: 'compare', fileStem: () => resultFileStem(result) }),
      'speculative decoding',
    );
  }

  /**
   * One view of a section per run that has it, headed by the run's label, in the entries' order:
   * each made once and reused while its entry stays, dropped when the entry goes.
   */
  private renderPerRun<V extends { element: HTMLElement; show(r: BenchResult, heading: string): void }>(
    views: Map<string, V>,
    host: HTMLElement,
    has: (r: BenchResult) => boolean,
    make: (r: BenchResult, index: number) => V,
    what: string,
  ): void {
    const shown: V[] = [];
    const keys = new Set<string>();
    this.entries.forEach((e, i) => {
      if (!has(e.result)) return;
      let view = views.get(e.key);
      if (!view) {
        view = make(e.result, i);
        views.set(e.key, view);
      }
      view.show(e.result, `${runLabel(e, i)}: ${what}`);
      shown.push(view);
      keys.add(e.key);
    });
    for (const key of [...views.keys()]) if (!keys.has(key)) views.delete(key);
    host.replaceChildren(...shown.map((v) => v.element));
  }

  private listItem(e: Entry, i: number): HTMLElement {
    const r = e.result;
    const p = r.peaks;
    return h('li', { className: 'compare-item' }, [
      swatch(runColor(i)),
      h('div', { className: 'compare-text' }, [
        h('span', { className: 'compare-title' }, [
          h('strong', { text: `#${i + 1} ${adapterLabel(r.env.adapter)}` }),
          r.env.adapter.isFallbackAdapter
            ? h('span', { className: 'tag tag-warn', text: 'software adapter' })
            : null,
          r.status === 'complete' ? null : h('span', { className: 'tag', text: r.status }),
        ]),
        h('span', {
          className: 'compare-meta',
          text: `${e.name} · ${r.model.preset} · weights ${resultWeights(r)} · ${r.env.browser} · ${formatDate(r.createdAt)}`,
        }),
        h('span', {
          className: 'compare-meta',
          text: `FMA ${formatNumber(p.fmaGflops)} GFLOP/s · copy ${formatNumber(p.copyGBps)} GB/s · dispatch ${formatNumber(p.dispatchUs)} µs (empty ${formatNumber(p.emptyDispatchUs)}) · submit ${formatNumber(p.submitUs)} µs`,
        }),
      ]),
      button('Remove', () => this.remove(e.key), {
        className: 'btn btn-small btn-ghost',
        attrs: { 'aria-label': `Remove #${i + 1} from the comparison` },
      }),
    ]);
  }

  private table(cmp: Comparison): HTMLElement {
    type Row = Comparison['rows'][number];
    const n = cmp.files.length;
    const withPreset = new Set(cmp.rows.map((r) => r.key.preset)).size > 1;
    const size = (r: Row) => (r.key.pass === 'prefill' ? r.key.tokens : r.key.depth);
    const columns: Column<Row>[] = [
      ...(withPreset
        ? [{ header: 'preset', cell: (r: Row) => r.key.preset, sortValue: (r: Row) => r.key.preset }]
        : []),
      { header: 'pass', cell: (r) => r.key.pass, sortValue: (r) => r.key.pass },
      { header: 'L/depth', cell: (r) => String(size(r)), sortValue: size, numeric: true },
      { header: 'B', cell: (r) => String(r.key.batch), sortValue: (r) => r.key.batch, numeric: true },
      {
        header: 'clock',
        title: 'The clock compared: gpu when every run placed this point by GPU time, else wall',
        cell: (r) => r.clock,
        sortValue: (r) => r.clock,
      },
    ];
    for (let i = 0; i < n; i++) {
      columns.push({
        header: `#${i + 1} ms`,
        title: `Median time in ${cmp.files[i].name}, on the row's clock`,
        cell: (r) => (r.medianMs[i] === null ? '–' : formatMs(r.medianMs[i] ?? 0)),
        sortValue: (r) => r.medianMs[i] ?? Number.POSITIVE_INFINITY,
        numeric: true,
      });
    }
    for (let i = 0; i < n; i++) {
      columns.push({
        header: `#${i + 1} tok/s`,
        title: `Tokens per second in ${cmp.files[i].name}`,
        cell: (r) => (r.tokensPerSec[i] === null ? '–' : fixed(r.tokensPerSec[i] ?? 0, 1)),
        sortValue: (r) => r.tokensPerSec[i] ?? -1,
        numeric: true,
      });
    }
    for (let i = 1; i < n; i++) {
      columns.push({
        header: `#${i + 1} vs #1`,
        title: `Speed-up of ${cmp.files[i].name} over ${cmp.files[0].name}: #1's time ÷ #${i + 1}'s time; above 1 is faster`,
        cell: (r) => {
          const s = r.speedup[i - 1];
          return s === null ? '–' : `${s.toFixed(2)}×`;
        },
        sortValue: (r) => r.speedup[i - 1] ?? -1,
        numeric: true,
        cellClass: (r) => {
          const s = r.speedup[i - 1];
          if (s === null || Math.abs(s - 1) <= TIE_BAND) return 'ratio';
          return s > 1 ? 'ratio faster' : 'ratio slower';
        },
      });
    }
    return sortableTable(columns, cmp.rows, {
      testId: 'compare-table',
      caption:
        'Median time per point in each run; the “vs #1” columns are speed-ups over run #1 (above 1 is faster).',
    });
  }

  private exportComparison(format: 'md' | 'csv'): void {
    if (!this.comparison) return;
    const text = format === 'md' ? comparisonToMarkdown(this.comparison) : comparisonToCsv(this.comparison);
    download(`comparison.${format}`, text, format);
  }
}
