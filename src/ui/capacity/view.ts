/**
 * The Capacity tab: how many GPUs a model and a traffic mix need, how many sessions fit, and how
 * fast they run on the roofs typed in or measured by this page. It is pure arithmetic
 * (src/capacity/estimate.ts, the same code as the CLI), so it recomputes on every keystroke;
 * while an input is invalid the last answer stays, dimmed and marked stale, beside the errors.
 */
import { type CapacityEstimate, type CapacityInput, estimateCapacity } from '../../capacity/estimate.ts';
import type { CapacityModel } from '../../capacity/model.ts';
import type { BenchResult } from '../../results/schema.ts';
import { capacityChart } from '../charts/capacity.ts';
import { ChartPanel } from '../charts/panel.ts';
import { h, setChildren } from '../dom.ts';
import { CapacityForm } from './form.ts';
import { capacityResults } from './results.ts';

interface Answer {
  model: CapacityModel;
  input: CapacityInput;
  estimate: CapacityEstimate;
}

export class CapacityView {
  readonly element: HTMLElement;
  private readonly form: CapacityForm;
  private readonly results = h('section', { className: 'card cap-results', testId: 'cap-results' });
  private readonly status = h('p', {
    className: 'cap-status',
    testId: 'cap-status',
    attrs: { 'aria-live': 'polite' },
  });
  private readonly body = h('div', { className: 'cap-body' });
  private readonly chart: ChartPanel;
  private answer: Answer | null = null;
  private scheduled = false;

  constructor() {
    this.form = new CapacityForm(() => this.schedule());
    this.chart = new ChartPanel({
      title: 'Memory against concurrency',
      testId: 'capacity-chart',
      wide: true,
      fileStem: () => 'capacity',
      emptyText: 'The chart appears once the inputs are valid.',
      caption:
        'Weights (grey) plus the KV cache of n sessions of the traffic mix. The paged cache holds each ' +
        'session’s tokens rounded up to whole pages (with a sliding window, only the pages of its last W ' +
        'tokens); a contiguous cache reserves the full length for every ' +
        'session, so it climbs faster and fewer sessions fit. A line crossing the usable memory (dashed: ' +
        'GPUs × memory × headroom) marks the most sessions that fit; the dotted rule is the sessions asked for.',
    });
    this.results.append(
      h('div', { className: 'card-head' }, [h('h2', { text: 'Capacity estimate' })]),
      this.status,
      this.body,
    );
    this.element = h('div', { className: 'capacity-view' }, [
      h('section', { className: 'card' }, [
        h('h2', { text: 'Capacity planner' }),
        h('p', {
          className: 'lede',
          text: 'Size a deployment: the KV cache per token is 2 · layers · KV heads · (head dim · bytes + scale bytes, 4 for int8’s f32 scale), a sliding window keeps only each session’s last W tokens, the weights follow from the shape, and the traffic sets how many sessions must fit. Times come from the roofs, typed in or measured by a run in this page. Everything is computed here, as you type.',
        }),
        this.form.element,
      ]),
      this.results,
      this.chart.element,
    ]);
    this.recompute();
  }

  /** A finished run, offered for its measured roofs (live: the App calls this as a run lands). */
  setRun(result: BenchResult): void {
    this.form.setRun(result);
  }

  /** Coalesces the several events one edit fires (input, change, a picker's own notice) into one recompute. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.recompute();
    });
  }

  private recompute(): void {
    const state = this.form.read();
    if (state.status === 'ok') {
      this.answer = {
        model: state.model,
        input: state.input,
        estimate: estimateCapacity(state.model, state.input),
      };
      this.showAnswer(this.answer);
      this.setState('fresh', '');
      return;
    }
    const why =
      state.status === 'pending' ? state.reason : 'Some inputs are invalid: see the messages at the fields.';
    this.setState(
      this.answer ? 'stale' : 'empty',
      this.answer ? `${why} The figures below are for the last valid inputs.` : why,
    );
  }

  private showAnswer({ model, input, estimate }: Answer): void {
    setChildren(this.body, capacityResults(estimate, input, model));
    this.chart.update((width) => capacityChart(estimate, input, width));
  }

  private setState(state: 'fresh' | 'stale' | 'empty', message: string): void {
    this.results.dataset.state = state;
    this.chart.element.dataset.state = state;
    this.status.textContent = message;
    this.status.hidden = message === '';
    this.body.hidden = state === 'empty';
  }
}
