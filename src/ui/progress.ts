/**
 * Progress of a run: what is being measured, points finished of the total, elapsed time and ETA.
 * Before the first point (roofs, compile, validation) the bar is indeterminate, since the engine
 * cannot yet estimate those phases. data-done and data-total are hooks for tests.
 */
import type { Progress } from '../worker/api.ts';
import { h } from './dom.ts';
import { formatClock } from './format.ts';

/** What each phase before the sweeps is doing, in the user's words. */
const PHASE_TEXT: Record<Progress['phase'], string> = {
  peaks: 'Measuring the roofs',
  model: 'Building the model',
  validate: 'Validating against the CPU reference',
  prefill: 'Prefill',
  decode: 'Decode',
  kernels: 'Timing each kernel alone',
  done: 'Done',
};

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
    this.element.dataset.phase = p.phase;
    const sweeping = p.phase === 'prefill' || p.phase === 'decode' || p.phase === 'done' || p.done > 0;
    this.label.textContent = sweeping ? p.label : `${PHASE_TEXT[p.phase]}…`;
    this.count.textContent = `${p.done}/${p.total}`;
    if (sweeping) {
      this.bar.max = Math.max(1, p.total);
      this.bar.value = p.done;
    } else {
      // Indeterminate: the phases before the sweep have no measurable fraction.
      this.bar.removeAttribute('value');
    }
    const eta = p.etaMs !== null && p.phase !== 'done' ? ` · about ${formatClock(p.etaMs)} left` : '';
    this.meta.textContent = `elapsed ${formatClock(p.elapsedMs)}${eta}`;
  }

  /** The run ended: keep the last count, say how it ended. */
  finish(summary: string): void {
    this.element.classList.remove('active');
    this.label.textContent = summary;
    if (!this.bar.hasAttribute('value')) this.bar.value = 0;
  }
}
