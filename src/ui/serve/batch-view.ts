/**
 * The B-scaling section of a result (result.batchScaling, from `--suite batch`): one decode step of
 * B sequences for each B, its time against the roofline bound, as a table (the Markdown report's)
 * and as a chart of step time and tokens/s against B.
 */
import type { BenchResult } from '../../results/schema.ts';
import type { BatchScalingPoint } from '../../spec/workloads/decode.ts';
import { batchScalingChart } from '../charts/batch-scaling.ts';
import { ChartPanel } from '../charts/panel.ts';
import { h, setChildren } from '../dom.ts';
import { fixed, formatNumber } from '../format.ts';

export interface BatchViewOptions {
  /** Prefix of the test ids; the run view's are plain (`batch-scaling-chart`). */
  idPrefix: string;
  fileStem: () => string;
}

const HEADERS = [
  { text: 'B', title: 'Sequences decoded together in one step' },
  { text: 'step ms', title: 'Median decode step, on the point’s placing clock' },
  { text: 'tokens/s', title: 'B × 1000 ÷ step ms' },
  { text: 'bound ms', title: 'max(FLOPs ÷ FMA peak, bytes ÷ copy bandwidth) + the measured submit overhead' },
  { text: 'step ÷ bound', title: 'How far the step is from what the roofs allow; 1 is at the bound' },
] as const;

function table(points: readonly BatchScalingPoint[], testId: string): HTMLElement {
  const caption = 'One decode step of B sequences against its roofline bound.';
  const num = (text: string) => h('td', { className: 'num', text });
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': caption } },
    [
      h('table', { className: 'data-table compact', testId }, [
        h('caption', { text: caption }),
        h('thead', {}, [
          h(
            'tr',
            {},
            HEADERS.map((c) =>
              h('th', { className: 'num', text: c.text, attrs: { scope: 'col', title: c.title } }),
            ),
          ),
        ]),
        h(
          'tbody',
          {},
          points.map((p) =>
            h('tr', {}, [
              num(String(p.batch)),
              num(fixed(p.stepMs, 2)),
              num(formatNumber(p.tokensPerSec)),
              num(fixed(p.boundMs, 2)),
              num(`${fixed(p.ratio, 2)}×`),
            ]),
          ),
        ),
      ]),
    ],
  );
}

export class BatchScalingView {
  readonly element: HTMLElement;
  private readonly heading = h('h2', { text: 'B-scaling' });
  private readonly body = h('div');
  private readonly chart: ChartPanel;
  private readonly id: (name: string) => string;

  constructor(options: BatchViewOptions) {
    this.id = (name) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    this.chart = new ChartPanel({
      title: 'B-scaling: decode step against batch size',
      testId: this.id('batch-scaling-chart'),
      fileStem: () => `${options.fileStem()}-batch-scaling`,
      wide: true,
      emptyText: 'No B-scaling points in this result.',
      caption:
        'Above, one decode step’s time for B sequences (B on a log axis) beside its roofline bound, the ' +
        'larger of FLOPs ÷ FMA peak and bytes ÷ copy bandwidth plus the submit, from this run’s roofs; ' +
        'below, the tokens/s that gives. While decode is bandwidth-bound the weights are read once per ' +
        'step for every B, so the step barely grows and tokens/s climbs with B: that is what batching ' +
        'buys. Where the step starts to climb, compute or the kernels took over.',
    });
    this.element = h('div', { className: 'serve-view', attrs: { hidden: true } }, [
      h('section', { className: 'card', testId: this.id('batch-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [this.chart.element]),
    ]);
  }

  show(result: BenchResult | null, heading = 'B-scaling'): void {
    const points = result?.batchScaling ?? [];
    this.element.hidden = points.length === 0;
    if (points.length === 0) {
      this.chart.update(null);
      this.body.replaceChildren();
      return;
    }
    this.heading.textContent = heading;
    const first = points[0];
    const last = points[points.length - 1];
    const gain = first.tokensPerSec > 0 ? last.tokensPerSec / first.tokensPerSec : 0;
    setChildren(this.body, [
      h('p', {
        className: 'lede',
        testId: this.id('batch-headline'),
        text: `B = ${last.batch} decodes ${fixed(gain, 1)}× the tokens/s of B = ${first.batch} (${formatNumber(last.tokensPerSec)} against ${formatNumber(first.tokensPerSec)}), its step ${fixed(last.stepMs / first.stepMs, 2)}× as long.`,
      }),
      table(points, this.id('batch-table')),
    ]);
    this.chart.update((width) => batchScalingChart(points, width));
  }
}
