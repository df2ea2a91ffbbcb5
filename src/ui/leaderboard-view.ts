/**
 * The device leaderboard on the Compare tab: the imported runs ranked at the same model, weight
 * format and pass (src/results/leaderboard.ts, the CLI's `npm run compare -- DIR`), with filters,
 * and the same Markdown, CSV and HTML the CLI prints. Strings from files only ever become text.
 */
import {
  type BoardFile,
  type BoardGroup,
  type BoardRow,
  buildLeaderboard,
  deviceText,
  groupTitle,
  type Leaderboard,
  leaderboardToCsv,
  leaderboardToHtml,
  leaderboardToMarkdown,
  peerText,
  type SkippedFile,
  tok,
} from '../results/leaderboard.ts';
import { button, h } from './dom.ts';
import { download } from './export.ts';
import { fixed, formatMs } from './format.ts';
import { type Column, sortableTable } from './sortable-table.ts';

const ALL = '';

const COLUMNS: readonly Column<BoardRow>[] = [
  { header: 'rank', cell: (r) => String(r.rank), sortValue: (r) => r.rank, numeric: true },
  {
    header: 'device',
    cell: deviceText,
    sortValue: (r) => r.device,
  },
  { header: 'tok/s', cell: (r) => tok(r.tokensPerSec), sortValue: (r) => r.tokensPerSec, numeric: true },
  {
    header: '% of own roof',
    cell: (r) => fixed(r.roofPct, 1),
    sortValue: (r) => r.roofPct,
    numeric: true,
    title: "Share of this device's own roof at the point's arithmetic intensity, measured in the same run",
  },
  { header: 'ms', cell: (r) => formatMs(r.medianMs), sortValue: (r) => r.medianMs, numeric: true },
  { header: 'bound', cell: (r) => r.bound, sortValue: (r) => r.bound },
  { header: 'runtime', cell: (r) => r.runtime, sortValue: (r) => r.runtime },
  { header: 'browser / Dawn', cell: (r) => r.browser, sortValue: (r) => r.browser },
  { header: 'FMA GFLOP/s', cell: (r) => fixed(r.fmaGflops, 1), sortValue: (r) => r.fmaGflops, numeric: true },
  { header: 'copy GB/s', cell: (r) => fixed(r.copyGBps, 1), sortValue: (r) => r.copyGBps, numeric: true },
  {
    header: 'llama.cpp here (this ÷ peer)',
    cell: peerText,
    sortValue: (r) => r.peers[0]?.ratio ?? -1,
  },
  { header: 'file', cell: (r) => r.file, sortValue: (r) => r.file },
];

function select(label: string, testId: string, onChange: () => void): HTMLSelectElement {
  const el = h('select', { testId, attrs: { 'aria-label': label } });
  el.addEventListener('change', onChange);
  return el;
}

function setOptions(el: HTMLSelectElement, values: readonly string[], allLabel: string): void {
  const keep = el.value;
  el.replaceChildren(
    h('option', { text: allLabel, attrs: { value: ALL } }),
    ...values.map((v) => h('option', { text: v, attrs: { value: v } })),
  );
  el.value = values.includes(keep) ? keep : ALL;
}

export class LeaderboardView {
  readonly element: HTMLElement;
  private board: Leaderboard = { groups: [], files: 0, unranked: [] };
  private skipped: SkippedFile[] = [];
  private readonly host = h('div', { testId: 'leaderboard-groups' });
  private readonly skippedList = h('ul', { className: 'warnings', testId: 'leaderboard-skipped' });
  private readonly presetFilter = select('Model', 'leaderboard-preset', () => this.renderGroups());
  private readonly weightsFilter = select('Weight format', 'leaderboard-weights', () => this.renderGroups());
  private readonly passFilter = select('Pass', 'leaderboard-pass', () => this.renderGroups());
  private readonly hideSoftware = h('input', { testId: 'leaderboard-hardware', attrs: { type: 'checkbox' } });
  private readonly exportButtons: HTMLButtonElement[];

