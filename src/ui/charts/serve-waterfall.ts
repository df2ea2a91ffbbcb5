/**
 * A request waterfall: for chosen requests of one arm, one row each, its life on the run's clock:
 * arrival (dot), queue until admission (grey), prefill from admission to the first token (blue),
 * decode from the first token to the last (orange), with a tick at every token. A request that was
 * preempted is marked: its later waits sit inside its prefill or decode bar.
 */
import * as Plot from '@observablehq/plot';
import type { ServeRun } from '../../spec/workloads/serve-result.ts';
import { fixed } from '../format.ts';
import { baseOptions, fitMargins } from './common.ts';
import { ALERT_COLOR, CHAR_WIDTH, HALO, PHASE_COLORS, phasesOf, type ServeRequest } from './serve-common.ts';
import { legendSvg, stackCharts } from './stack.ts';

/** Which requests the waterfall shows. */
export const WATERFALL_PICKS = {
  mix: 'a few per class',
  slowest: '10 slowest TTFT',
  preempted: 'preempted',
  all: 'all (first 40)',
} as const;
export type WaterfallPick = keyof typeof WATERFALL_PICKS;

const SLOWEST = 10;
const ALL_LIMIT = 40;
const ROW_PX = 20;

/**
 * The finished requests a pick shows, in order of arrival: per class the fastest, median and
 * slowest by TTFT (mix); the ten slowest; the preempted; or the first forty to arrive.
 */
export function pickRequests(run: ServeRun, pick: WaterfallPick): ServeRequest[] {
  const done = run.requests.filter((q) => phasesOf(q) !== null);
  const ttft = (q: ServeRequest) => phasesOf(q)?.ttftMs ?? 0;
  let chosen: ServeRequest[];
  if (pick === 'slowest') {
    chosen = [...done].sort((a, b) => ttft(b) - ttft(a)).slice(0, SLOWEST);
  } else if (pick === 'preempted') {
    chosen = done.filter((q) => q.preemptions > 0);
  } else if (pick === 'all') {
    chosen = [...done].sort((a, b) => a.arrivalMs - b.arrivalMs).slice(0, ALL_LIMIT);
  } else {
    const byClass = new Map<string, ServeRequest[]>();
    for (const q of done) byClass.set(q.class, [...(byClass.get(q.class) ?? []), q]);
    chosen = [...byClass.values()].flatMap((qs) => {
      const sorted = [...qs].sort((a, b) => ttft(a) - ttft(b));
      return [
        ...new Set([sorted[0], sorted[Math.floor((sorted.length - 1) / 2)], sorted[sorted.length - 1]]),
      ];
    });
  }
  return chosen.sort((a, b) => a.arrivalMs - b.arrivalMs || a.id - b.id);
}

/** A request's row name: its id and class. */
function rowName(q: ServeRequest): string {
  return `#${q.id} ${q.class}`;
}

export function requestWaterfallChart(
  run: ServeRun,
  pick: WaterfallPick,
  width: number,
): SVGSVGElement | null {
  const chosen = pickRequests(run, pick);
  if (chosen.length === 0) return null;
  const rows = chosen.map(rowName);
  const segments = chosen.flatMap((q) => {
    const p = phasesOf(q);
    if (!p) return [];
    const name = rowName(q);
    const head = `request ${q.id} (${q.class}): ${q.promptTokens}-token prompt${q.prefixHitTokens > 0 ? ` (${q.prefixHitTokens} from the prefix cache)` : ''}, ${q.outputTokens} tokens out`;
    const times = `arrived ${fixed(p.arrivalMs, 0)} ms · queue ${fixed(p.queueMs, 0)} · prefill ${fixed(p.prefillMs, 0)} · decode ${fixed(p.decodeMs, 0)} ms\nTTFT ${fixed(p.ttftMs, 0)} ms, E2E ${fixed(p.e2eMs, 0)} ms${p.tpotMs === null ? '' : `, TPOT ${fixed(p.tpotMs, 1)} ms`}${q.preemptions > 0 ? `\npreempted ${q.preemptions}×` : ''}`;
    const title = `${head}\n${times}`;
    return [
      { row: name, phase: 'queue', x1: p.arrivalMs, x2: p.admittedMs, title },
      { row: name, phase: 'prefill', x1: p.admittedMs, x2: p.firstTokenMs, title },
      { row: name, phase: 'decode', x1: p.firstTokenMs, x2: p.finishMs, title },
    ];
  });
  const ticks = chosen.flatMap((q) => q.tokenTimesMs.map((t) => ({ row: rowName(q), t })));
  const arrivals = chosen.map((q) => ({ row: rowName(q), t: q.arrivalMs }));
  const preempted = chosen
    .filter((q) => q.preemptions > 0)
    .map((q) => ({ row: rowName(q), t: q.finishMs ?? 0, text: `preempted ${q.preemptions}×` }));
  const xMax = Math.max(...chosen.map((q) => q.finishMs ?? 0));
  const xMin = Math.min(...chosen.map((q) => q.arrivalMs));
  // Room right of the latest finish for a "preempted" note.
  const noteRoom = preempted.length > 0 ? 92 : 0;
  const { marginLeft, marginRight } = fitMargins(
    width,
    Math.min(width * 0.4, 10 + CHAR_WIDTH * Math.max(...rows.map((r) => r.length))),
    14 + noteRoom,
  );
  const legend = legendSvg(
    [
      { label: 'queue', color: PHASE_COLORS.queue },
      { label: 'prefill (admitted → first token)', color: PHASE_COLORS.prefill },
      { label: 'decode', color: PHASE_COLORS.decode },
      { label: 'a token', color: PHASE_COLORS.decode, shape: 'tick' as const },
    ],
    width,
  );
  const plot = Plot.plot({
    ...baseOptions(width, 8 + 40 + rows.length * ROW_PX),
    marginTop: 8,
    marginBottom: 40,
    marginLeft,
    marginRight,
    x: { domain: [xMin, xMax], label: 'Time since the arm started (ms) →', grid: true, nice: false },
    y: { type: 'band', domain: rows, padding: 0.25, label: null },
    color: {
      domain: ['queue', 'prefill', 'decode'],
      range: [PHASE_COLORS.queue, PHASE_COLORS.prefill, PHASE_COLORS.decode],
    },
    marks: [
      Plot.barX(segments, {
        x1: 'x1',
        x2: 'x2',
        y: 'row',
        fill: 'phase',
        title: 'title',
        className: 'serve-waterfall-bar',
      }),
      // White on the bars: dark ticks of a long generation would blacken its decode bar.
      Plot.tickX(ticks, {
        x: 't',
        y: 'row',
        stroke: 'white',
        strokeOpacity: 0.75,
        strokeWidth: 1,
        inset: 2,
      }),
      Plot.dot(arrivals, { x: 't', y: 'row', r: 3, fill: '#0f172a' }),
      Plot.text(preempted, {
        x: 't',
        y: 'row',
        text: 'text',
        dx: 6,
        textAnchor: 'start',
        fill: ALERT_COLOR,
        fontWeight: 600,
        ...HALO,
      }),
    ],
  });
  return stackCharts([{ chart: legend }, { chart: plot }], width);
}
