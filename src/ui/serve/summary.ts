/**
 * What a reader of a load test looks at first: continuous against static batching (output tokens/s
 * and short requests' p95 TTFT), the prefix cache's saving where both of its arms ran, goodput under
 * the SLOs, the highest swept rate meeting them, and whether every request's tokens equalled the
 * same request run alone; then the A/B deltas, goodput and slowdown in words (the Markdown report's
 * lines), and a loud notice of any request whose tokens differed.
 */
import { abDeltas, shortP95Ttft } from '../../spec/workloads/serve-report.ts';
import type { ServeResult, ServeRun } from '../../spec/workloads/serve-result.ts';
import { type Child, h } from '../dom.ts';
import { fixed } from '../format.ts';

function tile(testId: string, value: string, label: string, warn = false): HTMLElement {
  return h('div', { className: `stat-tile${warn ? ' warn' : ''}`, testId }, [
    h('span', { className: 'stat-tile-value', text: value }),
    h('span', { className: 'stat-tile-label', text: label }),
  ]);
}

/** A latency in ms as the tables print it: one decimal under 100 ms. */
export function msText(x: number | null | undefined): string {
  return x === null || x === undefined ? '–' : fixed(x, x < 100 ? 1 : 0);
}

/** The SLOs of a run in words. */
function sloText(slo: ServeRun['slo']): string {
  const parts = [
    slo.ttftMs !== undefined ? `TTFT ≤ ${slo.ttftMs} ms` : null,
    slo.tpotMs !== undefined ? `TPOT ≤ ${slo.tpotMs} ms` : null,
    slo.e2elMs !== undefined ? `E2E ≤ ${slo.e2elMs} ms` : null,
  ].filter((p) => p !== null);
  return parts.length > 0 ? parts.join(', ') : 'none given (goodput = request throughput)';
}

/** The continuous and static A/B arms of one prefix-cache setting (off first), if both ran. */
function abPair(runs: readonly ServeRun[]): { continuous: ServeRun; static: ServeRun } | null {
  const ab = runs.filter((r) => r.experiment === 'ab');
  for (const cache of [false, true]) {
    const c = ab.find((r) => r.batching === 'continuous' && r.prefixCache === cache);
    const s = ab.find((r) => r.batching === 'static' && r.prefixCache === cache);
    if (c && s) return { continuous: c, static: s };
  }
  return null;
}

/** The prefix cache's arms of one batching (continuous first), if both ran. */
function cachePair(runs: readonly ServeRun[]): { on: ServeRun; off: ServeRun } | null {
  const ab = runs.filter((r) => r.experiment === 'ab');
  for (const batching of ['continuous', 'static'] as const) {
    const on = ab.find((r) => r.batching === batching && r.prefixCache);
    const off = ab.find((r) => r.batching === batching && !r.prefixCache);
    if (on && off) return { on, off };
  }
  return null;
}

/** Whether a run's outputs all equalled the solo runs' (null: not checked). */
export function identicalOk(r: ServeRun): boolean | null {
  return r.identical ? r.identical.mismatches === 0 && r.replayMismatches === 0 : null;
}

/** The headline tiles; `id` gives each tile's test id (`serve-tile-throughput`, …) as the view prefixes them. */
export function serveTiles(s: ServeResult, id: (name: string) => string): HTMLElement {
  const tiles: HTMLElement[] = [];
  const pair = abPair(s.runs);
  if (pair) {
    const c = pair.continuous.summary.outputTokensPerSec;
    const st = pair.static.summary.outputTokensPerSec;
    const ratio = st > 0 ? c / st : 0;
    tiles.push(
      tile(
        id('serve-tile-throughput'),
        `${fixed(ratio, 2)}×`,
        `output tokens/s, continuous ÷ static batching (${fixed(c, 1)} against ${fixed(st, 1)})`,
        ratio < 1,
      ),
    );
    const cs = shortP95Ttft(pair.continuous);
    const ss = shortP95Ttft(pair.static);
    if (cs !== null || ss !== null) {
      tiles.push(
        tile(
          id('serve-tile-short-ttft'),
          `${msText(cs)} / ${msText(ss)} ms`,
          'short requests’ p95 TTFT: continuous / static',
        ),
      );
    }
  }
  const cache = cachePair(s.runs);
  if (cache) {
    const off = cache.off.summary.prefillTokensComputed;
    const drop = off > 0 ? 1 - cache.on.summary.prefillTokensComputed / off : 0;
    const ttft = (r: ServeRun) => msText(r.summary.ttftMs?.mean);
    tiles.push(
      tile(
        id('serve-tile-prefix'),
        `${drop > 0 ? '−' : '+'}${fixed(Math.abs(drop) * 100, 1)}%`,
        `prefill tokens computed with the prefix cache on (${cache.on.batching}; ${fixed(cache.on.summary.prefixHitRate * 100, 1)}% of prompt tokens hit); mean TTFT ${ttft(cache.on)} against ${ttft(cache.off)} ms`,
        drop <= 0,
      ),
    );
  }
  const main = pair?.continuous ?? s.runs.find((r) => r.experiment === 'ab') ?? null;
  if (main) {
    const g = main.summary;
    const share = g.requestsPerSec > 0 ? g.goodputRps / g.requestsPerSec : 0;
    tiles.push(
      tile(
        id('serve-tile-goodput'),
        `${fixed(g.goodputRps, 2)} req/s`,
        `goodput, ${main.label}: ${fixed(share * 100, 0)}% of ${fixed(g.requestsPerSec, 2)} finished req/s within the SLOs`,
        share < (s.sweep?.attainment ?? 0.9),
      ),
    );
  }
  if (s.sweep) {
    const best = s.sweep.maxRateMeetingSlo;
    tiles.push(
      tile(
        id('serve-tile-max-rate'),
        best === null ? 'none' : `${fixed(best, 2)} req/s`,
        `highest swept rate at which ≥ ${fixed(s.sweep.attainment * 100, 0)}% of requests met every SLO`,
        best === null,
      ),
    );
  }
  const checked = s.runs.filter((r) => r.identical);
  if (checked.length > 0) {
    const total = checked.reduce((n, r) => n + (r.identical?.checked ?? 0), 0);
    const bad = checked.reduce((n, r) => n + (r.identical?.mismatches ?? 0), 0);
    const replayed = checked.reduce((n, r) => n + r.replayMismatches, 0);
    tiles.push(
      tile(
        id('serve-tile-identical'),
        `${total - bad} / ${total}`,
        `finished requests whose tokens equal the request run alone${replayed > 0 ? `; ${replayed} replayed rows differ` : ''}`,
        bad > 0 || replayed > 0,
      ),
    );
  }
  return h('div', { className: 'stat-tiles' }, tiles);
}

