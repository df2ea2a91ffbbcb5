/**
 * The run's model on its held-out set (result.tasks: the quick suite on a trained preset, so the
 * page's first run): what the model gets right by slice, each score with its 95% interval and the
 * sample it stands on, as a table and a chart. The formats and kv suites' views show the same scores
 * against f32, variant by variant. Hidden when the result has none.
 */
import type { BenchResult } from '../results/schema.ts';
import type { TaskQuality } from '../spec/workloads/formats.ts';
import { TASK_SCORES_DEFINITIONS, taskScoreCells } from '../spec/workloads/tasks.ts';
import { ChartPanel } from './charts/panel.ts';
import { taskQualityChart } from './charts/task-quality.ts';
import { captionedTable } from './data-table.ts';
import { h, setChildren } from './dom.ts';

const HEADERS = [
  { text: 'slice', title: 'A slice of the held-out set, split off before training' },
  { text: 'metric', title: 'Exact match, valid JSON (its exact match in brackets) or next-token accuracy' },
  { text: 'cases', title: 'Cases scored (tokens for a text slice): the sample', numeric: true },
  { text: 'score', title: 'Share right', numeric: true },
  { text: '95% interval', title: 'Wilson score interval of the share', numeric: true },
  { text: 'ppl', title: 'Perplexity of the next token (text slices)', numeric: true },
];

function scoresTable(rows: readonly TaskQuality[], testId: string): HTMLElement {
  const format = rows[0]?.format ?? 'f32';
  return captionedTable(
    `What the model gets right: its ${format} weights on each slice of its held-out set (a sample; cases says how big)`,
    HEADERS,
    rows.map((q) => {
      const [slice, metric, ...numbers] = taskScoreCells(q);
      return h('tr', {}, [
        h('th', { text: slice, attrs: { scope: 'row' } }),
        h('td', { text: metric }),
        ...numbers.map((text) => h('td', { className: 'num', text })),
      ]);
    }),
    testId,
    'formats-table',
  );
}

export class TasksView {
  readonly element: HTMLElement;
  private readonly body = h('div', { className: 'formats-body' });
  private readonly heading = h('h2', { text: 'Task quality' });
  private readonly chart: ChartPanel;
  private readonly id: (name: string) => string;

  constructor(options: { idPrefix: string; fileStem: () => string }) {
    this.id = (name) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    this.chart = new ChartPanel({
      title: 'What the model gets right, by slice',
      testId: this.id('tasks-chart'),
      fileStem: () => `${options.fileStem()}-tasks`,
      wide: true,
      emptyText: 'No task scores in this result (the quick suite measures them on a trained model).',
      caption:
        'Each row is one held-out slice of the trained model; the mark is its score (exact match, JSON ' +
        'validity or next-token accuracy) and the bar its 95% Wilson interval, which is wide where the ' +
        'sample is small. The formats suite (--suite formats) scores every weight format on the same cases.',
    });
    this.element = h('div', { className: 'serve-view formats-view', attrs: { hidden: true } }, [
      h('section', { className: 'card', testId: this.id('tasks-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [this.chart.element]),
    ]);
  }

  show(result: BenchResult | null, heading = 'Task quality'): void {
    const rows = result?.tasks ?? [];
    this.heading.textContent = heading;
    this.element.hidden = rows.length === 0;
    if (rows.length === 0) {
      this.chart.update(null);
      this.body.replaceChildren();
      return;
    }
    const right = rows.filter((r) => r.kind !== 'text');
    const cases = right.reduce((n, r) => n + r.cases, 0);
    setChildren(this.body, [
      h('p', {
        className: 'lede',
        testId: this.id('tasks-headline'),
        text: `${right.length} task slices (${cases} cases in all) and ${rows.length - right.length} text slices, scored on the run’s own model. A sample: the formats suite scores more, every format against f32.`,
      }),
      scoresTable(rows, this.id('tasks-table')),
      h('p', { className: 'spec-note', testId: this.id('tasks-definitions'), text: TASK_SCORES_DEFINITIONS }),
    ]);
    this.chart.update((width) => taskQualityChart(rows, width));
  }
}
