/**
 * The speculative runs as a table: one row per drafter and prompt class, with what it accepted,
 * what each half of a step cost, the TPOT against plain decode, the measured and predicted
 * speed-ups, and whether the output was identical to greedy decode. A synthetic drafter says so
 * in its row; an output that differs is shown loudly, with where it first differed.
 */
import type { SpecRun } from '../../spec/workloads/speculative-result.ts';
import { h } from '../dom.ts';
import { fixed, formatMs } from '../format.ts';

/** A speed-up this close to 1 is shown as a tie, not coloured: run-to-run noise is larger. */
const TIE_BAND = 0.05;

/** Headers, with what each column means (shown on hover). */
const HEADERS: readonly { text: string; title: string; numeric?: boolean }[] = [
  { text: 'drafter', title: 'The drafter as the run named it; a synthetic one is calibration, not a method' },
  {
    text: 'class',
    title: 'Prompt class: repetitive (code-like repeated patterns) or random (never repeats)',
  },
  { text: 'K', title: 'Draft length: tokens proposed per step (adaptive: at most K)', numeric: true },
  { text: 'accepted', title: 'Acceptance rate: accepted ÷ drafted tokens', numeric: true },
  {
    text: 'τ',
    title: 'Mean acceptance length: tokens emitted per verify step, 1 + accepted ÷ steps',
    numeric: true,
  },
  { text: 'draft ms', title: 'Mean time per step of the drafter’s proposal', numeric: true },
  { text: 'verify ms', title: 'Mean time per step of the verify pass', numeric: true },
  {
    text: 'TPOT ms',
    title: 'Time per output token with speculation: (last − first token) ÷ (tokens − 1)',
    numeric: true,
  },
  {
    text: 'baseline TPOT ms',
    title: 'Time per output token of plain greedy decode of the same prompts',
    numeric: true,
  },
  // A non-breaking hyphen: the header may wrap, but not inside the word.
  {
    text: 'speed\u2011up',
    title: 'Baseline TPOT ÷ TPOT, both from this run; above 1 is faster',
    numeric: true,
  },
  {
    text: 'predicted',
    title: 'The cost model’s speed-up from this run’s acceptance and draft time and the verify-K curve',
    numeric: true,
  },
  { text: 'identical', title: 'The output equals plain greedy decode of the same prompts, token for token' },
];

function speedupClass(x: number): string {
  if (Math.abs(x - 1) <= TIE_BAND) return 'num ratio';
  return x > 1 ? 'num ratio faster' : 'num ratio slower';
}

/** Where a run's output first left greedy decode's, in words (both counted from 0, as recorded). */
export function mismatchText(run: SpecRun): string {
  const m = run.firstMismatch;
  return m ? `prompt ${m.prompt}, token ${m.index} (from 0)` : 'position not recorded';
}

function drafterCell(run: SpecRun): HTMLElement {
  return h('th', { attrs: { scope: 'row' } }, [
    run.label,
    run.synthetic ? h('span', { className: 'spec-synthetic', text: 'synthetic — calibration only' }) : null,
  ]);
}

function row(run: SpecRun, i: number): HTMLElement {
  const num = (text: string, className = 'num') => h('td', { className, text });
  return h('tr', { className: run.identical ? undefined : 'spec-row-mismatch', testId: `spec-run-${i}` }, [
    drafterCell(run),
    h('td', { text: run.promptClass }),
    num(run.adaptiveK ? `≤ ${run.k}, adaptive` : String(run.k)),
    num(`${fixed(run.acceptanceRate * 100, 1)}%`),
    num(fixed(run.meanAcceptanceLength, 2)),
    num(formatMs(run.draftMs)),
    num(formatMs(run.verifyMs)),
    num(formatMs(run.tpotMs)),
    num(formatMs(run.baselineTpotMs)),
    num(`${fixed(run.speedup, 2)}×`, speedupClass(run.speedup)),
    num(`${fixed(run.predictedSpeedup, 2)}×`),
    run.identical === null
      ? h('td', { text: `n/a: sampled at T = ${run.temperature}` })
      : run.identical
        ? h('td', { className: 'spec-identical', text: 'yes' })
        : h('td', { className: 'spec-mismatch', text: `NO: ${mismatchText(run)}` }),
  ]);
}

export function specRunsTable(runs: readonly SpecRun[], testId: string): HTMLElement {
  const caption =
    'Speculative runs: one per drafter and prompt class, against plain greedy decode of the same prompts.';
  return h(
    'div',
    { className: 'table-scroll', attrs: { tabindex: 0, role: 'region', 'aria-label': caption } },
    [
      h('table', { className: 'data-table compact spec-table', testId }, [
        h('caption', { text: caption }),
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
        h('tbody', {}, runs.map(row)),
      ]),
    ],
  );
}