  constructor() {
    this.hideSoftware.addEventListener('change', () => this.renderGroups());
    this.exportButtons = (['md', 'csv', 'html'] as const).map((format) =>
      button(format === 'md' ? 'Markdown' : format.toUpperCase(), () => this.export(format), {
        className: 'btn btn-small',
        testId: `export-leaderboard-${format}`,
      }),
    );
    this.element = h('section', { className: 'card', testId: 'leaderboard' }, [
      h('div', { className: 'card-head' }, [
        h('h2', { text: 'Device leaderboard' }),
        h('div', { className: 'button-row' }, [
          h('span', { className: 'muted small', text: 'Export:' }),
          ...this.exportButtons,
        ]),
      ]),
      h('p', {
        className: 'muted small',
        text: 'Every imported run ranked at the same model, weight format and pass, at the shape (prompt length or decode depth, batch 1) the most runs measured; each device against its own roofs, measured in its own run. The same ranking as npm run compare -- DIR.',
      }),
      h('div', { className: 'button-row leaderboard-filters' }, [
        this.presetFilter,
        this.weightsFilter,
        this.passFilter,
        h('label', { className: 'small' }, [this.hideSoftware, ' hide software adapters']),
      ]),
      this.host,
      this.skippedList,
    ]);
    this.update([], []);
  }

  /** Ranks these runs; `skipped` are files that did not validate, listed and left out. */
  update(files: readonly BoardFile[], skipped: readonly SkippedFile[]): void {
    this.board = buildLeaderboard(files);
    this.skipped = [...skipped];
    const uniq = (f: (g: BoardGroup) => string) => [...new Set(this.board.groups.map(f))].sort();
    setOptions(
      this.presetFilter,
      uniq((g) => g.preset),
      'every model',
    );
    setOptions(
      this.weightsFilter,
      uniq((g) => g.weights),
      'every format',
    );
    setOptions(
      this.passFilter,
      uniq((g) => g.pass),
      'both passes',
    );
    for (const b of this.exportButtons) b.disabled = this.board.groups.length === 0;
    this.skippedList.replaceChildren(
      ...this.skipped.map((s) => h('li', { text: `Left out ${s.file}: ${s.error}` })),
      ...this.board.unranked.map((u) => h('li', { text: `Ranked nowhere: ${u.file}, ${u.why}` })),
    );
    this.renderGroups();
  }

  private renderGroups(): void {
    const hide = this.hideSoftware.checked;
    const groups = this.board.groups.filter(
      (g) =>
        (this.presetFilter.value === ALL || g.preset === this.presetFilter.value) &&
        (this.weightsFilter.value === ALL || g.weights === this.weightsFilter.value) &&
        (this.passFilter.value === ALL || g.pass === this.passFilter.value),
    );
    if (groups.length === 0) {
      this.host.replaceChildren(
        h('p', {
          className: 'muted',
          text:
            this.board.groups.length === 0
              ? 'Import result files (or a folder of them) to rank their devices.'
              : 'No group matches the filters.',
        }),
      );
      return;
    }
    this.host.replaceChildren(
      ...groups.map((g) => {
        const rows = hide ? g.rows.filter((r) => !r.fallback) : g.rows;
        return h('div', { className: 'leaderboard-group' }, [
          h('h3', { text: groupTitle(g) }),
          rows.length > 0
            ? h(
                'div',
                {
                  className: 'table-scroll',
                  attrs: { tabindex: 0, role: 'region', 'aria-label': groupTitle(g) },
                },
                [sortableTable(COLUMNS, rows, { testId: 'leaderboard-table' })],
              )
            : h('p', { className: 'muted', text: 'Only software adapters ran this.' }),
          g.otherShape.length > 0
            ? h('p', {
                className: 'muted small',
                text: `Not at this shape, so not ranked here: ${g.otherShape.join(', ')}.`,
              })
            : null,
        ]);
      }),
    );
  }

  private export(format: 'md' | 'csv' | 'html'): void {
    const text =
      format === 'md'
        ? leaderboardToMarkdown(this.board)
        : format === 'csv'
          ? leaderboardToCsv(this.board)
          : leaderboardToHtml(this.board, this.skipped);
    download(`leaderboard.${format}`, text, format);
  }
}
