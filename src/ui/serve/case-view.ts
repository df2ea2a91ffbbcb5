/**
 * The case study's section of a result (result.caseStudy, from `--suite case`): the diagnosis as the
 * seed walks it, computed from the incident's own figures, beside the charts that show each step
 * (the short requests' TTFT split into queue and prefill; KV pages and the batch over time, baseline
 * against incident), then every arm side by side and the bar chart of short TTFT p99 per arm.
 */
import type { BenchResult } from '../../results/schema.ts';
import {
  CASE_COLUMNS,
  caseArms,
  caseDiagnosis,
  caseFigures,
  caseRow,
} from '../../spec/workloads/serve-case-report.ts';
import type { ServeRun } from '../../spec/workloads/serve-result.ts';
import { caseTtftChart } from '../charts/case-ttft.ts';
import { ChartPanel } from '../charts/panel.ts';
import { kvBatchChart } from '../charts/serve-kv.ts';
import { ttftSplitChart } from '../charts/serve-ttft-split.ts';
import { h, setChildren } from '../dom.ts';
import { servePoolsTable } from './runs-table.ts';

/** The report's Markdown emphasis dropped: the page sets its own. */
const plain = (s: string) => s.replace(/\*\*/g, '');

function armsTable(arms: readonly ServeRun[], testId: string): HTMLElement {
  const p99 = (role: string) => {
    const r = arms.find((x) => x.caseRole === role);
    return r ? caseFigures(r).shortTtftP99 : null;
  };
  const [b, i] = [p99('baseline'), p99('incident')];
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': 'case study arms' } },
    [
      h('table', { className: 'data-table compact', testId }, [
        h('thead', {}, [
          h(
            'tr',
            {},
            CASE_COLUMNS.map((text, k) =>
              h('th', { className: k === 0 ? '' : 'num', text, attrs: { scope: 'col' } }),
            ),
          ),
        ]),
        h(
          'tbody',
          {},
          arms.map((r) =>
            h(
              'tr',
              {},
              caseRow(r, b, i).map((text, k) => h('td', { className: k === 0 ? '' : 'num', text })),
            ),
          ),
        ),
      ]),
    ],
  );
}

export class CaseView {
  readonly element: HTMLElement;
  private readonly body = h('div');
  private readonly id: (name: string) => string;
  private readonly verdict: ChartPanel;
  private readonly split: ChartPanel;
  private readonly kv: ChartPanel;
  private readonly pools: ChartPanel;

  constructor(options: { idPrefix: string; fileStem: () => string }) {
    this.id = (name: string) => (options.idPrefix ? `${options.idPrefix}-${name}` : name);
    const stem = (s: string) => () => `${options.fileStem()}-${s}`;
    this.verdict = new ChartPanel({
      title: 'Short requests’ TTFT p99, arm by arm',
      testId: this.id('case-ttft-chart'),
      fileStem: stem('case-ttft'),
      wide: true,
      emptyText: 'No case-study arms in this result.',
      caption:
        'The baseline dashed, 1.5 × it dotted (the combination’s target). Red: the incident; green: each remedy alone, then all four.',
    });
    this.split = new ChartPanel({
      title: 'Step 1: where the short requests’ TTFT goes',
      testId: this.id('case-split-chart'),
      fileStem: stem('case-split'),
      emptyText: 'No finished requests.',
      caption:
        'Mean queue (waiting for admission) and prefill (admission to the first token) per class, baseline against incident: the incident’s short requests wait, they do not compute longer.',
    });
    this.kv = new ChartPanel({
      title: 'Steps 2 and 3: concurrency and KV pages over time',
      testId: this.id('case-kv-chart'),
      fileStem: stem('case-kv'),
      wide: true,
      emptyText: 'No timeline.',
      caption:
        'KV pages in use against the pool, and the running batch against its slots with the queue beside it, baseline above incident.',
    });
    this.pools = new ChartPanel({
      title: 'Remedy 1: each pool’s KV pages over time',
      testId: this.id('case-pools-chart'),
      fileStem: stem('case-pools'),
      wide: true,
      emptyText: 'No arm with pools.',
      caption:
        'The routing arm: each pool’s pages in use under its own share (dotted), the whole pool dashed; the batch and queue below.',
    });
    this.body.dataset.testid = this.id('case-body');
    this.element = h('div', { className: 'serve-view', attrs: { hidden: true } }, [
      h('section', { className: 'card', testId: this.id('case-summary') }, [
        h('div', { className: 'card-head' }, [
          h('h2', { text: 'Case study: TTFT p99 after a long-prompt feature' }),
        ]),
        this.body,
      ]),
      h('div', { className: 'chart-grid' }, [
        this.split.element,
        this.kv.element,
        this.verdict.element,
        this.pools.element,
      ]),
    ]);
  }

  show(result: BenchResult | null): void {
    const runs = result?.caseStudy?.runs ?? [];
    const arms = caseArms(runs);
    const base = arms.find((r) => r.caseRole === 'baseline');
    const inc = arms.find((r) => r.caseRole === 'incident');
    this.element.hidden = !base || !inc;
    if (!base || !inc) {
      this.body.replaceChildren();
      for (const c of [this.verdict, this.split, this.kv, this.pools]) c.update(null);
      return;
    }
    const steps = caseDiagnosis(base, inc).map(plain);
    setChildren(this.body, [
      h('p', { className: 'lede', testId: this.id('case-symptom'), text: steps[0] }),
      h(
        'ol',
        { className: 'case-steps', testId: this.id('case-diagnosis') },
        steps.slice(1).map((s) => h('li', { text: s.replace(/^\d\.\s*/, '') })),
      ),
      armsTable(arms, this.id('case-table')),
      ...servePoolsTable(
        arms.filter((r) => r.caseRole === 'routing' || r.caseRole === 'all'),
        this.id('case-pools-table'),
      ),
    ]);
    const routed = arms.filter((r) => r.caseRole === 'routing');
    this.verdict.update((width) => caseTtftChart(arms, width));
    this.split.update((width) => ttftSplitChart([base, inc], width));
    this.kv.update((width) => kvBatchChart([base, inc], width));
    this.pools.update((width) => (routed.length > 0 ? kvBatchChart(routed, width) : null));
  }
}
