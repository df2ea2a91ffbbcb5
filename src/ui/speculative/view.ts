/**
 * The speculative-decoding section of a result (result.speculative): a card with the headline
 * figures, the knee at each depth and the table of runs, then four charts: the verify-K curve, the
 * verify passes on the roofline, speed-up against acceptance rate, and acceptance by draft position.
 * The run view shows one for the run on screen; the compare view one per compared file that has it.
 */
import { adapterLabel } from '../../results/export.ts';
import type { BenchResult } from '../../results/schema.ts';
import { ChartPanel } from '../charts/panel.ts';
import { rooflineChart } from '../charts/roofline.ts';
import { acceptanceByPositionChart, speedupChart, verifyCurveChart } from '../charts/speculative.ts';
import { h, setChildren } from '../dom.ts';
import { specRunsTable } from './runs-table.ts';
import { kneeList, mismatchNotice, specTiles } from './summary.ts';

export interface SpecViewOptions {
  /** Prefix of the test ids; the run view's are plain (`spec-curve-chart`). */
  idPrefix: string;
  /** Stem of SVG file names. */
  fileStem: () => string;
}

export class SpecView {
  readonly element: HTMLElement;
  private readonly heading = h('h2', { text: 'Speculative decoding' });
  private readonly body: HTMLElement;
  private readonly id: (name: string) => string;
  private readonly curve: ChartPanel;
  private readonly roofline: ChartPanel;
  private readonly speedup: ChartPanel;
  private readonly positions: ChartPanel;

  constructor(options: SpecViewOptions) {
    this.id = (name) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    const stem = (name: string) => () => `${options.fileStem()}-${name}`;
    this.body = h('div', { className: 'spec-body' });
    this.curve = new ChartPanel({
      title: 'Verify-K curve',
      testId: this.id('spec-curve-chart'),
      fileStem: stem('verify-curve'),
      emptyText: 'No verify-K curve in this result.',
      caption:
        'What verifying k tokens in one pass costs, in decode steps: the verify pass’s median time ÷ one ' +
        'decode step’s, at the same depth and on the same clock. While decode is bandwidth- or ' +
        'overhead-bound the extra tokens ride along almost free (near 1×). The knee (ringed) is the ' +
        'largest k at or under the dashed rule; past it each extra token costs real time. A draft of K ' +
        'tokens needs a verify of K + 1.',
    });
    this.roofline = new ChartPanel({
      title: 'Verify passes on the roofline',
      testId: this.id('spec-roofline'),
      fileStem: stem('verify-roofline'),
      emptyText: 'No verify passes with a measured placement.',
      caption:
        'Each verify pass placed like any pass: arithmetic intensity (FLOP/byte) against achieved GFLOP/s, ' +
        'under the roofs measured in this run, one connected series per depth in order of k. A pass of k ' +
        'tokens does k times a decode step’s work on nearly the same bytes (the weights, read once per ' +
        'chunk), so as k grows the series slides right, from the bandwidth slope toward the compute roof; ' +
        'the knee is where it starts to pay for the extra work in time.',
    });
    this.speedup = new ChartPanel({
      title: 'Speed-up against acceptance rate',
      testId: this.id('spec-speedup-chart'),
      fileStem: stem('speedup'),
      wide: true,
      emptyText: 'No speculative runs in this result (the curve alone was measured).',
      caption:
        'Each mark is one drafter on one prompt class: accepted ÷ drafted tokens against the measured ' +
        'speed-up over plain greedy decode of the same prompts (wall clock). The dashed line is predicted ' +
        'for a free drafter; each point’s own prediction, with its draft cost, is in the table. It takes ' +
        'each drafted token as accepted with probability α independently, so a step emits τ = (1 − α^(K+1)) ' +
        '÷ (1 − α) tokens and accepted ÷ drafted = (τ − 1) ÷ K, with the verify and decode times read off the ' +
        'curve at K + 1 and the runs’ mean context. Above the rule at 1×, speculation pays; a mark below ' +
        'the line lost the difference to its drafter.',
    });
    this.positions = new ChartPanel({
      title: 'Acceptance by draft position',
      testId: this.id('spec-position-chart'),
      fileStem: stem('acceptance-by-position'),
      wide: true,
      emptyText: 'No speculative runs in this result.',
      caption:
        'Share of the proposals at each draft position that the target accepted, one panel per run ' +
        '(position 1 is the first drafted token). A token is kept only if every earlier one was, so the ' +
        'bars fall with position; how fast they fall says how long a draft is worth making. Dashes: p^i, ' +
        'where the synthetic oracle of acceptance p should land.',
    });
    this.element = h('div', { className: 'spec-view', attrs: { hidden: true } }, [
      h('section', { className: 'card spec-summary', testId: this.id('spec-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        h('p', {
          className: 'lede',
          text: 'A drafter proposes K tokens; the target checks them all in one verify pass and keeps the longest agreeing prefix, plus one token of its own. It pays when verifying K + 1 tokens costs about one decode step, which the verify-K curve measures.',
        }),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [
        this.curve.element,
        this.roofline.element,
        this.speedup.element,
        this.positions.element,
      ]),
    ]);
  }

  /** Shows a result's speculative section, or hides the view when it has none. */
  show(result: BenchResult | null, heading = 'Speculative decoding'): void {
    const s = result?.speculative;
    this.element.hidden = !s;
    if (!result || !s) {
      for (const panel of [this.curve, this.roofline, this.speedup, this.positions]) panel.update(null);
      this.body.replaceChildren();
      return;
    }
    this.heading.textContent = heading;
    setChildren(this.body, [
      specTiles(s, this.id),
      kneeList(s, this.id('spec-knees')),
      mismatchNotice(s, this.id('spec-mismatch')),
      s.runs.length > 0
        ? specRunsTable(s.runs, this.id('spec-runs-table'))
        : h('p', { className: 'muted', text: 'No speculative runs: the verify-K curve alone was measured.' }),
      h('p', { className: 'spec-note', testId: this.id('spec-formula') }, [
        h('strong', { text: 'Predicted speed-up: ' }),
        s.formula,
      ]),
      h('p', { className: 'spec-note', testId: this.id('spec-clock') }, [
        h('strong', { text: 'Clock: ' }),
        s.clock,
      ]),
    ]);
    const run = {
      label: adapterLabel(result.env.adapter),
      points: [],
      peaks: result.peaks,
      verify: s.verifyCurve,
    };
    this.curve.update((width) => verifyCurveChart(s, width));
    this.roofline.update((width) => rooflineChart([run], { width, showKernels: false }));
    this.speedup.update((width) => speedupChart(s, width));
    this.positions.update((width) => acceptanceByPositionChart(s, width));
  }
}
