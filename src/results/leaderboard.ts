import { formatMs } from '../markdown.ts';
import { adapterLabel, csvRecord } from './export.ts';
import type { BenchResult, Point } from './schema.ts';

/**
 * A device leaderboard: many result files (one per device, or several runs of one) ranked at the
 * same model, weight format and pass. Each group is ranked at one shape (prompt length or decode
 * depth, batch 1), the one the most files measured, so every row in a group ran the same work;
 * files without that shape are named under the group rather than ranked on different work.
 */

export interface BoardFile {
  name: string;
  result: BenchResult;
}

/** llama.cpp (or wllama) at the same point in the same run, where the run had a peer. */
export interface BoardPeer {
  name: string;
  tokensPerSec: number;
  /** This engine's tok/s ÷ the peer's: above 1, this engine was faster on that device. */
  ratio: number;
}

export interface BoardRow {
  rank: number;
  file: string;
  device: string;
  fallback: boolean;
  runtime: 'browser' | 'node';
  /** The browser (or the Dawn build) that ran it. */
  browser: string;
  status: BenchResult['status'];
  tokensPerSec: number;
  medianMs: number;
  /** Share of this device's own roof at the point's arithmetic intensity, %. */
  roofPct: number;
  bound: Point['bound'];
  /** The device's own roofs, the best of those measured before and after the workloads. */
  fmaGflops: number;
  copyGBps: number;
  peers: BoardPeer[];
}

export interface BoardGroup {
  preset: string;
  weights: string;
  pass: Point['pass'];
  tokens: number;
  depth: number;
  rows: BoardRow[];
  /** Files with this model, format and pass that did not measure the group's shape. */
  otherShape: string[];
}

export interface Leaderboard {
  groups: BoardGroup[];
  files: number;
  /** Valid files with no batch-1 prefill or decode point, so in no group: each with why. */
  unranked: { file: string; why: string }[];
}

/** Why a valid file ranks nowhere: it has no batch-1 prefill or decode point. */
function unrankedWhy(r: BenchResult): string {
  const suites = r.spec.workloads.map((w) => w.kind).join(', ') || 'none';
  if (r.points.length === 0) return `no prefill or decode points (its workloads: ${suites})`;
  return `its ${r.points.length} point(s) are all at batch > 1 (its workloads: ${suites})`;
}

/** The sentence every output of the board gives for its unranked files, or '' when there are none. */
export function unrankedText(board: Leaderboard): string {
  if (board.unranked.length === 0) return '';
  return `Ranked nowhere: ${board.unranked.map((u) => `${u.file} (${u.why})`).join('; ')}.`;
}

interface Candidate {
  file: BoardFile;
  point: Point;
}

const shapeId = (p: Point) => `${p.tokens}@${p.depth}`;

/** The point a file is ranked by at one shape: batch 1, the paged KV cache where it ran both. */
function pickPoint(points: Point[]): Point {
  return points.find((p) => p.kvMode === 'paged') ?? points[0];
}

function bestRoofs(r: BenchResult): { fmaGflops: number; copyGBps: number } {
  return {
    fmaGflops: Math.max(r.peaks.fmaGflops, r.peaksAfter?.fmaGflops ?? 0),
    copyGBps: Math.max(r.peaks.copyGBps, r.peaksAfter?.copyGBps ?? 0),
  };
}

function peersAt(r: BenchResult, p: Point, tokensPerSec: number): BoardPeer[] {
  const out: BoardPeer[] = [];
  for (const peer of r.peers ?? []) {
    if (peer.error) continue;
    const match = peer.points.find((q) => q.pass === p.pass && q.tokens === p.tokens && q.depth === p.depth);
    if (!match || match.tokPerS <= 0) continue;
    out.push({
      name: `${peer.engine} (${peer.backend})`,
      tokensPerSec: match.tokPerS,
      ratio: tokensPerSec / match.tokPerS,
    });
  }
  return out;
}

/**
 * Chooses a group's shape: the one the most files measured; among equals, the longest prompt for
 * prefill (the compute-bound end) and the deepest context for decode (the bandwidth-bound end).
 */
function chooseShape(byShape: Map<string, Candidate[]>): string {
  let best: string | undefined;
  let bestKey: [number, number, number] = [-1, -1, -1];
  for (const [id, cands] of byShape) {
    const files = new Set(cands.map((c) => c.file.name)).size;
    const p = cands[0].point;
    const key: [number, number, number] = [files, p.tokens, p.depth];
    if (
      key[0] > bestKey[0] ||
      (key[0] === bestKey[0] && (key[1] > bestKey[1] || (key[1] === bestKey[1] && key[2] > bestKey[2])))
    ) {
      best = id;
      bestKey = key;
    }
  }
  return best as string;
}

