/**
 * Peers across runs: each run's llama.cpp points joined by engine and backend, so two machines (or
 * two adapters of one) can be read against the same yardstick. Pure: shared by the page's Compare
 * view and `npm run compare`.
 */

import { escapeMarkdown, formatMs, markdownDelimiter, markdownRow } from '../markdown.ts';
import { llamaBenchName, speedRatios } from '../peers/report.ts';
import type { PeerPoint, PeerRecord } from '../peers/schema.ts';
import type { BenchResult } from './schema.ts';

/** What a peer point is joined on: the model, the file's weight type, the peer, the test. */
export interface PeerRowKey {
  preset: string;
  /** The GGUF tensor type both engines ran (F32, Q4_0…): runs of other formats never join. */
  fileType: string;
  engine: string;
  /** What the peer ran on ("cpu", "vulkan"…), as it reported it. */
  backend: string;
  pass: PeerPoint['pass'];
  tokens: number;
  depth: number;
}

/** One joined peer test. Arrays are indexed by file; null where the file lacks it. */
export interface PeerComparisonRow {
  key: PeerRowKey;
  /** llama-bench's name of the test (pp64, tg16 @ d16), with the file's generation length. */
  test: string;
  /** The peer's median time in each file, ms. */
  peerMs: (number | null)[];
  /**
   * Speed of this engine over the peer's in each file, as that run's report gives it (tok/s ÷ tok/s,
   * i.e. peer ms ÷ own ms; > 1: this engine faster); null where the run has no point to join.
   */
  ratio: (number | null)[];
  /** The clock of the peer's time in each file (peerClock); null where the file lacks the test. */
  clocks: (PeerClock | null)[];
}

/**
 * What a peer point's time was measured with: llama.cpp's own counters (the native peer since it
 * read them), the wall clock around each call (the native peer where the counters could not be
 * read, and every native point of files written before it did: their points name no clock), or
 * llama.cpp's server timings in wllama (its record's clock).
 */
export type PeerClock = 'llama.cpp-perf' | 'wall' | 'wllama-server';

export function peerClock(peer: PeerRecord, point: PeerPoint): PeerClock {
  return point.clock ?? (peer.engine === 'wllama' ? 'wllama-server' : 'wall');
}

/** Each clock in words, for the notes under a table. */
export const PEER_CLOCK_WORDS: Record<PeerClock, string> = {
  'llama.cpp-perf': 'llama.cpp’s own counters',
  wall: 'the wall clock around each call',
  'wllama-server': 'llama.cpp’s server timings in wllama',
};

/**
 * Whether a row joins times taken by different clocks: its peer ms are then not comparable from
 * run to run (llama.cpp's counters leave out the binding's 0.35–0.55 ms a call that the wall clock
 * holds), though each run's speed, against its own peer in its own clock, still is.
 */
export function mixesClocks(row: PeerComparisonRow): boolean {
  return new Set(row.clocks.filter((c) => c !== null)).size > 1;
}

/** A row's peer time in one file, marked † where the row mixes clocks; an en dash where there is none. */
export function formatPeerMs(row: PeerComparisonRow, i: number): string {
  const ms = row.peerMs[i];
  if (ms === null || ms === undefined) return '–';
  return `${formatMs(ms)}${mixesClocks(row) ? ' †' : ''}`;
}

/** The note under a table whose rows mix clocks: which file timed with which; null where none does. */
export function mixedClocksNote(rows: readonly PeerComparisonRow[], names: readonly string[]): string | null {
  const mixed = rows.filter(mixesClocks);
  if (mixed.length === 0) return null;
  const byFile = names.flatMap((name, i) => {
    const clocks = [...new Set(mixed.flatMap((r) => (r.clocks[i] ? [r.clocks[i]] : [])))];
    return clocks.length > 0 ? [`${name}: ${clocks.map((c) => PEER_CLOCK_WORDS[c]).join(', ')}`] : [];
  });
  return `† The runs timed this peer by different clocks (${byFile.join('; ')}): its ms are not comparable from run to run. Each speed is against that run's own peer, in that run's clock.`;
}

function keyId(k: PeerRowKey): string {
  return JSON.stringify([k.preset, k.fileType, k.engine, k.backend, k.pass, k.tokens, k.depth]);
}

