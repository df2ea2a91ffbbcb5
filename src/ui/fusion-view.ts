/**
 * The fusion workload's section of a result (result.fusion, from the quick suite or `--suite
 * fusion`): the fused graph against the unfused one in the same run, one row per graph, with the
 * Markdown report's columns and number formats (src/results/fusion-export.ts), and a headline.
 * Hidden when the result has no fusion rows.
 */

import type { BenchResult } from '../results/schema.ts';
import type { FusionSummary } from '../spec/workloads/fusion.ts';
import { FUSION_CAPTION, fusionGraphLabel } from '../spec/workloads/fusion.ts';
import { h, setChildren } from './dom.ts';
import { fixed, formatMs, MISSING } from './format.ts';

const HEADERS: readonly { text: string; title: string; numeric?: boolean }[] = [
  {
    text: 'graph',
    title:
      'fused: RMSNorm, residual adds, SwiGLU, RoPE and the KV write inside the products; unfused: the reference',
  },
  {
    text: 'dispatches / layer, prefill',
    title:
      'Dispatches the engine recorded in one prefill, less the embedding, LM head, argmax and final norm, over the layers',
    numeric: true,
  },
  {
    text: 'dispatches / layer, decode',
    title: 'The same for one decode step',
    numeric: true,
  },
  {
    text: 'per pass (prefill, decode)',
    title: 'Every dispatch the engine recorded in one prefill and one decode step',
    numeric: true,
  },
  { text: 'prefill ms', title: 'TTFT p50 of the prefill point, wall clock', numeric: true },
  { text: 'TPOT ms', title: 'TPOT p50 of the decode point, wall clock', numeric: true },
  { text: 'prefill ÷ unfused', title: 'Over the unfused graph’s in the same run', numeric: true },
  {
    text: 'TPOT ÷ unfused',
    title: 'Over the unfused graph’s in the same run; below 1 is faster',
    numeric: true,
  },
];

const num = (text: string, className = '') => h('td', { className: `num ${className}`.trim(), text });

function perLayer(n: number): string {
  return Number.isInteger(n) ? String(n) : fixed(n, 2);
}

function ratioCell(ratio: number | null, base: boolean): HTMLElement {
  if (ratio === null) return num(MISSING);
  const kind = base || Math.abs(ratio - 1) <= 0.02 ? '' : ratio < 1 ? 'faster' : 'slower';
  return num(`${fixed(ratio, 2)}×`, `ratio ${kind}`.trim());
}

export function fusionTable(rows: readonly FusionSummary[], testId: string): HTMLElement {
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': FUSION_CAPTION } },
    [
      h('table', { className: 'data-table compact formats-table', testId }, [
        h('caption', { text: `${FUSION_CAPTION}.` }),
        h('thead', {}, [
          h(
            'tr',
            {},
            HEADERS.map((c) =>
              h('th', {
                className: c.numeric ? 'num' : undefined,
                text: c.text,
                attrs: { scope: 'col', title: c.title },
              }),
            ),
          ),
        ]),
        h(
          'tbody',
          {},
          rows.map((f) =>
            h('tr', {}, [
              h('th', { text: fusionGraphLabel(f), attrs: { scope: 'row' } }),
              num(perLayer(f.prefillPerLayer)),
              num(perLayer(f.decodePerLayer)),
              num(`${f.prefillDispatches}, ${f.decodeDispatches}`),
              num(`${formatMs(f.prefillMs)} (L=${f.prefillTokens})`),
              num(`${formatMs(f.tpotMs)} (depth ${f.decodeDepth})`),
              ratioCell(f.prefillRatio, f.graph === 'unfused'),
              ratioCell(f.tpotRatio, f.graph === 'unfused'),
            ]),
          ),
        ),
      ]),
    ],
  );
}

/** The fused graph against the unfused one, in one sentence; null without both rows. */
export function fusionHeadline(rows: readonly FusionSummary[]): string | null {
  const fused = rows.find((r) => r.graph === 'fused');
  const unfused = rows.find((r) => r.graph === 'unfused');
  if (!fused || !unfused || fused.tpotRatio === null) return null;
  return (
    `The fused graph runs ${perLayer(fused.decodePerLayer)} dispatches per layer in a decode step against ` +
    `${perLayer(unfused.decodePerLayer)} unfused, and takes ${fixed(fused.tpotRatio, 2)}× its time per token ` +
    `(${formatMs(fused.tpotMs)} against ${formatMs(unfused.tpotMs)} ms).`
  );
}

export class FusionView {
  readonly element: HTMLElement;
  private readonly body = h('div', { className: 'formats-body' });
  private readonly heading = h('h2', { text: 'Fused against unfused graph' });

  constructor(private readonly idPrefix = '') {
    this.element = h('div', { className: 'serve-view fusion-view', attrs: { hidden: true } }, [
      h('section', { className: 'card', testId: this.id('fusion-summary') }, [
        h('div', { className: 'card-head' }, [this.heading]),
        this.body,
      ]),
    ]);
  }

  private id(name: string): string {
    return this.idPrefix ? `${this.idPrefix}-${name}` : name;
  }

  show(result: BenchResult | null, heading = 'Fused against unfused graph'): void {
    const rows = result?.fusion ?? [];
    this.element.hidden = rows.length === 0;
    if (rows.length === 0) {
      this.body.replaceChildren();
      return;
    }
    this.heading.textContent = heading;
    const line = fusionHeadline(rows);
    setChildren(this.body, [
      line ? h('p', { className: 'lede', testId: this.id('fusion-headline'), text: line }) : null,
      fusionTable(rows, this.id('fusion-table')),
    ]);
  }
}
