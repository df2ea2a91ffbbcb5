/**
 * The KV matrix's section of a result (result.kv, from `--suite kv`): the cells as the Markdown
 * report has them (bytes per token calculated and allocated, what fits the pool, the times at the
 * longest depth), what each column means, the targets judged from the cells, the error by position
 * (folded: one row per cell and part), and three charts: memory against context, TPOT against
 * depth, error by position. Hidden when the result has none.
 */
import type { BenchResult } from '../results/schema.ts';
import {
  figureText,
  groupingName,
  KV_DEFINITIONS,
  kvCellRows,
  kvTargets,
  longestDepth,
  top1Text,
  windowText,
} from '../spec/workloads/kv-report.ts';
import type { KvSection } from '../spec/workloads/kv-result.ts';
import { kvErrorChart, kvMemoryChart, kvTpotChart } from './charts/kv.ts';
import { ChartPanel } from './charts/panel.ts';
import { taskQualityChart } from './charts/task-quality.ts';
import { captionedTable, type Header } from './data-table.ts';
import { h, setChildren } from './dom.ts';
import { fixed, formatMs, MISSING } from './format.ts';
import { taskQualityDefinitions, taskQualityTable } from './formats/tables.ts';

const num = (text: string) => h('td', { className: 'num', text });
const opt = (v: number | null) => (v === null ? MISSING : formatMs(v));

function cellsTable(s: KvSection, testId: string): HTMLElement {
  const depth = longestDepth(s);
  const at = depth === null ? '' : ` @ ${depth}`;
  const headers: Header[] = [
    { text: 'KV heads', title: 'KV heads of the variant: MHA (one per query head), GQA (groups), MQA (one)' },
    { text: 'KV type', title: 'How the cache stores K and V' },
    { text: 'window', title: 'The sliding window, tokens; none: full attention' },
    {
      text: 'bytes/token calc',
      title: 'KV bytes per token, calculated: all layers, K and V, scales',
      numeric: true,
    },
    {
      text: 'allocated',
      title: 'KV bytes per token as the allocator holds them after a real run',
      numeric: true,
    },
    {
      text: '× f32',
      title: 'Allocated bytes against the f32 cell of the same KV heads and window',
      numeric: true,
    },
    {
      text: 'max context',
      title: 'The longest sequence the fixed pool holds (real allocation)',
      numeric: true,
    },
    {
      text: 'max sequences',
      title: 'Sequences of the stated length the fixed pool admits at once',
      numeric: true,
    },
    { text: 'prefill ms', title: `One prefill of L = ${s.prefillTokens}, wall clock`, numeric: true },
    {
      text: `decode attention ms${at}`,
      title: `The attention kernels of one decode step, ${s.clocks.decodeAttentionMs === 'gpu' ? 'GPU timestamps' : 'wall clock'}`,
      numeric: true,
    },
    { text: `TPOT ms${at}`, title: 'Time per output token, wall clock', numeric: true },
  ];
  const rows = kvCellRows(s).map((r) =>
    h('tr', {}, [
      h('th', {
        text: `${r.cell.kvHeads} (${groupingName(r.cell.kvHeads, s.heads)})`,
        attrs: { scope: 'row' },
      }),
      h('td', { text: r.cell.kvDtype }),
      h('td', { text: windowText(r.cell.window) }),
      num(fixed(r.cell.bytesPerToken, 0)),
      num(fixed(r.cell.allocatedBytesPerToken, 0)),
      num(r.ratioToF32 === null ? MISSING : `${fixed(r.ratioToF32, 3)}×`),
      num(String(r.cell.maxContext)),
      num(`${r.cell.maxSequences} × ${r.cell.sequenceTokens}`),
      num(formatMs(r.cell.prefillMs)),
      num(opt(r.decodeAttentionMs)),
      num(opt(r.tpotMs)),
    ]),
  );
  return captionedTable('Each cell: memory, what fits the pool, speed', headers, rows, testId);
}

function errorTable(s: KvSection, testId: string): HTMLElement {
  const headers: Header[] = [
    { text: 'KV heads', title: 'KV heads of the variant' },
    { text: 'KV type', title: 'How the cache stores K and V' },
    { text: 'window', title: 'The sliding window, tokens; none: full attention' },
    { text: 'part', title: 'The fifth of the long context: first, middle or last' },
    { text: 'rel err', title: 'Normwise relative error of the logits against the reference', numeric: true },
    { text: 'top-1', title: 'Positions whose top token is the reference’s', numeric: true },
    {
      text: 'first divergence',
      title: 'The first position in the part where the greedy token differs from the reference’s',
      numeric: true,
    },
  ];
  const rows = s.cells.flatMap((c) =>
    c.error.map((e) =>
      h('tr', {}, [
        h('th', { text: String(c.kvHeads), attrs: { scope: 'row' } }),
        h('td', { text: c.kvDtype }),
        h('td', { text: windowText(c.window) }),
        h('td', { text: e.bucket }),
        num(e.relErr.toExponential(2)),
        num(top1Text(e.top1)),
        num(e.firstDivergence === null ? 'none' : String(e.firstDivergence)),
      ]),
    ),
  );
  return captionedTable(
    `Error by position against f32 KV without a window (same KV heads), over ${s.errorContext} tokens`,
    headers,
    rows,
    testId,
  );
}

