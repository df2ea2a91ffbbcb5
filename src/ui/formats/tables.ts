import { captionedTable, type Header } from '../data-table.ts';
/**
 * The format sweep's two tables, with the Markdown report's columns and number formats
 * (src/results/formats-export.ts): the formats side by side, and each format's error against f32
 * on every slice, one row per format and slice. The error table is never folded into an average:
 * a format can be fine on short prompts and drift on long ones, and only the slices show it.
 */

import type { FormatSummary, Quality, TaskQuality } from '../../spec/workloads/formats.ts';
import {
  QUALITY_CAVEAT,
  QUALITY_DEFINITIONS,
  qualitySource,
  TASK_QUALITY_DEFINITIONS,
  taskTableTerms,
  taskVariant,
} from '../../spec/workloads/formats.ts';
import { h } from '../dom.ts';
import { fixed, formatMs, MISSING } from '../format.ts';

const MiB = 2 ** 20;

const num = (text: string, className = '') => h('td', { className: `num ${className}`.trim(), text });

const FORMAT_HEADERS: readonly Header[] = [
  {
    text: 'format',
    title: 'The format of the linear layers, the embedding table and the LM head (norms stay f32)',
  },
  {
    text: 'linear weights MiB',
    title: 'Bytes of the linear weights and LM head on the GPU: quants, scales and padding',
    numeric: true,
  },
  {
    text: 'bytes / decode token',
    title: 'Compulsory bytes of one decode step at the sweep’s depth (cost model, scales included)',
    numeric: true,
  },
  { text: 'TPOT ms', title: 'Median time per output token, wall clock', numeric: true },
  { text: 'tokens/s', title: '1000 ÷ TPOT', numeric: true },
  {
    text: 'TPOT ÷ f32',
    title: 'This format’s TPOT over f32’s in the same run; below 1 is faster',
    numeric: true,
  },
  {
    text: 'prefill ms',
    title: 'Median prefill time at the sweep’s prompt length, wall clock',
    numeric: true,
  },
  {
    text: 'prefill ÷ f32',
    title: 'This format’s prefill over f32’s in the same run; below 1 is faster',
    numeric: true,
  },
];

/** A ratio to f32, coloured as a gain or a loss (f32's own row stays plain). */
function ratioCell(ratio: number | null, isF32: boolean): HTMLElement {
  if (ratio === null) return num(MISSING);
  const kind = isF32 || Math.abs(ratio - 1) <= 0.02 ? '' : ratio < 1 ? 'faster' : 'slower';
  return num(`${fixed(ratio, 2)}×`, `ratio ${kind}`.trim());
}

export function formatsTable(rows: readonly FormatSummary[], testId: string): HTMLElement {
  return captionedTable(
    'Weight formats: the same model, one run; TPOT and prefill are wall-clock medians, bytes per token from the cost model.',
    FORMAT_HEADERS,
    rows.map((f) =>
      h('tr', {}, [
        h('th', { text: f.format, attrs: { scope: 'row' } }),
        num(fixed(f.linearBytes / MiB, 2)),
        num(`${fixed(f.decodeBytesPerToken / MiB, 2)} MiB`),
        num(formatMs(f.tpotMs)),
        num(fixed(f.tokensPerSec, 1)),
        ratioCell(f.tpotRatio, f.format === 'f32'),
        num(formatMs(f.prefillMs)),
        ratioCell(f.prefillRatio, f.format === 'f32'),
      ]),
    ),
    testId,
    'formats-table',
  );
}

const QUALITY_HEADERS: readonly Header[] = [
  { text: 'format', title: 'The quantized format, compared with f32 on the same inputs' },
  {
    text: 'slice',
    title:
      'Which inputs: short or long prompts, one token repeated, rare tokens, decode after a long context',
  },
  {
    text: 'prompts × steps',
    title: 'Prompts of the slice × next-token distributions compared per prompt',
    numeric: true,
  },
  { text: 'prompt tokens', title: 'Length of each prompt of the slice', numeric: true },
  { text: 'rel err', title: '‖logits − f32‖₂ ÷ ‖f32‖₂ over the slice', numeric: true },
  { text: 'top-1', title: 'Share of the distributions whose argmax is f32’s', numeric: true },
  { text: 'KL', title: 'Mean KL(f32 ‖ format) of the next-token distributions, nats', numeric: true },
  {
    text: 'diverges at',
    title: 'First generated token (0-based) where greedy output leaves f32’s; – if none',
    numeric: true,
  },
];

