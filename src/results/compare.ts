/**
 * Reading result files and comparing runs, shared by the page and `npm run compare`. Pure: the
 * caller reads the file; this validates it, joins points across runs and renders the comparison,
 * in the manner of llama.cpp's compare-llama-bench.py.
 */

import { escapeMarkdown, formatMs, markdownDelimiter, markdownRow } from '../markdown.ts';
import type { Timebase } from '../spec/fields.ts';
import type { ServeRun } from '../spec/workloads/serve-result.ts';
import { adapterLabel, csvRecord, graphText } from './export.ts';
import { migrateResult, READABLE_VERSIONS } from './migrate.ts';
import { peerComparisonMarkdown } from './peer-compare.ts';
import { type BenchResult, BenchResultSchema, type Point, SCHEMA_VERSION } from './schema.ts';

/** Limits on untrusted result files. */
export const RESULT_FILE_LIMITS = {
  /** Largest file accepted, in characters (bytes for ASCII JSON); real runs are well under 1 MB. */
  maxChars: 50 * 1024 * 1024,
  /** Longest excerpt of file content quoted back in an error message. */
  maxQuotedChars: 200,
} as const;

/** Tolerances of the regression gate. */
const REGRESSION_GATE = {
  /**
   * Slack, in percentage points, under which a slowdown counts as "exactly at" the limit: a
   * ratio of two rounded floats is rarely exact (1.1·x / x − 1 is 0.10000000000000009), and a
   * point exactly at the limit must pass.
   */
  epsilonPct: 1e-9,
} as const;

/** A result file that cannot be read: not JSON, the wrong schema version, or invalid. */
export class ResultFileError extends Error {
  override readonly name = 'ResultFileError';
}

function clip(text: string): string {
  const max = RESULT_FILE_LIMITS.maxQuotedChars;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A scalar quoted back as itself, anything else by its kind, so an error never echoes a whole file. */
function describeValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return JSON.stringify(clip(value));
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/**
 * Rejects a file too large to be a result. Callers that can see the size before reading (a
 * File in the page, stat in the CLI) call it first, so a huge file is never read into memory.
 */
export function checkResultFileSize(size: number, fileName: string): void {
  if (size > RESULT_FILE_LIMITS.maxChars) {
    const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
    throw new ResultFileError(
      `${fileName}: ${mb(size)} MB is too large for a result file (the limit is ${mb(RESULT_FILE_LIMITS.maxChars)} MB)`,
    );
  }
}

/**
 * Validates an untrusted result file. Every failure throws ResultFileError with the file name
 * and the first problem, e.g. `b.json: points.3.medianMs: Invalid input: expected number, received string`.
 */
export function parseResultFile(text: string, fileName: string): BenchResult {
  checkResultFileSize(text.length, fileName);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ResultFileError(`${fileName}: not valid JSON: ${clip((e as Error).message)}`);
  }
  // Older files are brought to this version first; a version this build cannot read explains
  // every later schema error, so it is reported on its own.
  data = migrateResult(data);
  if (
    typeof data === 'object' &&
    data !== null &&
    'schemaVersion' in data &&
    data.schemaVersion !== SCHEMA_VERSION
  ) {
    throw new ResultFileError(
      `${fileName}: schemaVersion ${describeValue(data.schemaVersion)} is not supported; this version reads schemaVersion ${READABLE_VERSIONS.join(' and ')}`,
    );
  }
  const parsed = BenchResultSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.map(String).join('.') || '(root)';
    throw new ResultFileError(`${fileName}: ${clip(path)}: ${clip(issue.message)}`);
  }
  return parsed.data;
}

/** What identifies a point across runs. Page size and KV mode are left out on purpose, so runs that differ in them can be compared. */
export interface PointKey {
  preset: string;
  pass: Point['pass'];
  tokens: number;
  depth: number;
  batch: number;
  /** The weight format: an int4 point is never compared with an f32 one as if they were the same. */
  weights: string;
  /**
   * The graph of a fusion-workload point ('fused' or 'unfused'), null on every other point. The
   * sweeps' points carry none, so a run and its `--no-fuse` twin join point for point (as runs that
   * differ in page size do); the fusion workload's two graphs never join each other.
   */
  graph: string | null;
}

