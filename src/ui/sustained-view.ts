/**
 * The sustained-load section of a result (result.sustained, from `--suite sustained`): the
 * throttling verdict, the windows' tok/s and the roofs as the Markdown report has them, and a chart
 * of both over time. Hidden when the result has none.
 */
import type { BenchResult } from '../results/schema.ts';
import {
  SUSTAINED_CAPTION,
  type SustainedSection,
  THROTTLE_DROP,
  throttlingVerdict,
  windowRows,
} from '../spec/workloads/sustained.ts';
import { ChartPanel } from './charts/panel.ts';
import { sustainedChart } from './charts/sustained.ts';
import { h, setChildren } from './dom.ts';
import { fixed, formatNumber, MISSING } from './format.ts';

function table(s: SustainedSection, testId: string): HTMLElement {
  const num = (text: string) => h('td', { className: 'num', text });
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': 'tok/s per window' } },
    [
      h('table', { className: 'data-table compact', testId }, [
        h('caption', { text: SUSTAINED_CAPTION }),
        h('thead', {}, [
          h(
            'tr',
            {},
            ['window start s', 'prefill tok/s', 'decode tok/s'].map((text) =>
              h('th', { className: 'num', text, attrs: { scope: 'col' } }),
            ),
          ),
        ]),
        h(
          'tbody',
          {},
          windowRows(s).map((v) =>
            h('tr', {}, [
              num(fixed(v.startS, 0)),
              num(v.prefill === undefined ? MISSING : formatNumber(v.prefill)),
              num(v.decode === undefined ? MISSING : formatNumber(v.decode)),
            ]),
          ),
        ),
      ]),
    ],
  );
}

export class SustainedView {
  readonly element: HTMLElement;
  private readonly body = h('div');
  private readonly heading = h('h2', { text: 'Sustained load' });
  private readonly chart: ChartPanel;

  constructor(options: { idPrefix: string; fileStem: () => string }) {
    const id = (name: string) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    this.chart = new ChartPanel({
      title: 'Sustained load: tok/s and roofs over time',
      testId: id('sustained-chart'),
      fileStem: () => `${options.fileStem()}-sustained`,
      wide: true,
      emptyText: 'No sustained-load windows in this result.',
      caption:
        'Each pass’s tok/s per window (its tokens over the wall time its passes took there), with the first ' +
        `minute’s median dashed and the ${THROTTLE_DROP * 100} % line under it; a red line marks where a drop ` +
        'began. Below, the FMA and copy roofs each time they were measured again: a device that throttles ' +
        'loses both.',
    });
    this.body.dataset.testid = id('sustained-summary-body');
    this.element = h('div', { className: 'serve-view', attrs: { hidden: true } }, [
      h('section', { className: 'card', testId: id('sustained-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [this.chart.element]),
    ]);
    this.tableId = id('sustained-table');
    this.verdictId = id('sustained-verdict');
  }

  private readonly tableId: string;
  private readonly verdictId: string;

  show(result: BenchResult | null, heading = 'Sustained load'): void {
    const s = result?.sustained;
    this.element.hidden = !s;
    this.heading.textContent = heading;
    if (!s) {
      this.chart.update(null);
      this.body.replaceChildren();
      return;
    }
    setChildren(this.body, [
      h('p', {
        className: 'lede',
        testId: this.verdictId,
        text: `Throttling: ${throttlingVerdict(s.throttling)}`,
      }),
      h('p', {
        className: 'muted small',
        text: `${fixed(s.durationS, 0)} s of a prefill of L = ${s.prefillTokens} and a decode at depth ${s.decodeDepth}, over and over; ${new Set(s.windows.map((w) => w.startS)).size} windows of ${fixed(s.windowS, 0)} s, the roofs measured ${s.roofs.length} times.`,
      }),
      // The chart shows every window; the numbers stay one click away, however long the run.
      h('details', {}, [h('summary', { text: 'tok/s of every window' }), table(s, this.tableId)]),
    ]);
    this.chart.update((width) => sustainedChart(s, width));
  }
}