/** One row per format and slice; each format's first row opens a group. */
export function qualityTable(rows: readonly Quality[], testId: string): HTMLElement {
  return captionedTable(
    'Error against f32, by slice',
    QUALITY_HEADERS,
    rows.map((q, i) =>
      h('tr', { className: i > 0 && rows[i - 1].format !== q.format ? 'group-start' : undefined }, [
        h('th', { text: q.format, attrs: { scope: 'row' } }),
        h('td', { text: q.slice }),
        num(`${q.prompts} × ${q.steps}`),
        num(q.promptTokens.join(', ')),
        num(q.relErr.toExponential(2)),
        num(`${fixed(q.top1Agreement * 100, 1)}%`, q.top1Agreement < 1 ? 'quality-off' : ''),
        num(q.klDiv.toExponential(2)),
        num(
          q.divergenceStep === null ? MISSING : String(q.divergenceStep),
          q.divergenceStep === null ? '' : 'quality-off',
        ),
      ]),
    ),
    testId,
    'formats-table',
  );
}

/** What seeded weights can and cannot tell, said above the error table in the report's words. */
export function qualityCaveat(preset: string, testId: string): HTMLElement {
  return h('p', { className: 'quality-caveat', testId }, [
    h('strong', { text: `Error against f32 (${qualitySource(preset)}). ` }),
    QUALITY_CAVEAT,
  ]);
}

/** What each column of the error table means, said below it. */
export function qualityDefinitions(testId: string): HTMLElement {
  return h('p', { className: 'spec-note', testId, text: QUALITY_DEFINITIONS });
}

const TASK_HEADERS: readonly Header[] = [
  { text: 'slice', title: 'A slice of the held-out set, split off before training' },
  { text: 'format', title: 'The weight format, scored on the same cases as f32' },
  { text: 'metric', title: 'Exact match, valid JSON (its exact match in brackets) or next-token accuracy' },
  { text: 'cases', title: 'Cases scored (tokens for a text slice)', numeric: true },
  { text: 'score', title: 'Share right', numeric: true },
  { text: '95% interval', title: 'Wilson score interval of the share', numeric: true },
  { text: 'Δ f32', title: 'Score − f32’s, points; past −5 the slice is degraded', numeric: true },
  { text: 'verdict', title: 'degraded: more than 5 points below f32; acceptable otherwise' },
  { text: 'ppl', title: 'Perplexity of the next token (text slices)', numeric: true },
  {
    text: 'KLD mean',
    title: 'Mean KL(f32 ‖ format) over the positions the slice scores, nats',
    numeric: true,
  },
  { text: 'KLD 99%', title: '99th percentile of the per-position KL divergence, nats', numeric: true },
  { text: 'same top', title: 'Share of those positions whose argmax is f32’s', numeric: true },
];

const pct = (x: number) => `${fixed(x * 100, 1)}%`;

/**
 * A trained model's task quality: one row per slice and variant (weight format, or KV cache), each
 * slice's reference row first.
 */
export function taskQualityTable(rows: readonly TaskQuality[], testId: string): HTMLElement {
  const order = [...new Set(rows.map((r) => r.slice))];
  const sorted = [...rows].sort((a, b) => order.indexOf(a.slice) - order.indexOf(b.slice));
  const terms = taskTableTerms(rows);
  const headers = TASK_HEADERS.map((x) =>
    x.text === 'format'
      ? {
          ...x,
          text: terms.variant,
          title: `The ${terms.variant}, scored on the same cases as ${terms.reference}`,
        }
      : x.text === 'Δ f32'
        ? {
            ...x,
            text: terms.delta,
            title: `Score − ${terms.reference}’s, points; past −5 the slice is degraded`,
          }
        : x,
  );
  return captionedTable(
    `Task quality by slice, on the trained model’s held-out set (${terms.reference} is the reference)`,
    headers,
    sorted.map((q, i) =>
      h('tr', { className: i > 0 && sorted[i - 1].slice !== q.slice ? 'group-start' : undefined }, [
        h('th', { text: q.slice, attrs: { scope: 'row' } }),
        h('td', { text: taskVariant(q) }),
        h('td', { text: q.metric + (q.exactMatch !== undefined ? ` (exact ${pct(q.exactMatch)})` : '') }),
        num(String(q.cases)),
        num(pct(q.score)),
        num(`${pct(q.score95[0])}–${pct(q.score95[1])}`),
        num(q.deltaPoints === null ? MISSING : `${q.deltaPoints >= 0 ? '+' : ''}${fixed(q.deltaPoints, 1)}`),
        h('td', { text: q.verdict ?? MISSING, className: q.verdict === 'degraded' ? 'quality-off' : '' }),
        num(q.perplexity === undefined ? MISSING : fixed(q.perplexity, 2)),
        num(q.kld ? q.kld.mean.toExponential(2) : MISSING),
        num(q.kld ? q.kld.p99.toExponential(2) : MISSING),
        num(q.kld ? pct(q.kld.sameTop) : MISSING),
      ]),
    ),
    testId,
    'formats-table',
  );
}

/** What the task table's columns mean, said below it. */
export function taskQualityDefinitions(testId: string): HTMLElement {
  return h('p', { className: 'spec-note', testId, text: TASK_QUALITY_DEFINITIONS });
}
