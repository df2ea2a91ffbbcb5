import { escapeMarkdown, formatMs, markdownDelimiter, markdownRow } from '../markdown.ts';
import { LIKELY, onlyNearTies } from './agreement.ts';
import type { Agreement, PeerPoint, PeerRecord } from './schema.ts';

/** This engine's pass points as the side-by-side table needs them (a result's `points`). */
export interface OwnPoint {
  pass: 'prefill' | 'decode';
  tokens: number;
  depth: number;
  batch: number;
  medianMs: number;
  /** Set on the fusion workload's points only: those are not the run's own sweep. */
  graph?: string;
}

/** llama-bench's name of a test: pp<L> for a prefill, tg<gen> @ d<depth> for decode steps. */
export function llamaBenchName(
  p: { pass: 'prefill' | 'decode'; tokens: number; depth: number },
  gen: number,
): string {
  return p.pass === 'prefill' ? `pp${p.tokens}` : `tg${gen} @ d${p.depth}`;
}

/** Tokens per second of a point: L per prefill, one per decode step. */
const tokPerS = (p: { pass: 'prefill' | 'decode'; tokens: number; medianMs: number }) =>
  p.medianMs > 0 ? ((p.pass === 'prefill' ? p.tokens : 1) * 1000) / p.medianMs : 0;

/** The run's own point a peer point is set beside: same pass, size and depth, batch 1, the run's graph. */
export function ownPointFor(own: readonly OwnPoint[], p: PeerPoint): OwnPoint | undefined {
  return own.find(
    (o) =>
      o.pass === p.pass &&
      o.batch === 1 &&
      o.graph === undefined &&
      (p.pass === 'prefill' ? o.tokens === p.tokens : o.depth === p.depth),
  );
}

/** Speed of this engine over the peer's on each joined point (tok/s ÷ tok/s; > 1: this engine is faster). */
export function speedRatios(
  own: readonly OwnPoint[],
  peer: PeerRecord,
): { point: PeerPoint; ratio: number }[] {
  return peer.points.flatMap((point) => {
    const mine = ownPointFor(own, point);
    return mine && point.tokPerS > 0 ? [{ point, ratio: tokPerS(mine) / point.tokPerS }] : [];
  });
}

const geomean = (xs: number[]) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

const fmtX = (r: number) => (r >= 10 ? r.toFixed(0) : r >= 1 ? r.toFixed(2) : r.toPrecision(2));

export const peerName = (p: PeerRecord) => `${p.engine} ${p.backend}`;

/**
 * The clock of a peer's ms, tok/s and speed columns, in words, where its points name one (files
 * from before they did leave it to the record's `clock` line).
 */
export function peerSpeedClock(peer: PeerRecord): string | undefined {
  const clocks = new Set(peer.points.map((p) => p.clock));
  if (clocks.size !== 1) return undefined;
  const [clock] = clocks;
  return clock === 'llama.cpp-perf'
    ? 'llama.cpp’s own counters (llama_perf_context), not the wall clock around the call'
    : clock === 'wall'
      ? 'the wall clock around each call into the peer'
      : undefined;
}

/** The line under a peer's table: which clock the speed column is in, then the record's clock. */
export function peerClockLine(peer: PeerRecord): string {
  const speed = peerSpeedClock(peer);
  return `${speed ? `Speed column (and ${peerName(peer)} ms, tok/s): ${speed}. ` : ''}Clock: ${peer.clock}.`;
}

/**
 * The headline: for each peer, how fast this adapter is against it in prefill and in decode (the
 * geometric mean of the per-point speed ratios), and what a user should act on.
 */
export function peersHeadline(
  own: readonly OwnPoint[],
  peers: readonly PeerRecord[],
  adapter: string,
  softwareAdapter: boolean,
): string {
  const parts: string[] = [];
  let peerWins = 0;
  let compared = 0;
  for (const peer of peers) {
    if (peer.error) continue;
    const ratios = speedRatios(own, peer);
    const of = (pass: 'prefill' | 'decode') =>
      ratios.filter((r) => r.point.pass === pass).map((r) => r.ratio);
    const pp = of('prefill');
    const tg = of('decode');
    if (pp.length + tg.length === 0) continue;
    const all = [...pp, ...tg];
    compared++;
    if (geomean(all) < 1) peerWins++;
    const say = (xs: number[], what: string) => (xs.length ? `${fmtX(geomean(xs))}× in ${what}` : '');
    parts.push(`${[say(pp, 'prefill'), say(tg, 'decode')].filter(Boolean).join(', ')} ${peerName(peer)}`);
  }
  if (compared === 0) return 'No peer point joined a point of this run.';
  const head = `This adapter (${adapter}) = ${parts.join('; ')} (speed, this engine ÷ peer; > 1 is faster here).`;
  const verdict =
    peerWins === 0
      ? 'Verdict: this engine on this adapter is faster than every peer measured.'
      : softwareAdapter
        ? 'Verdict: llama.cpp is faster on this machine, as expected: the adapter is a software one (a CPU emulating a GPU), so WebGPU here runs on the same cores llama.cpp uses directly. Run llama.cpp here; use this figure only to compare adapters.'
        : `Verdict: llama.cpp is faster than this engine on ${peerWins} of ${compared} peers measured; for this model on this machine, use it.`;
  return `${head}\n\n${verdict}`;
}

/**
 * What an agreement was taken over, where it is not every token at every position: the peer's K
 * likeliest (wllama), and the tokens left out of both distributions (those that are no whole UTF-8).
 */
