/**
 * What a reader of a speculative-decoding result looks at first: the knee of the verify-K curve,
 * the best speed-up a real (not synthetic) drafter reached, and whether every output equalled
 * greedy decode; then the knee at each depth in words, and a loud notice of any output that differed.
 */
import type { SpecResult, SpecRun } from '../../spec/workloads/speculative-result.ts';
import { runName } from '../charts/speculative.ts';
import { type Child, h } from '../dom.ts';
import { fixed, MISSING } from '../format.ts';
import { mismatchText } from './runs-table.ts';

function tile(testId: string, value: string, label: string, warn = false): HTMLElement {
  return h('div', { className: `stat-tile${warn ? ' warn' : ''}`, testId }, [
    h('span', { className: 'stat-tile-value', text: value }),
    h('span', { className: 'stat-tile-label', text: label }),
  ]);
}

/** The run of the highest measured speed-up among the real drafters, if any ran. */
function bestReal(runs: readonly SpecRun[]): SpecRun | null {
  return runs
    .filter((r) => !r.synthetic)
    .reduce<SpecRun | null>((a, b) => (a && a.speedup >= b.speedup ? a : b), null);
}

/** The headline tiles; `id` names each tile's test id (`spec-tile-knee`, …) as the view prefixes them. */
export function specTiles(s: SpecResult, id: (name: string) => string): HTMLElement {
  const best = bestReal(s.runs);
  const greedy = s.runs.filter((r) => r.identical !== null);
  const identical = greedy.filter((r) => r.identical).length;
  return h('div', { className: 'stat-tiles' }, [
    tile(
      id('spec-tile-knee'),
      s.knee === null ? 'none' : `k = ${s.knee}`,
      `verify knee: the largest k costing ≤ ${fixed(s.kneeRatio, 1)}× a decode step at every depth`,
      s.knee === null,
    ),
    tile(
      id('spec-tile-best'),
      best ? `${fixed(best.speedup, 2)}×` : MISSING,
      best ? `best real drafter: ${runName(best)}` : 'no real drafter ran',
      best !== null && best.speedup < 1,
    ),
    greedy.length > 0
      ? tile(
          id('spec-tile-identical'),
          `${identical} / ${greedy.length}`,
          'outputs identical to greedy decode',
          identical < greedy.length,
        )
      : tile(
          id('spec-tile-identical'),
          `T = ${s.runs[0]?.temperature ?? MISSING}`,
          'sampled: each text is one draw; the acceptance rule keeps the target’s distribution',
          false,
        ),
  ]);
}

/** The knee at each depth, with the ratio at the knee and at the next k, which crossed the rule. */
export function kneeList(s: SpecResult, testId: string): HTMLElement {
  const items = s.kneeByDepth.map(({ depth, k }) => {
    const points = s.verifyCurve.filter((p) => p.depth === depth).sort((a, b) => a.k - b.k);
    const at = points.find((p) => p.k === k);
    const next = points.find((p) => p.k > (k ?? 0));
    const beyond = next ? `; k = ${next.k} costs ${fixed(next.ratio, 2)}×` : '; no larger k was measured';
    const text =
      k === null || !at
        ? `depth ${depth}: no knee (k = ${points[0]?.k ?? '?'} already costs ${fixed(points[0]?.ratio ?? 0, 2)}× a decode step)`
        : `depth ${depth}: knee k = ${k} (${fixed(at.ratio, 2)}× a decode step${beyond})`;
    return h('li', { text });
  });
  return h('ul', { className: 'spec-knees', testId }, items);
}

/** A notice for outputs that differ from greedy decode; nothing when every output was identical. */
export function mismatchNotice(s: SpecResult, testId: string): Child {
  const bad = s.runs.filter((r) => r.identical === false);
  if (bad.length === 0) return null;
  return h('div', { className: 'spec-alert', testId, attrs: { role: 'alert' } }, [
    h('strong', {
      text: `${bad.length} of ${s.runs.length} speculative outputs differ from plain greedy decode.`,
    }),
    ' With greedy sampling they must be identical token for token: a difference is a bug in the verify or rollback path, or a near-tie in the logits.',
    h(
      'ul',
      {},
      bad.map((r) => h('li', { text: `${runName(r)}: first differs at ${mismatchText(r)}` })),
    ),
  ]);
}