/** The Markdown report's A/B lines (continuous against static; prefix cache on against off), as a list. */
export function abList(s: ServeResult, testId: string): Child {
  const lines = abDeltas(s.runs).map((l) => l.replace(/^- /, ''));
  if (lines.length === 0) return null;
  return h(
    'ul',
    { className: 'serve-lines', testId },
    lines.map((text) => h('li', { text })),
  );
}

/** Goodput of every arm under the SLOs they ran with. */
export function goodputLine(s: ServeResult, testId: string): Child {
  const first = s.runs[0];
  if (!first) return null;
  return h('p', { className: 'spec-note', testId }, [
    h('strong', { text: 'Goodput ' }),
    `(SLOs: ${sloText(first.slo)}): `,
    s.runs
      .map(
        (r) => `${r.label} ${fixed(r.summary.goodputRps, 2)} req/s of ${fixed(r.summary.requestsPerSec, 2)}`,
      )
      .join('; '),
  ]);
}

/** Short requests' slowdown against the same request alone on the idle engine. */
export function slowdownLine(s: ServeResult, testId: string): Child {
  const slow = s.runs.filter((r) => r.slowdown);
  if (slow.length === 0) return null;
  return h('p', { className: 'spec-note', testId }, [
    h('strong', { text: 'Short-request slowdown ' }),
    '(against the same request alone on the idle engine): ',
    slow
      .map((r) => {
        const d = r.slowdown;
        return d
          ? `${r.label}: TTFT ×${fixed(d.ttft.p50, 2)} median, ×${fixed(d.ttft.p95, 2)} p95; E2E ×${fixed(d.e2e.p50, 2)} median, ×${fixed(d.e2e.p95, 2)} p95`
          : '';
      })
      .join('; '),
  ]);
}

/**
 * Whether every finished request's tokens equal the same request run alone: one quiet line when
 * they all do, a loud notice naming the first differing requests when any does not.
 */
export function identicalNotice(s: ServeResult, id: (name: string) => string): Child {
  const checked = s.runs.filter((r) => r.identical);
  if (checked.length === 0) return null;
  const bad = checked.filter((r) => identicalOk(r) === false);
  if (bad.length === 0) {
    return h('p', { className: 'spec-note serve-identical', testId: id('serve-identical') }, [
      h('strong', { text: 'Identical to solo: ' }),
      `every finished request’s tokens equal the same request run alone (${checked
        .map((r) => `${r.label} ${r.identical?.checked}`)
        .join(', ')}).`,
    ]);
  }
  const mismatches = bad.reduce((n, r) => n + (r.identical?.mismatches ?? 0), 0);
  return h('div', { className: 'spec-alert', testId: id('serve-mismatch'), attrs: { role: 'alert' } }, [
    h('strong', {
      text: `${mismatches} request${mismatches === 1 ? '' : 's'} produced tokens different from the same request run alone.`,
    }),
    ' With greedy sampling and batch-invariant kernels they must be identical under any schedule: a difference is a bug in batching, chunking, preemption or the prefix cache, or a near-tie in the logits.',
    h(
      'ul',
      {},
      bad.map((r) => {
        const i = r.identical;
        const first = i && i.firstMismatches.length > 0 ? `: ${i.firstMismatches.join('; ')}` : '';
        const replay = r.replayMismatches > 0 ? `; ${r.replayMismatches} replayed rows differ` : '';
        return h('li', {
          text: `${r.label}: ${i?.mismatches ?? 0} of ${i?.checked ?? 0} differ${first}${replay}`,
        });
      }),
    ),
  ]);
}

/** Arms that stopped before every request finished, and why. */
export function stoppedNotice(s: ServeResult, testId: string): Child {
  const stopped = s.runs.filter((r) => r.stopped);
  if (stopped.length === 0) return null;
  return h(
    'ul',
    { className: 'warnings', testId },
    stopped.map((r) => h('li', { text: `${r.label} stopped early: ${r.stopped}` })),
  );
}