export function buildLeaderboard(files: readonly BoardFile[]): Leaderboard {
  // (preset, weights, pass) -> shape -> candidates, in file order.
  const groups = new Map<string, Map<string, Candidate[]>>();
  for (const file of files) {
    const r = file.result;
    for (const p of r.points) {
      if (p.batch !== 1) continue;
      const weights = p.weightFormat ?? r.model.weightFormat ?? 'f32';
      const gid = JSON.stringify([r.model.preset, weights, p.pass]);
      let shapes = groups.get(gid);
      if (!shapes) {
        shapes = new Map();
        groups.set(gid, shapes);
      }
      const list = shapes.get(shapeId(p)) ?? [];
      list.push({ file, point: p });
      shapes.set(shapeId(p), list);
    }
  }
  const out: BoardGroup[] = [];
  for (const [gid, shapes] of groups) {
    const [preset, weights, pass] = JSON.parse(gid) as [string, string, Point['pass']];
    const chosen = chooseShape(shapes);
    const cands = shapes.get(chosen) ?? [];
    const byFile = new Map<string, Candidate[]>();
    for (const c of cands) byFile.set(c.file.name, [...(byFile.get(c.file.name) ?? []), c]);
    const rows: BoardRow[] = [...byFile.values()].map((list) => {
      const { file } = list[0];
      const r = file.result;
      const p = pickPoint(list.map((c) => c.point));
      return {
        rank: 0,
        file: file.name,
        device: adapterLabel(r.env.adapter),
        fallback: r.env.adapter.isFallbackAdapter,
        runtime: r.env.runtime?.name ?? 'browser',
        browser: r.env.runtime?.name === 'node' ? (r.env.runtime.dawn ?? 'Dawn') : r.env.browser,
        status: r.status,
        tokensPerSec: p.tokensPerSec,
        medianMs: p.medianMs,
        roofPct: p.roofPct,
        bound: p.bound,
        ...bestRoofs(r),
        peers: peersAt(r, p, p.tokensPerSec),
      };
    });
    rows.sort((a, b) => b.tokensPerSec - a.tokensPerSec || a.file.localeCompare(b.file));
    rows.forEach((row, i) => {
      row.rank = i + 1;
    });
    const ranked = new Set(rows.map((r) => r.file));
    const otherShape = [...new Set([...shapes.values()].flat().map((c) => c.file.name))].filter(
      (f) => !ranked.has(f),
    );
    const p = cands[0].point;
    out.push({ preset, weights, pass, tokens: p.tokens, depth: p.depth, rows, otherShape });
  }
  out.sort(
    (a, b) =>
      a.preset.localeCompare(b.preset) || a.weights.localeCompare(b.weights) || a.pass.localeCompare(b.pass),
  );
  const inGroups = new Set(out.flatMap((g) => [...g.rows.map((r) => r.file), ...g.otherShape]));
  const unranked = files
    .filter((f) => !inGroups.has(f.name))
    .map((f) => ({ file: f.name, why: unrankedWhy(f.result) }));
  return { groups: out, files: files.length, unranked };
}

export function groupTitle(g: BoardGroup): string {
  const shape = g.pass === 'prefill' ? `prompt L = ${g.tokens}` : `decode at depth ${g.depth}`;
  return `${g.preset} · ${g.weights} · ${g.pass} (${shape}, batch 1)`;
}

/** tok/s as every output of the board prints it: whole above 100, three digits below. */
export const tok = (x: number) => (x >= 100 ? x.toFixed(0) : x.toPrecision(3));
/** The peers at a row's point, with this engine ÷ the peer. */
export const peerText = (row: BoardRow) =>
  row.peers.map((p) => `${p.name} ${tok(p.tokensPerSec)} tok/s (×${p.ratio.toFixed(2)})`).join('; ') || '–';
/** The device, marked when it is a software adapter. */
export const deviceText = (row: BoardRow) => `${row.device}${row.fallback ? ' (software)' : ''}`;