function targetsTable(s: KvSection, testId: string): HTMLElement {
  const headers: Header[] = [
    { text: 'target', title: 'What is judged' },
    { text: 'met', title: 'yes, no, or not judged when the cells it needs are missing' },
    { text: 'goal', title: 'The issue’s bound' },
    { text: 'reached', title: 'The worst figure over the cells it applies to, and which' },
  ];
  const rows = kvTargets(s).map((t) =>
    h('tr', {}, [
      h('th', { text: t.name, attrs: { scope: 'row' } }),
      h('td', {}, [
        h('span', {
          className: t.met === null ? 'tag' : t.met ? 'tag tag-ok' : 'tag tag-warn',
          text: t.met === null ? 'not judged' : t.met ? 'yes' : 'no',
        }),
      ]),
      h('td', { text: t.goal }),
      h('td', { text: t.met === null ? t.note : `${figureText(t)} (${t.note})` }),
    ]),
  );
  return captionedTable('Targets, judged from the cells', headers, rows, testId);
}

export class KvView {
  readonly element: HTMLElement;
  private readonly heading = h('h2', { text: 'KV cache' });
  private readonly body = h('div');
  private readonly charts: { memory: ChartPanel; tpot: ChartPanel; error: ChartPanel; tasks: ChartPanel };
  private readonly id: (name: string) => string;

  constructor(options: { idPrefix: string; fileStem: () => string }) {
    this.id = (name) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    const panel = (name: string, title: string, caption: string, emptyText: string) =>
      new ChartPanel({
        title,
        testId: this.id(`kv-${name}-chart`),
        fileStem: () => `${options.fileStem()}-kv-${name}`,
        wide: true,
        emptyText,
        caption,
      });
    const legend =
      'One panel per KV head count, one line per cell: coloured by KV type, dashed where the cell has a sliding window.';
    this.charts = {
      memory: panel(
        'memory',
        'KV memory one sequence holds against its context',
        `${legend} The pages one sequence holds at each depth, times a page’s bytes as the allocator holds them: full attention climbs with the context; a window’s line goes flat once it is past W, its older pages back in the pool.`,
        'No pages counted in this result.',
      ),
      tpot: panel(
        'tpot',
        'TPOT against depth',
        `${legend} Time per output token at each context depth, wall clock (what a user waits for per token).`,
        'No TPOT in this result.',
      ),
      error: panel(
        'error',
        'Error by position',
        `${legend} The logits’ relative error against f32 KV without a window (same KV heads), over the first, middle and last fifth of one long context, log scale; a part with no error at all has no point. A type whose error grows toward the last part loses precision at the tail of long texts.`,
        'No error measured in this result.',
      ),
      tasks: panel(
        'tasks',
        'Task quality by slice and KV cache',
        'A trained model’s held-out slices, one mark per KV type and window at its score with its 95% interval: a window shorter than a recall distance can lose the passkey; a KV type whose interval leaves the reference’s changed what the model can do (the KL divergence in the table shows changes too small to move a score).',
        'No task quality in this result (a trained model has it).',
      ),
    };
    this.element = h('div', { className: 'serve-view', attrs: { hidden: true } }, [
      h('section', { className: 'card', testId: this.id('kv-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [
        this.charts.memory.element,
        this.charts.tpot.element,
        this.charts.error.element,
        this.charts.tasks.element,
      ]),
    ]);
  }

  show(result: BenchResult | null, heading = 'KV cache: shared heads, KV types, sliding window'): void {
    const s = result?.kv;
    this.element.hidden = !s;
    this.heading.textContent = heading;
    if (!s) {
      for (const c of Object.values(this.charts)) c.update(null);
      this.body.replaceChildren();
      return;
    }
    const measured = s.cells.some((c) => c.error.length > 0);
    const tasks = s.taskQuality ?? [];
    setChildren(this.body, [
      h('p', {
        className: 'muted small',
        testId: this.id('kv-shape'),
        text: `${s.cells.length} cells of ${s.model}: ${s.heads} heads of ${s.headDim}, ${s.layers} layers, pages of ${s.pageSize} tokens, maxSeqLen ${s.maxSeqLen}; fixed pool ${fixed(s.poolBytes / 2 ** 20, 1)} MiB; prefill L = ${s.prefillTokens}.`,
      }),
      cellsTable(s, this.id('kv-cells-table')),
      h('p', { className: 'muted small', testId: this.id('kv-definitions'), text: KV_DEFINITIONS }),
      targetsTable(s, this.id('kv-targets-table')),
      // Every cell × part is a long table; the chart shows it at a glance, the numbers one click away.
      measured
        ? h('details', {}, [
            h('summary', {
              text: `Error by position: ${s.cells.reduce((n, c) => n + c.error.length, 0)} rows, each cell and part of the context`,
            }),
            errorTable(s, this.id('kv-error-table')),
          ])
        : h('p', { className: 'muted', text: 'No error by position was measured in this run.' }),
      ...(tasks.length > 0
        ? [
            taskQualityTable(tasks, this.id('kv-task-table')),
            taskQualityDefinitions(this.id('kv-task-definitions')),
          ]
        : []),
    ]);
    this.charts.memory.update((width) => kvMemoryChart(s, width));
    this.charts.tpot.update((width) => kvTpotChart(s, width));
    this.charts.error.update(measured ? (width) => kvErrorChart(s, width) : null);
    this.charts.tasks.update(tasks.length > 0 ? (width) => taskQualityChart(tasks, width) : null);
  }
}
