/**
 * Progress of a run: which workload runs and what it measures, points finished of the total,
 * elapsed time and ETA. While the engine sets up (roofs, autotune, model, validation) the bar is
 * indeterminate, since it cannot yet estimate those steps. data-done, data-total and data-workload
 * are hooks for tests.
 */
import type { Progress } from '../runtime/api.ts';
import { h } from './dom.ts';
import { formatClock } from './format.ts';

export class ProgressView {
  readonly element: HTMLElement;
  private readonly bar = h('progress', { attrs: { max: 1, value: 0 } });
  private readonly label = h('span', { className: 'progress-label', text: 'Ready' });
  private readonly count = h('span', { className: 'progress-count' });
  private readonly meta = h('span', { className: 'progress-meta' });

  constructor() {
    this.element = h('div', { className: 'progress', testId: 'progress', attrs: { 'aria-live': 'polite' } }, [
      h('div', { className: 'progress-head' }, [this.label, this.count]),
      this.bar,
      this.meta,
    ]);
    this.bar.setAttribute('aria-label', 'Benchmark progress');
  }

  start(): void {
    this.element.classList.add('active');
    this.element.dataset.done = '0';
    this.element.dataset.total = '0';
    this.label.textContent = 'Starting the engine…';
    this.count.textContent = '';
    this.meta.textContent = '';
    this.bar.removeAttribute('value');
  }

  update(p: Progress): void {
    this.element.dataset.done = String(p.done);
    this.element.dataset.total = String(p.total);
    this.element.dataset.workload = p.workload ?? '';
    const measuring = p.workload !== null || p.done > 0;
    this.label.textContent = p.workload ? `${p.workload}: ${p.label}` : p.label;
    // Whole points: a workload may count one in parts (the task table, slice by slice).
    this.count.textContent = `${Math.floor(p.done)}/${p.total}`;
    if (measuring) {
      this.bar.max = Math.max(1, p.total);
      this.bar.value = p.done;
    } else {
      // Indeterminate: the engine's set-up steps have no measurable fraction.
      this.bar.removeAttribute('value');
    }
    const eta = p.etaMs !== null && p.done < p.total ? ` · about ${formatClock(p.etaMs)} left` : '';
    this.meta.textContent = `elapsed ${formatClock(p.elapsedMs)}${eta}`;
  }

  /** A step after the engine's run (the peer beside it): its label, the bar indeterminate. */
  step(label: string): void {
    this.element.classList.add('active');
    this.label.textContent = label;
    this.meta.textContent = '';
    this.bar.removeAttribute('value');
  }

  /** The run ended: keep the last count, say how it ended. */
  finish(summary: string): void {
    this.element.classList.remove('active');
    this.label.textContent = summary;
    if (!this.bar.hasAttribute('value')) this.bar.value = 0;
  }
}
