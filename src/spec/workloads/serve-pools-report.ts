import { escapeMarkdown, fixed, markdownDelimiter, markdownRow } from '../../markdown.ts';
import type { PoolSummary, ServeRun } from './serve-result.ts';

/**
 * An arm with pools: each pool's capacity (its pages, batch slots and step budget), its requests'
 * TTFT and queue, and how busy it was (steps with work, its budget used, KV peak and mean), so a
 * long pool that idles and a short pool that queues are told apart.
 */
export function poolTables(runs: readonly ServeRun[]): string[] {
  const pooled = runs.filter((r) => r.pools && r.pools.length > 0);
  if (pooled.length === 0) return [];
  return [
    `**Pools** (${POOLS_NOTE})`,
    '',
    markdownRow(['run', ...POOL_COLUMNS]),
    markdownDelimiter('lllrrrrrrr'),
    ...pooled.flatMap((r) =>
      (r.pools ?? []).map((p) =>
        markdownRow([r.label, ...poolCells(r, p)].map((c, k) => (k < 3 ? escapeMarkdown(c) : c))),
      ),
    ),
  ];
}

/** What the pools' table counts, in the report and on the page. */
export const POOLS_NOTE =
  'one engine: each pool its share of KV pages, batch slots and step tokens, its own queue; busy = steps with its work ÷ all steps; budget = its tokens per step ÷ its budget, mean over all steps';

/** The pools' table's columns after the arm's label. */
export const POOL_COLUMNS = [
  'route',
  'pool',
  'pages / slots / budget',
  'done',
  'TTFT p50 / p99 ms',
  'queue p50 / p99 ms',
  'busy',
  'budget',
  'KV peak / mean',
];

/** One pool's cells under POOL_COLUMNS. */
export function poolCells(r: ServeRun, p: PoolSummary): string[] {
  const pct = (x: number) => `${fixed(x * 100, 0)}%`;
  const ms = (x: number | undefined) => (x === undefined ? '–' : fixed(x, x < 100 ? 1 : 0));
  return [
    r.route ?? '',
    p.name,
    `${p.pages} / ${p.slots} / ${p.tokenBudget}`,
    `${p.summary.completed}${p.summary.failed > 0 ? ` (+${p.summary.failed} failed)` : ''}`,
    `${ms(p.summary.ttftMs?.p50)} / ${ms(p.summary.ttftMs?.p99)}`,
    `${ms(p.summary.queueMs?.p50)} / ${ms(p.summary.queueMs?.p99)}`,
    pct(p.busyStepShare),
    pct(p.budgetUse),
    `${pct(p.kvPeak)} / ${pct(p.kvMean)}`,
  ];
}
