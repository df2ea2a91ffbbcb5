/**
 * The format sweep's section of a result (result.formats and result.quality, from `--suite
 * formats`): a headline, the formats side by side, the format comparison chart (TPOT against bytes
 * per decode token, with f32's bandwidth line and the copy roof), and each format's error against
 * f32 by slice, with what seeded weights can tell said above it and what each column means below.
 * The run view shows one for the run on screen; the compare view one per compared file that has it.
 */
import type { BenchResult } from '../../results/schema.ts';
import type { FormatSummary } from '../../spec/workloads/formats.ts';
import { formatComparisonChart } from '../charts/formats.ts';
import { ChartPanel } from '../charts/panel.ts';
import { taskQualityChart } from '../charts/task-quality.ts';
import { h, setChildren } from '../dom.ts';
import { fixed, formatNumber } from '../format.ts';
import {
  formatsTable,
  qualityCaveat,
  qualityDefinitions,
  qualityTable,
  taskQualityDefinitions,
  taskQualityTable,
} from './tables.ts';

export interface FormatsViewOptions {
  /** Prefix of the test ids; the run view's are plain (`formats-chart`). */
  idPrefix: string;
  fileStem: () => string;
}

/** The narrowest format against f32, in one sentence; null without both. */
function headline(rows: readonly FormatSummary[]): string | null {
  const f32 = rows.find((r) => r.format === 'f32');
  const narrowest = rows.filter((r) => r.format !== 'f32').at(-1);
  if (!f32 || !narrowest || f32.decodeBytesPerToken <= 0 || narrowest.tpotRatio === null) return null;
  return (
    `${narrowest.format} reads ${fixed(narrowest.decodeBytesPerToken / f32.decodeBytesPerToken, 2)}× the bytes of f32 ` +
    `per decode token and takes ${fixed(narrowest.tpotRatio, 2)}× its time per token ` +
    `(${formatNumber(narrowest.tokensPerSec)} against ${formatNumber(f32.tokensPerSec)} tokens/s).`
  );
}

export class FormatsView {
  readonly element: HTMLElement;
  private readonly heading = h('h2', { text: 'Weight formats' });
  private readonly body = h('div', { className: 'formats-body' });
  private readonly chart: ChartPanel;
  private readonly taskChart: ChartPanel;
  private readonly id: (name: string) => string;

  constructor(options: FormatsViewOptions) {
    this.id = (name) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    this.chart = new ChartPanel({
      title: 'Format comparison: time per token against bytes per token',
      testId: this.id('formats-chart'),
      fileStem: () => `${options.fileStem()}-formats`,
      wide: true,
      emptyText: 'No format with a decode point in this result.',
      caption:
        'Each mark is one weight format’s decode step at the sweep’s depth: the bytes it must read (cost ' +
        'model: quants, scales, KV cache and activations) against its median time per output token, wall ' +
        'clock. The dashed line is time ∝ bytes at the bandwidth f32 achieved: a format on it saved exactly ' +
        'its share of bytes. The solid line is the copy roof, bytes ÷ the copy bandwidth measured in this ' +
        'run, the fastest those bytes can be read. A format above the dashed line lost part of its saving ' +
        'to what does not shrink with the weights: kernel launches, the submit, dequantization.',
    });
    this.taskChart = new ChartPanel({
      title: 'Task quality by slice',
      testId: this.id('task-quality-chart'),
      fileStem: () => `${options.fileStem()}-task-quality`,
      wide: true,
      emptyText: 'No task quality in this result (a trained model’s formats suite measures it).',
      caption:
        'Each row is one held-out slice of the trained model; each mark one weight format’s score on it ' +
        '(exact match, JSON validity or next-token accuracy), with its 95% Wilson interval as a bar. A ' +
        'format whose bar overlaps f32’s has not been shown to differ from it, whatever its point ' +
        'estimate; the seed’s rule marks a slice “degraded” past −5 points on the estimate alone.',
    });
    this.element = h('div', { className: 'serve-view formats-view', attrs: { hidden: true } }, [
      h('section', { className: 'card', testId: this.id('formats-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [this.chart.element, this.taskChart.element]),
    ]);
  }

  show(result: BenchResult | null, heading = 'Weight formats'): void {
    const rows = result?.formats ?? [];
    const quality = result?.quality ?? [];
    const tasks = result?.taskQuality ?? [];
    this.element.hidden = rows.length === 0 && quality.length === 0 && tasks.length === 0;
    if (!result || this.element.hidden) {
      this.chart.update(null);
      this.taskChart.update(null);
      this.body.replaceChildren();
      return;
    }
    this.heading.textContent = heading;
    const line = headline(rows);
    setChildren(this.body, [
      line ? h('p', { className: 'lede', testId: this.id('formats-headline'), text: line }) : null,
      rows.length > 0 ? formatsTable(rows, this.id('formats-table')) : null,
      ...(tasks.length > 0
        ? [
            taskQualityTable(tasks, this.id('task-quality-table')),
            taskQualityDefinitions(this.id('task-quality-definitions')),
          ]
        : quality.length > 0
          ? [
              qualityCaveat(result.model.preset, this.id('quality-caveat')),
              qualityTable(quality, this.id('quality-table')),
              qualityDefinitions(this.id('quality-definitions')),
            ]
          : [h('p', { className: 'muted', text: 'No error against f32 was measured in this run.' })]),
    ]);
    const copy = result.peaks.copyGBps;
    this.chart.update(rows.length > 0 ? (width) => formatComparisonChart(rows, copy, width) : null);
    this.taskChart.element.hidden = tasks.length === 0;
    this.taskChart.update(tasks.length > 0 ? (width) => taskQualityChart(tasks, width) : null);
  }
}
