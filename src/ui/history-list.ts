/**
 * The history card: runs kept in this browser, newest first, each with Open, Compare and Delete.
 * When IndexedDB is unavailable the page still works; the card says history is off.
 */
import { adapterLabel } from '../results/export.ts';
import { button, card, h } from './dom.ts';
import { formatDate } from './format.ts';
import { resultWeights } from './formats/weights.ts';
import { deleteRun, type HistoryEntry, listRuns } from './history.ts';

export interface HistoryActions {
  open(entry: HistoryEntry): void;
  compare(entry: HistoryEntry): void;
}

export class HistoryList {
  readonly element: HTMLElement;
  private readonly list = h('ul', { className: 'history-list', testId: 'history' });
  private readonly note = h('p', { className: 'muted small' });

  constructor(private readonly actions: HistoryActions) {
    this.element = card('History', { className: 'history-card' }, [this.note, this.list]);
  }

  async refresh(): Promise<void> {
    try {
      const { entries, unreadable } = await listRuns();
      this.note.textContent =
        entries.length === 0
          ? 'Finished runs are kept here, in this browser only.'
          : `${entries.length} run${entries.length === 1 ? '' : 's'} kept in this browser.`;
      this.list.replaceChildren(
        ...entries.map((entry) => this.item(entry)),
        ...unreadable.map((id) =>
          h('li', { className: 'history-item' }, [
            h('span', { className: 'muted', text: 'A run saved by an older version (unreadable)' }),
            button('Delete', () => void this.remove(id), { className: 'btn btn-small btn-ghost' }),
          ]),
        ),
      );
    } catch (e) {
      this.note.textContent = `History is off: ${(e as Error).message}`;
    }
  }

  private item(entry: HistoryEntry): HTMLElement {
    const r = entry.result;
    const when = formatDate(r.createdAt);
    const status = r.status === 'complete' ? '' : ` · ${r.status}`;
    const spec = r.speculative ? ` · ${r.speculative.runs.length} speculative runs` : '';
    const serve = r.serve ? ` · load test, ${r.serve.runs.length} arms` : '';
    return h('li', { className: 'history-item' }, [
      h('div', { className: 'history-text' }, [
        h('span', {
          className: 'history-title',
          text: `${adapterLabel(r.env.adapter)} · ${r.model.preset} · ${resultWeights(r)}`,
        }),
        h('span', {
          className: 'history-meta',
          text: `${when} · ${r.points.length} points${spec}${serve}${status}`,
        }),
      ]),
      h('div', { className: 'history-actions' }, [
        button('Open', () => this.actions.open(entry), {
          className: 'btn btn-small',
          attrs: { 'aria-label': `Open the run of ${when}` },
        }),
        button('Compare', () => this.actions.compare(entry), {
          className: 'btn btn-small',
          attrs: { 'aria-label': `Add the run of ${when} to the comparison` },
        }),
        button('Delete', () => void this.remove(entry.id), {
          className: 'btn btn-small btn-ghost',
          attrs: { 'aria-label': `Delete the run of ${when}` },
        }),
      ]),
    ]);
  }

  private async remove(id: number): Promise<void> {
    await deleteRun(id);
    await this.refresh();
  }
}