export interface ComparedFile {
  name: string;
  result: BenchResult;
}

/** One joined point. Arrays are indexed by file; `speedup[i - 1]` is file i against file 0. */
export interface ComparisonRow {
  key: PointKey;
  /**
   * The clock compared: 'gpu' when every file placed this point by GPU time, else 'wall' (every
   * point has a wall time), so a row never divides one clock by the other.
   */
  clock: Timebase;
  /** Median time in each file on that clock, ms; null where the file lacks the point. */
  medianMs: (number | null)[];
  tokensPerSec: (number | null)[];
  /** median0 / median_i: above 1, file i is faster than file 0. Null unless both have the point. */
  speedup: (number | null)[];
}

export interface Comparison {
  files: ComparedFile[];
  rows: ComparisonRow[];
  /** Things the reader should know, e.g. a file with two points under one key. */
  warnings: string[];
}

function keyOf(preset: string, p: Point): PointKey {
  return {
    preset,
    pass: p.pass,
    tokens: p.tokens,
    depth: p.depth,
    batch: p.batch,
    weights: p.weightFormat ?? 'f32',
    graph: p.graph ?? null,
  };
}

function keyId(k: PointKey): string {
  return JSON.stringify([k.preset, k.pass, k.tokens, k.depth, k.batch, k.weights, k.graph]);
}

/** What makes two points of one model the same point: pass, size, batch, weight format and graph. */
export function pointId(p: Point): string {
  return keyId(keyOf('', p));
}

/** The pass, with the weight format when it is not f32 ("decode int4") and the graph where the point has one ("decode fused"). */
function passLabel(k: PointKey): string {
  return [k.pass, k.weights === 'f32' ? '' : k.weights, k.graph ?? ''].filter(Boolean).join(' ');
}

/** A point key for people: `smollm2-135m prefill L=256 B=1`, or without the preset. */
export function formatPointKey(k: PointKey, withPreset = true): string {
  const size = k.pass === 'prefill' ? `L=${k.tokens}` : `depth=${k.depth}`;
  return `${withPreset ? `${k.preset} ` : ''}${passLabel(k)} ${size} B=${k.batch}`;
}

/**
 * Joins the points of several runs on (preset, pass, tokens, depth, batch). Rows are grouped by
 * preset in order of first appearance, prefill (by L) before decode (by depth), then by batch.
 * Within one file the first point under a key is used, with a warning about the rest.
 */
export function compareResults(files: readonly ComparedFile[]): Comparison {
  const warnings: string[] = [];
  const keys = new Map<string, PointKey>();
  const byFile = files.map(({ name, result }) => {
    const points = new Map<string, Point>();
    for (const p of result.points) {
      const key = keyOf(result.model.preset, p);
      const id = keyId(key);
      if (points.has(id)) {
        warnings.push(`${name}: more than one point for ${formatPointKey(key)}; comparing the first`);
        continue;
      }
      points.set(id, p);
      if (!keys.has(id)) keys.set(id, key);
    }
    return points;
  });

  const presetOrder = [...new Set([...keys.values()].map((k) => k.preset))];
  const passOrder: Record<Point['pass'], number> = { prefill: 0, decode: 1 };
  // The sweep's point, then the fusion workload's fused and unfused ones.
  const graphOrder = (k: PointKey) => (k.graph === null ? 0 : k.graph === 'fused' ? 1 : 2);
  const sorted = [...keys.entries()].sort(([, a], [, b]) => {
    const major = (k: PointKey) => (k.pass === 'prefill' ? k.tokens : k.depth);
    const minor = (k: PointKey) => (k.pass === 'prefill' ? k.depth : k.tokens);
    return (
      presetOrder.indexOf(a.preset) - presetOrder.indexOf(b.preset) ||
      passOrder[a.pass] - passOrder[b.pass] ||
      major(a) - major(b) ||
      a.batch - b.batch ||
      minor(a) - minor(b) ||
      graphOrder(a) - graphOrder(b)
    );
  });

  const rows = sorted.map(([id, key]): ComparisonRow => {
    const found = byFile.map((points) => points.get(id) ?? null);
    const clock: Timebase = found.every((p) => p === null || p.timebase === 'gpu') ? 'gpu' : 'wall';
    const medianMs = found.map((p) => (p === null ? null : clock === 'gpu' ? p.medianMs : p.wallMedianMs));
    const base = medianMs[0];
    return {
      key,
      clock,
      medianMs,
      tokensPerSec: found.map((p) => p?.tokensPerSec ?? null),
      speedup: medianMs.slice(1).map((ms) => (base !== null && ms !== null && ms > 0 ? base / ms : null)),
    };
  });
  // Points are joined whatever KV type and window their runs used (a KV comparison is the point of
  // such a join), so say when they differ.
  const kv = new Set(files.map(({ result }) => `${result.spec.kv.dtype} ${result.spec.kv.window}`));
  if (kv.size > 1)
    warnings.push(
      `The runs use different KV types or windows (${files.map(({ name, result }) => `${name}: ${result.spec.kv.dtype}, window ${result.spec.kv.window ?? 'none'}`).join('; ')}): their points are joined as they are.`,
    );
  return { files: [...files], rows, warnings };
}