/** A run's generation length, for llama-bench's tg name (0 where the run has no decode workload). */
export function decodeGen(r: BenchResult): number {
  const decode = r.spec.workloads.find((w) => w.kind === 'decode');
  return decode?.kind === 'decode' ? decode.gen : 0;
}

/**
 * Joins every measured peer point of the files on (preset, weight type, engine, backend, pass,
 * size, depth). A peer that failed contributes no points; rows come in order of first appearance,
 * prefills before decodes.
 */
export function comparePeers(files: readonly { result: BenchResult }[]): PeerComparisonRow[] {
  const rows = new Map<string, PeerComparisonRow>();
  files.forEach(({ result }, i) => {
    for (const peer of result.peers ?? []) {
      const ratios = new Map(speedRatios(result.points, peer).map((r) => [r.point, r.ratio]));
      for (const point of peer.points) {
        const key = peerRowKey(result, peer, point);
        const id = keyId(key);
        let row = rows.get(id);
        if (!row) {
          row = {
            key,
            test: llamaBenchName(point, decodeGen(result)),
            peerMs: files.map(() => null),
            ratio: files.map(() => null),
            clocks: files.map(() => null),
          };
          rows.set(id, row);
        }
        // The first record under a key in one file wins, as compareResults does with points.
        if (row.peerMs[i] !== null) continue;
        row.peerMs[i] = point.medianMs;
        row.ratio[i] = ratios.get(point) ?? null;
        row.clocks[i] = peerClock(peer, point);
      }
    }
  });
  return [...rows.values()].sort(
    (a, b) =>
      Number(a.key.pass === 'decode') - Number(b.key.pass === 'decode') ||
      (a.key.pass === 'prefill' ? a.key.tokens - b.key.tokens : a.key.depth - b.key.depth),
  );
}

function peerRowKey(result: BenchResult, peer: PeerRecord, point: PeerPoint): PeerRowKey {
  return {
    preset: result.model.preset,
    fileType: peer.fileType,
    engine: peer.engine,
    backend: peer.backend,
    pass: point.pass,
    tokens: point.tokens,
    depth: point.depth,
  };
}

/** The peer's name in a row: `llama.cpp cpu, Q4_0`, after the preset where the runs mix models. */
export function peerRowLabel(k: PeerRowKey, withPreset: boolean): string {
  return `${withPreset ? `${k.preset}: ` : ''}${k.engine} ${k.backend}, ${k.fileType}`;
}

/** Whether the rows need the preset to tell them apart. */
export const mixesPresets = (rows: readonly PeerComparisonRow[]) =>
  new Set(rows.map((r) => r.key.preset)).size > 1;

/** A speed ratio as the tables show it: `0.50×`, `4.0×`, `25×`; an en dash where there is none. */
export const formatPeerRatio = (r: number | null) =>
  r === null ? '–' : `${r >= 10 ? r.toFixed(0) : r.toPrecision(2)}×`;

/**
 * The Markdown section of a comparison: each file's peer time and its own engine's speed against
 * it, one row per joined test. Empty when no file has a measured peer point.
 */
export function peerComparisonMarkdown(files: readonly { name: string; result: BenchResult }[]): string[] {
  const rows = comparePeers(files);
  if (rows.length === 0) return [];
  const names = files.map((f) => escapeMarkdown(f.name));
  const withPreset = mixesPresets(rows);
  const note = mixedClocksNote(rows, names);
  return [
    '**Beside llama.cpp** (each run against the peer it measured on its own machine; speed = this engine ÷ peer, > 1 is faster than the peer)',
    '',
    markdownRow(['peer', 'test', ...names.map((n) => `${n} peer ms`), ...names.map((n) => `${n} speed`)]),
    markdownDelimiter(`ll${'r'.repeat(names.length * 2)}`),
    ...rows.map((row) =>
      markdownRow([
        escapeMarkdown(peerRowLabel(row.key, withPreset)),
        row.test,
        ...row.peerMs.map((_, i) => formatPeerMs(row, i)),
        ...row.ratio.map(formatPeerRatio),
      ]),
    ),
    ...(note ? ['', escapeMarkdown(note)] : []),
  ];
}