/** Markdown: a ranked table per group. */
export function leaderboardToMarkdown(board: Leaderboard): string {
  const lines = [`# Device leaderboard (${board.files} result files)`, ''];
  if (board.unranked.length > 0) lines.push(unrankedText(board), '');
  if (board.groups.length === 0) lines.push('No batch-1 prefill or decode points to rank.', '');
  for (const g of board.groups) {
    lines.push(`## ${groupTitle(g)}`, '');
    lines.push(
      '| rank | device | runtime | browser / Dawn | tok/s | ms | % of own roof | bound | FMA GFLOP/s | copy GB/s | llama.cpp at this point (this ÷ peer) | file |',
      '| ---: | --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- | --- |',
    );
    for (const r of g.rows) {
      lines.push(
        `| ${r.rank} | ${deviceText(r)} | ${r.runtime} | ${r.browser} | ${tok(r.tokensPerSec)} | ${formatMs(r.medianMs)} | ${r.roofPct.toFixed(1)} | ${r.bound} | ${r.fmaGflops.toFixed(1)} | ${r.copyGBps.toFixed(1)} | ${peerText(r)} | ${r.file}${r.status === 'complete' ? '' : ` (${r.status})`} |`,
      );
    }
    if (g.otherShape.length > 0)
      lines.push('', `Not at this shape, so not ranked here: ${g.otherShape.join(', ')}.`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

export const LEADERBOARD_CSV_HEADER = [
  'preset',
  'weights',
  'pass',
  'tokens',
  'depth',
  'rank',
  'device',
  'fallback',
  'runtime',
  'browser',
  'tokens_per_sec',
  'median_ms',
  'roof_pct',
  'bound',
  'fma_gflops',
  'copy_gbps',
  'peer',
  'peer_tokens_per_sec',
  'status',
  'file',
] as const;

/** CSV: one line per ranked row, the first peer (if any) in its own columns. */
export function leaderboardToCsv(board: Leaderboard): string {
  const lines = [csvRecord([...LEADERBOARD_CSV_HEADER])];
  for (const g of board.groups) {
    for (const r of g.rows) {
      const peer = r.peers[0];
      lines.push(
        csvRecord([
          g.preset,
          g.weights,
          g.pass,
          g.tokens,
          g.depth,
          r.rank,
          r.device,
          r.fallback,
          r.runtime,
          r.browser,
          r.tokensPerSec,
          r.medianMs,
          r.roofPct,
          r.bound,
          r.fmaGflops,
          r.copyGBps,
          peer?.name ?? null,
          peer?.tokensPerSec ?? null,
          r.status,
          r.file,
        ]),
      );
    }
  }
  return lines.join('');
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/**
 * One HTML file with nothing to fetch: inline style, no script, a bar per row scaled to the
 * group's fastest device. Every string from a result file is escaped.
 */
export function leaderboardToHtml(board: Leaderboard, skipped: readonly SkippedFile[] = []): string {
  const parts: string[] = [];
  for (const g of board.groups) {
    const top = Math.max(...g.rows.map((r) => r.tokensPerSec), 1e-9);
    const rows = g.rows
      .map(
        (r) =>
          `<tr><td class="n">${r.rank}</td><td>${escapeHtml(deviceText(r))}</td><td>${r.runtime}</td>` +
          `<td>${escapeHtml(r.browser)}</td><td class="n">${tok(r.tokensPerSec)}` +
          `<div class="bar" style="width:${((100 * r.tokensPerSec) / top).toFixed(1)}%"></div></td>` +
          `<td class="n">${r.roofPct.toFixed(1)}</td><td>${r.bound}</td>` +
          `<td class="n">${r.fmaGflops.toFixed(1)}</td><td class="n">${r.copyGBps.toFixed(1)}</td>` +
          `<td>${escapeHtml(peerText(r))}</td><td>${escapeHtml(r.file)}</td></tr>`,
      )
      .join('\n');
    const other =
      g.otherShape.length > 0
        ? `<p class="note">Not at this shape, so not ranked here: ${escapeHtml(g.otherShape.join(', '))}.</p>`
        : '';
    parts.push(
      `<h2>${escapeHtml(groupTitle(g))}</h2>\n<table><thead><tr><th>rank</th><th>device</th><th>runtime</th>` +
        '<th>browser / Dawn</th><th>tok/s</th><th>% of own roof</th><th>bound</th><th>FMA GFLOP/s</th>' +
        `<th>copy GB/s</th><th>llama.cpp at this point (this ÷ peer)</th><th>file</th></tr></thead>\n<tbody>\n${rows}\n</tbody></table>${other}`,
    );
  }
  const skippedHtml =
    skipped.length > 0
      ? `<h2>Left out</h2><ul>${skipped.map((s) => `<li>${escapeHtml(s.file)}: ${escapeHtml(s.error)}</li>`).join('')}</ul>`
      : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Device leaderboard</title>
<style>
body{font:14px system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin-bottom:1em}
th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{height:4px;background:#4a7bd0;margin-top:2px}
.note{color:#666}
</style></head><body>
<h1>Device leaderboard (${board.files} result files)</h1>
${board.unranked.length > 0 ? `<p class="note">${escapeHtml(unrankedText(board))}</p>` : ''}
${parts.join('\n') || '<p>No batch-1 prefill or decode points to rank.</p>'}
${skippedHtml}
</body></html>
`;
}

/** A file that did not validate: named with its error, never half-read. */
export interface SkippedFile {
  file: string;
  error: string;
}