export interface Regression {
  key: PointKey;
  baselineMs: number;
  candidateMs: number;
  /** (candidate / baseline − 1) · 100. */
  slowdownPct: number;
}

/**
 * Points of the second file (the candidate) more than `maxRegressionPct` percent slower than the
 * same point in the first (the baseline). Points missing from either file are not judged.
 */
export function findRegressions(cmp: Comparison, maxRegressionPct: number): Regression[] {
  if (cmp.files.length !== 2) {
    throw new RangeError(
      `a regression check needs exactly two files (baseline, candidate), got ${cmp.files.length}`,
    );
  }
  return cmp.rows.flatMap((row): Regression[] => {
    const [baselineMs, candidateMs] = row.medianMs;
    if (baselineMs === null || candidateMs === null) return [];
    const slowdownPct =
      baselineMs > 0 ? (candidateMs / baselineMs - 1) * 100 : candidateMs > 0 ? Number.POSITIVE_INFINITY : 0;
    return slowdownPct > maxRegressionPct + REGRESSION_GATE.epsilonPct
      ? [{ key: row.key, baselineMs, candidateMs, slowdownPct }]
      : [];
  });
}

function formatSpeedup(s: number | null): string {
  return s === null ? '–' : s.toFixed(2);
}

/** Files as a list with adapter, browser and time, then one table row per joined point. */
export function comparisonToMarkdown(cmp: Comparison): string {
  const fileLines = cmp.files.map(({ name, result: r }, i) => {
    const status = r.status === 'complete' ? '' : `, **${r.status}**`;
    const fallback = r.env.adapter.isFallbackAdapter ? ' ⚠ **fallback/software adapter**' : '';
    const graph = graphText(r);
    return `${i + 1}. ${escapeMarkdown(name)}: ${escapeMarkdown(adapterLabel(r.env.adapter))}${fallback}, ${escapeMarkdown(r.env.browser)}, ${escapeMarkdown(r.model.preset)}${graph ? `, graph ${escapeMarkdown(graph)}` : ''}, ${escapeMarkdown(r.createdAt)}${status}`;
  });
  const names = cmp.files.map((f) => escapeMarkdown(f.name));
  // Rows need a preset column only when the files mix presets.
  const withPreset = new Set(cmp.rows.map((r) => r.key.preset)).size > 1;
  const keyHeaders = [...(withPreset ? ['preset'] : []), 'pass', 'L/depth', 'B', 'clock'];
  const header = [
    ...keyHeaders,
    ...names.map((n) => `${n} ms`),
    ...names.slice(1).map((n) => `${n}/${names[0]} speedup`),
  ];
  // Preset and pass are text, then size and batch (numbers), the clock (text), times and ratios.
  const lead = withPreset ? 'll' : 'l';
  const alignment = `${lead}rrl${'r'.repeat(header.length - lead.length - 3)}`;
  const rows = cmp.rows.map((row) =>
    markdownRow([
      ...(withPreset ? [escapeMarkdown(row.key.preset)] : []),
      passLabel(row.key),
      String(row.key.pass === 'prefill' ? row.key.tokens : row.key.depth),
      String(row.key.batch),
      row.clock,
      ...row.medianMs.map((ms) => (ms === null ? '–' : formatMs(ms))),
      ...row.speedup.map(formatSpeedup),
    ]),
  );
  const serve = serveComparison(cmp.files);
  const peers = peerComparisonMarkdown(cmp.files);
  const sections = [
    fileLines,
    rows.length > 0
      ? [markdownRow(header), markdownDelimiter(alignment), ...rows]
      : serve.length > 0
        ? []
        : ['No measured points.'],
    peers,
    ...(serve.length > 0 ? [serve] : []),
  ].filter((lines) => lines.length > 0);
  if (cmp.warnings.length > 0) sections.push(cmp.warnings.map((w) => `- ${escapeMarkdown(w)}`));
  return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

/** One row per joined point: key, each file's median ms and tok/s, then the speed-ups. */
export function comparisonToCsv(cmp: Comparison): string {
  const names = cmp.files.map((f) => f.name);
  const header = [
    'preset',
    'pass',
    'tokens',
    'depth',
    'batch',
    'graph',
    'clock',
    ...names.map((n) => `${n} ms`),
    ...names.map((n) => `${n} tok/s`),
    ...names.slice(1).map((n) => `${n}/${names[0]} speedup`),
  ];
  const rows = cmp.rows.map((row) =>
    csvRecord([
      row.key.preset,
      row.key.pass,
      row.key.tokens,
      row.key.depth,
      row.key.batch,
      row.key.graph,
      row.clock,
      ...row.medianMs,
      ...row.tokensPerSec,
      ...row.speedup,
    ]),
  );
  return csvRecord(header) + rows.join('');
}

/**
 * Load tests side by side: one row per arm label (continuous, static, a swept rate…) found in any
 * file, with each file's output tokens/s, goodput and p95 TTFT and TPOT; a dash where a file has no
 * such arm. Arms are matched by label only: the traces may differ, and the files' headers say how.
 */
export function serveComparison(files: readonly ComparedFile[]): string[] {
  const withServe = files.filter((f) => f.result.serve);
  if (withServe.length === 0) return [];
  const labels = [...new Set(withServe.flatMap((f) => f.result.serve?.runs.map((r) => r.label) ?? []))];
  const names = files.map((f) => escapeMarkdown(f.name));
  const cell = (f: ComparedFile, label: string, pick: (r: ServeRun) => string) => {
    const run = f.result.serve?.runs.find((r) => r.label === label);
    return run ? pick(run) : '–';
  };
  const p95 = (d: ServeRun['summary']['ttftMs']) => (d ? formatMs(d.p95) : '–');
  return [
    '**Load tests** (arms matched by label; each file has its own trace and hardware)',
    '',
    markdownRow([
      'arm',
      ...names.map((n) => `${n} out tok/s`),
      ...names.map((n) => `${n} goodput req/s`),
      ...names.map((n) => `${n} TTFT p95 ms`),
      ...names.map((n) => `${n} TPOT p95 ms`),
    ]),
    markdownDelimiter(`l${'r'.repeat(names.length * 4)}`),
    ...labels.map((label) =>
      markdownRow([
        escapeMarkdown(label),
        ...files.map((f) => cell(f, label, (r) => r.summary.outputTokensPerSec.toFixed(1))),
        ...files.map((f) => cell(f, label, (r) => r.summary.goodputRps.toFixed(2))),
        ...files.map((f) => cell(f, label, (r) => p95(r.summary.ttftMs))),
        ...files.map((f) => cell(f, label, (r) => p95(r.summary.tpotMs))),
      ]),
    ),
  ];
}