export function agreementScope(a: Agreement, long: boolean): string {
  const parts = [
    a.peerTopK
      ? `over the peer's ${a.peerTopK} likeliest tokens${long ? ' at each; KL with the rest as one bucket' : ''}`
      : '',
    a.tokensLeftOut
      ? `${a.tokensLeftOut} tokens that are no whole UTF-8 text left out of both${long ? ', each renormalized over the rest' : ''}`
      : '',
  ].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

/**
 * Where the two engines differ, after the verdict: each position whose top-1 differs with this
 * engine's gap between the two tokens (near-ties, when every gap is within the log-p bound: then
 * they do not fail the check, agreement.ts onlyNearTies), and on a failure the positions past the
 * log-p bound. Empty when every top-1 agrees and the check passed.
 */
export function agreementDetail(a: Agreement): string {
  const flips = a.top1Mismatches
    .map((p, i) => `${p} (this engine's gap ${a.top1Gaps[i]?.toExponential(1)})`)
    .join(', ');
  if (a.passed)
    return flips ? ` (top-1 differs at positions ${flips}: near-ties, each gap within the log-p bound)` : '';
  return ` (top-1 differs at positions ${flips || 'none'}${flips && onlyNearTies(a) ? ', all near-ties' : ''}; past the log-p bound at ${a.logprobMismatches.join(', ') || 'none'})`;
}

/**
 * The near-ties counted: positions where this engine's own top two are within the log-p bound
 * (flipped by the peer or not), and the top-1 share over the rest, where a flip would be a
 * disagreement about the model rather than a rounding. Empty for results from before it was kept.
 */
export function nearTiesNote(a: Pick<Agreement, 'nearTies' | 'top1OutsideNearTies' | 'tokens'>): string {
  if (a.nearTies === undefined) return '';
  const rest = a.tokens - a.nearTies;
  const outside =
    a.top1OutsideNearTies === undefined
      ? ''
      : `; top-1 ${(a.top1OutsideNearTies * 100).toFixed(1)}% at the other ${rest}`;
  return ` [${a.nearTies} near-tie${a.nearTies === 1 ? '' : 's'}, this engine's top two within the log-p bound${outside}]`;
}

/** The side-by-side section of the Markdown report: each peer's points beside this run's, its agreement. */
export function peersReport(
  own: readonly OwnPoint[],
  peers: readonly PeerRecord[],
  gen: number,
  adapter: string,
  softwareAdapter: boolean,
): string {
  const lines = ['## Beside llama.cpp (the same GGUF file in both engines)', ''];
  lines.push(peersHeadline(own, peers, adapter, softwareAdapter), '');
  for (const peer of peers) {
    lines.push(
      `### ${escapeMarkdown(`${peerName(peer)}: ${peer.version}; ${peer.device}; ${peer.threads} thread${peer.threads === 1 ? '' : 's'}${peer.threadTrials.length > 1 ? ` (fastest of ${peer.threadTrials.map((t) => `${t.threads}: ${formatMs(t.ms)} ms`).join(', ')})` : ''}; ${peer.fileType} weights`)}`,
      '',
    );
    if (peer.note) lines.push(`Note: ${escapeMarkdown(peer.note)}.`, '');
    if (peer.error) lines.push(`Not measured: ${escapeMarkdown(peer.error)}`, '');
    if (peer.points.length > 0) {
      const name = escapeMarkdown(peerName(peer));
      // The wall clock around each call, beside llama.cpp's own, where the points carry it.
      const wall = peer.points.some((p) => p.wallMedianMs !== undefined);
      lines.push(
        markdownRow([
          'test',
          'this engine ms',
          `${name} ms`,
          ...(wall ? [`${name} wall ms`] : []),
          'this engine tok/s',
          `${name} tok/s`,
          'speed (this ÷ peer)',
        ]),
        markdownDelimiter(wall ? 'lrrrrrr' : 'lrrrrr'),
        ...peer.points.map((p) => {
          const mine = ownPointFor(own, p);
          return markdownRow([
            llamaBenchName(p, gen),
            mine ? formatMs(mine.medianMs) : '–',
            formatMs(p.medianMs),
            ...(wall ? [p.wallMedianMs === undefined ? '–' : formatMs(p.wallMedianMs)] : []),
            mine ? tokPerS(mine).toFixed(1) : '–',
            p.tokPerS.toFixed(1),
            mine ? `${fmtX(tokPerS(mine) / p.tokPerS)}×` : '–',
          ]);
        }),
        '',
        escapeMarkdown(peerClockLine(peer)),
        '',
      );
    }
    const a = peer.agreement;
    if (a) {
      lines.push(
        `Agreement on ${a.tokens} prompt positions${agreementScope(a, true)}: top-1 ${(a.top1 * 100).toFixed(1)}% (bound ${(a.tolerance.top1 * 100).toFixed(0)}%)${nearTiesNote(a)}, ` +
          `max |Δ log p| ${a.maxAbsLogprobDiff.toExponential(2)} (bound ${a.tolerance.maxAbsLogprobDiff.toExponential(1)}${a.maxAbsLogprobDiffLikely === undefined ? '' : `; ${a.maxAbsLogprobDiffLikely.toExponential(2)} over tokens of p ≥ ${LIKELY.toExponential(0)}`}), ` +
          `KL ${a.kl.toExponential(2)} nats: **${a.passed ? 'passed' : 'FAILED'}**${agreementDetail(a)}`,
        '',
      );
    }
  }
  return lines.join('\n');
}
