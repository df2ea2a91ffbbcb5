/**
 * TTFT split into its two parts, per class and arm: the mean time a request waited for admission
 * (queue) and the mean time from admission to its first token (prefill: its prompt chunks, shared
 * steps, any wait after a preemption). Means, not medians, because means add up: the two segments
 * of a bar sum to the class's mean TTFT exactly, written at the bar's end.
 */
import * as Plot from '@observablehq/plot';
import type { ServeRun } from '../../spec/workloads/serve-result.ts';
import { fixed } from '../format.ts';
import { baseOptions, fitMargins, type PlotNode } from './common.ts';
import { CHAR_WIDTH, classOrder, HALO, PHASE_COLORS, phasesOf } from './serve-common.ts';

const BAR_PX = 20;

/**
 * A finished request's TTFT in parts: over HTTP, where the server returned its timeline, the
 * client's network and HTTP time, the server's queue and its prefill; in process, no network.
 */
function partsOf(
  q: ServeRun['requests'][number],
): { networkMs: number; queueMs: number; prefillMs: number } | null {
  const p = phasesOf(q);
  if (!p) return null;
  if (q.networkMs !== undefined && q.queueMs !== undefined && q.prefillMs !== undefined) {
    return { networkMs: q.networkMs, queueMs: q.queueMs, prefillMs: q.prefillMs };
  }
  return { networkMs: 0, queueMs: p.queueMs, prefillMs: p.prefillMs };
}

/** Mean network (HTTP arms), queue and prefill time of each class of each arm, over its finished requests. */
export function ttftSplit(
  runs: readonly ServeRun[],
): { arm: string; class: string; n: number; networkMs: number; queueMs: number; prefillMs: number }[] {
  const classes = classOrder(runs);
  return classes.flatMap((c) =>
    runs.flatMap((run) => {
      const parts = run.requests.filter((q) => q.class === c).flatMap((q) => partsOf(q) ?? []);
      if (parts.length === 0) return [];
      const mean = (f: (p: (typeof parts)[number]) => number) =>
        parts.reduce((a, p) => a + f(p), 0) / parts.length;
      return [
        {
          arm: run.label,
          class: c,
          n: parts.length,
          networkMs: mean((p) => p.networkMs),
          queueMs: mean((p) => p.queueMs),
          prefillMs: mean((p) => p.prefillMs),
        },
      ];
    }),
  );
}

export function ttftSplitChart(runs: readonly ServeRun[], width: number): PlotNode | null {
  const split = ttftSplit(runs);
  if (split.length === 0) return null;
  const classes = [...new Set(split.map((s) => s.class))];
  const arms = runs.map((r) => r.label).filter((a) => split.some((s) => s.arm === a));
  const http = split.some((s) => s.networkMs > 0);
  const data = split.flatMap((s) => {
    const total = s.networkMs + s.queueMs + s.prefillMs;
    const title = `${s.arm} · ${s.class} (${s.n} finished)\nmean TTFT ${fixed(total, 1)} ms = ${http ? `network and HTTP ${fixed(s.networkMs, 1)} + ` : ''}queue ${fixed(s.queueMs, 1)} + prefill ${fixed(s.prefillMs, 1)} ms`;
    return [
      ...(http ? [{ arm: s.arm, class: s.class, phase: 'network', ms: s.networkMs, title }] : []),
      { arm: s.arm, class: s.class, phase: 'queue', ms: s.queueMs, title },
      { arm: s.arm, class: s.class, phase: 'prefill', ms: s.prefillMs, title },
    ];
  });
  const totals = split.map((s) => ({
    arm: s.arm,
    class: s.class,
    ms: s.networkMs + s.queueMs + s.prefillMs,
    text: `${fixed(s.networkMs + s.queueMs + s.prefillMs, 0)} ms`,
  }));
  const xMax = Math.max(...totals.map((t) => t.ms)) * 1.45;
  const margins = fitMargins(
    width,
    12 + CHAR_WIDTH * Math.max(...arms.map((a) => a.length)),
    14 + CHAR_WIDTH * Math.max(...classes.map((c) => c.length)),
  );
  const height = 24 + 44 + classes.length * (arms.length * BAR_PX + 18);
  return Plot.plot({
    ...baseOptions(width, height),
    marginTop: 24,
    marginBottom: 44,
    ...margins,
    x: { domain: [0, xMax], label: 'Mean TTFT (ms) →', grid: true },
    y: { domain: arms, label: null, padding: 0.18 },
    fy: { domain: classes, label: null, padding: 0.14, axis: 'right' },
    color: {
      domain: http ? ['network', 'queue', 'prefill'] : ['queue', 'prefill'],
      range: http
        ? [PHASE_COLORS.network, PHASE_COLORS.queue, PHASE_COLORS.prefill]
        : [PHASE_COLORS.queue, PHASE_COLORS.prefill],
      legend: true,
      tickFormat: (p: string) =>
        p === 'network'
          ? 'network and HTTP (client ↔ server)'
          : p === 'queue'
            ? 'queue (arrival → admitted)'
            : 'prefill (admitted → first token)',
    },
    marks: [
      Plot.barX(
        data,
        Plot.stackX({
          x: 'ms',
          y: 'arm',
          fy: 'class',
          fill: 'phase',
          title: 'title',
          className: 'serve-split-bar',
        }),
      ),
      Plot.text(totals, {
        x: 'ms',
        y: 'arm',
        fy: 'class',
        text: 'text',
        dx: 4,
        textAnchor: 'start',
        fill: '#0f172a',
        ...HALO,
      }),
      Plot.ruleX([0], { stroke: '#94a3b8' }),
    ],
  });
}
