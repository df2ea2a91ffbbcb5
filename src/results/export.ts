/**
 * A BenchResult written out as JSON, JSONL, CSV or a llama-bench-like Markdown report. Pure
 * string building with no DOM or Node imports, so the page and the CLI share it.
 *
 * Results may come from untrusted files, so every string taken from one is escaped for the
 * format it lands in: Markdown punctuation and line breaks in reports, quotes and leading
 * formula characters in CSV.
 */

import { formatError } from '../error-figure.ts';
import { isSoftwareAdapter } from '../gpu/device.ts';
import {
  escapeMarkdown,
  fixed,
  formatBytes,
  formatCount,
  formatIntensity,
  formatMs,
  MISSING,
  markdownDelimiter,
  markdownRow,
} from '../markdown.ts';
import { peersReport } from '../peers/report.ts';
import { decodeTokensPerS } from '../spec/prompt.ts';
import { sectionReports } from '../spec/workloads/index.ts';
import { HIGH_CV } from '../stats.ts';
import { decodeGen } from './peer-compare.ts';
import type { BenchResult, Point } from './schema.ts';

/** The formats a result can be exported as, by their usual file extension. */
export const EXPORT_FORMATS = ['json', 'jsonl', 'csv', 'md'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * The export format a file's name asks for, by its extension (any case): `.json`, `.jsonl`, `.csv`
 * or `.md`; null for any other extension or none, which the caller refuses rather than writing one
 * format under another's name.
 */
export function exportFormatOfPath(path: string): ExportFormat | null {
  const name = path.split(/[\\/]/).pop() ?? '';
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return null;
  const ext = name.slice(dot + 1).toLowerCase();
  return (EXPORT_FORMATS as readonly string[]).includes(ext) ? (ext as ExportFormat) : null;
}

/** Latency percentiles flattened into CSV columns, e.g. `tpotP95Ms`. */
const LATENCY_COLUMNS = (['ttft', 'tpot', 'itl'] as const).flatMap((m) =>
  (['p50', 'p95', 'p99'] as const).map((q) => ({
    metric: `${m}Ms` as const,
    q,
    column: `${m}${q.toUpperCase()}Ms`,
  })),
);

/**
 * CSV columns, in order: Point fields, except the two halves of the confidence interval and the
 * flattened latency percentiles (empty where a point has none).
 */
export const CSV_COLUMNS = [
  'pass',
  'tokens',
  'depth',
  'batch',
  'pageSize',
  'kvMode',
  'reps',
  'timebase',
  'medianMs',
  'wallMedianMs',
  'gpuMedianMs',
  'p95Ms',
  'stddevMs',
  'ci95Lo',
  'ci95Hi',
  'cv',
  'highVariance',
  'driftPct',
  'tokensPerSec',
  ...LATENCY_COLUMNS.map((c) => c.column),
  'flops',
  'bytes',
  'intensity',
  'gflops',
  'gbps',
  'bound',
  'roofPct',
  'predictedMs',
  'predictionErrorPct',
  'weightFormat',
  'graph',
] as const;

/**
 * Header of the Markdown report's main table, exactly as it is printed (and the page's table, which
 * reads the same). The columns that explain a point come first: what it was, its time on its clock,
 * its speed, then what bound it, how near that roof it came and what the cost model predicted; the
 * roofline coordinates and the other clock's medians follow, so a narrow screen still shows the
 * verdict before it scrolls.
 */
export const MARKDOWN_POINTS_HEADER =
  '| pass | L/depth | clock | ms | tok/s | bound | % roof | predicted ms | GFLOP/s | GB/s | FLOP/B | wall ms | GPU ms |';

/** Marks a point whose samples spread too widely to trust its median (Point.highVariance). */
export const HIGH_VARIANCE_MARK = '⚠';

/** What the mark means, said wherever it is shown (the report under its table, the page's tooltip). */
export const HIGH_VARIANCE_LEGEND = `${HIGH_VARIANCE_MARK} after a median: its samples' coefficient of variation (standard deviation ÷ mean) is above ${HIGH_CV * 100}%, so the median is less certain than it looks; more --reps, or a quieter machine, narrows it.`;

/** A short name for an adapter: its description, or vendor/architecture when the browser hides it. */
/** A file-name-safe slug of untrusted text (adapter names come from result files), at most `max` long. */
export function fileSlug(text: string, max = 60): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9.]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, max) || 'unknown'
  );
}

export function adapterLabel(adapter: BenchResult['env']['adapter']): string {
  return (
    adapter.description ||
    [adapter.vendor, adapter.architecture].filter(Boolean).join('/') ||
    'unknown adapter'
  );
}

/**
 * One CSV field (RFC 4180): numbers as JavaScript prints them, null as an empty field, and strings
 * quoted when they hold a comma, quote or line break. A string that a spreadsheet would read as a
 * formula (leading `=`, `+`, `-`, `@`, tab or CR) gets a leading `'` first, so opening an exported
 * file never evaluates anything a result file supplied (OWASP's advice for CSV injection).
 */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** RFC 4180 ends every record, the last included, with CRLF. */
const CSV_EOL = '\r\n';

export function csvRecord(fields: readonly (string | number | boolean | null)[]): string {
  return fields.map(csvField).join(',') + CSV_EOL;
}

/** Prefill points are named by prompt length, decode points by context depth; batch as `×B`. */
export function pointSize(p: Pick<Point, 'pass' | 'tokens' | 'depth' | 'batch'>): string {
  const n = p.pass === 'prefill' ? p.tokens : p.depth;
  return p.batch > 1 ? `${n} ×${p.batch}` : String(n);
}

/** Rate in units per second from an amount and a time in ms, with a unit scale (1e9 for GFLOP/s). */
function rate(amount: number, ms: number, unit: number): string {
  return ms > 0 ? fixed(amount / (ms * 1e-3) / unit, 1) : MISSING;
}

// ---------------------------------------------------------------------------------------------
// Exports

/** The full record, pretty-printed, ending with a newline. */
export function toJson(r: BenchResult): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}

/** One JSON object per point, with the run's preset, adapter and time, and the raw samples. */
export function toJsonl(r: BenchResult): string {
  const adapter = adapterLabel(r.env.adapter);
  return r.points
    .map((p) => `${JSON.stringify({ preset: r.model.preset, adapter, createdAt: r.createdAt, ...p })}\n`)
    .join('');
}

/** One row per point; see CSV_COLUMNS. */
export function toCsv(r: BenchResult): string {
  const rows = r.points.map((p) =>
    csvRecord(
      CSV_COLUMNS.map((column) => {
        if (column === 'graph') return p.graph ?? null;
        if (column === 'ci95Lo') return p.ci95Ms[0];
        if (column === 'ci95Hi') return p.ci95Ms[1];
        const latency = LATENCY_COLUMNS.find((c) => c.column === column);
        if (latency) return p[latency.metric]?.[latency.q] ?? null;
        return p[
          column as Exclude<
            (typeof CSV_COLUMNS)[number],
            'ci95Lo' | 'ci95Hi' | 'graph' | (typeof LATENCY_COLUMNS)[number]['column']
          >
        ];
      }),
    ),
  );
  return csvRecord(CSV_COLUMNS) + rows.join('');
}

/** A report's wording of the roofs: throughputs, the realistic and the empty dispatch, the submit. */
function peaksLine(p: BenchResult['peaks']): string {
  const ridge = p.copyGBps > 0 ? `${formatIntensity(p.fmaGflops / p.copyGBps)} FLOP/B` : MISSING;
  return `FMA ${fixed(p.fmaGflops, 1)} GFLOP/s, copy ${fixed(p.copyGBps, 1)} GB/s, dispatch ${fixed(p.dispatchUs, 1)} µs (dependent, buffers bound; empty ${fixed(p.emptyDispatchUs, 1)} µs), submit ${fixed(p.submitUs, 1)} µs; ridge point ${ridge}`;
}

function headerLines(r: BenchResult): string[] {
  const { adapter } = r.env;
  const c = r.model.config;
  const adapterDetails = [adapter.vendor, adapter.architecture, adapter.device]
    .filter(Boolean)
    .map(escapeMarkdown);
  const lines = [
    `## ${escapeMarkdown(r.tool.name)} ${escapeMarkdown(r.tool.version)}: ${escapeMarkdown(r.model.preset)}`,
    '',
    `- **Model:** ${escapeMarkdown(r.model.preset)}, ${formatCount(r.model.params)} params, ${formatBytes(r.model.weightBytes)} of weights${r.model.weightFormat && r.model.weightFormat !== 'f32' ? ` (linear layers ${r.model.weightFormat})` : ''} (d=${c.hiddenSize}, layers=${c.numLayers}, heads=${c.numHeads}/${c.numKvHeads}, ffn=${c.intermediateSize}, vocab=${c.vocabSize})`,
    ...weightTypeLines(r),
    ...graphLines(r),
    ...promptLines(r),
    `- **Adapter:** ${escapeMarkdown(adapterLabel(adapter))}${adapterDetails.length > 0 ? ` (${adapterDetails.join(' / ')})` : ''}`,
  ];
  if (adapter.isFallbackAdapter) {
    lines.push(
      '- ⚠ **Fallback/software adapter**: this ran on a CPU implementation of WebGPU; the times say nothing about a GPU.',
    );
  }
  lines.push(
    r.env.runtime?.name === 'node'
      ? `- **Runtime:** native, Node on ${escapeMarkdown(r.env.browser)}, ${escapeMarkdown(r.env.runtime.backend ?? 'default')} backend; GPU timestamps: ${timestampsText(r.env.timestamps)}`
      : `- **Browser:** ${escapeMarkdown(r.env.browser)}; GPU timestamps: ${timestampsText(r.env.timestamps)}; cross-origin isolated: ${r.env.crossOriginIsolated ? 'yes' : 'no'}`,
    `- **Clocks:** each point records both and says which placed it on the roofline. gpu = ${escapeMarkdown(r.env.clocks.gpu)}; wall = ${escapeMarkdown(r.env.clocks.wall)}`,
    `- **Roofs (before the workloads; every point is placed against these):** ${peaksLine(r.peaks)}`,
    `- **Cold start:** compile ${formatMs(r.coldStart.compileMs)} ms, load ${formatMs(r.coldStart.loadMs)} ms`,
  );
  if (r.tuning?.enabled) {
    const chosen = r.tuning.choices
      .map((c) => `${escapeMarkdown(c.op)} ${escapeMarkdown(c.chosen)}`)
      .join(', ');
    lines.push(
      `- **Kernels (autotuned${r.tuning.cached ? ', cached' : ''} in ${formatMs(r.tuning.searchMs)} ms):** ${chosen}`,
    );
  } else if (r.tuning) {
    // The capacity probe alone runs no tuned kernel family, so nothing was searched even with autotune on.
    const why = r.spec.autotune ? 'no workload of this run uses the tuned kernels' : 'autotune off';
    lines.push(`- **Kernels:** defaults (${why})`);
  }
  if (r.peaksAfter) {
    lines.push(`- **Roofs after the workloads (targets use the best of both):** ${peaksLine(r.peaksAfter)}`);
  }
  if (r.status !== 'complete') {
    lines.push(
      `- **Status: ${r.status}**${r.error ? `: ${escapeMarkdown(r.error.name)}: ${escapeMarkdown(r.error.message)}` : ''}`,
    );
  }
  const v = r.validation;
  const failed = v.checks.filter((check) => !check.passed).map((check) => escapeMarkdown(check.name));
  lines.push(
    `- **Validation:** ${v.passed ? 'passed' : '**FAILED**'} (max abs err ${formatError(v.maxAbsErr)}, max rel err ${formatError(v.maxRelErr)}; ${v.checks.length} checks${failed.length > 0 ? `; failed: ${failed.join(', ')}` : ''})`,
    `- **Created:** ${escapeMarkdown(r.createdAt)}`,
  );
  return lines;
}

/** Longest piece of a prompt the report quotes. */
const PROMPT_PREVIEW = 80;

function preview(text: string): string {
  return text.length > PROMPT_PREVIEW ? `${text.slice(0, PROMPT_PREVIEW)}…` : text;
}

/** Where the sweeps' prompt tokens came from, when a prompt text gave them. */
function promptLines(r: BenchResult): string[] {
  const p = r.spec.prompt;
  if (!p) return [];
  return [
    `- **Prompt tokens:** cut from the text of ${escapeMarkdown(p.source)} ("${escapeMarkdown(preview(p.text))}"), ${p.tokens} tokens with the model's own tokenizer: a prefill of L takes its first L tokens, a decode at depth d its first max(d, 1)`,
  ];
}

/** The text the run's model generated after its workloads (untrusted in an imported file: escaped). */
function generationLines(g: NonNullable<BenchResult['generation']>): string[] {
  const tps = decodeTokensPerS(g);
  const stop = g.stop === 'eog' ? 'stopped at an end-of-generation token' : 'stopped at the token limit';
  return [
    `**Generated text** (greedy, ${g.tokens.length} tokens after a ${g.promptTokens.length}-token prompt, ${stop}; TTFT ${formatMs(g.ttftMs)} ms${g.tpotMs === null ? '' : `, TPOT ${formatMs(g.tpotMs)} ms`}${tps === null ? '' : `, ${fixed(tps, 1)} tokens/s`}; ${escapeMarkdown(g.clock)})`,
    '',
    `> **${escapeMarkdown(preview(g.prompt))}** ${escapeMarkdown(g.text)}`,
  ];
}

/** The graph the run's model ran, and what was asked, when the file says. */
export function graphText(r: Pick<BenchResult, 'model' | 'spec'>): string | null {
  const ran = r.model.graph;
  if (!ran) return null;
  const asked = r.spec.fuse;
  if (asked === false) return `${ran} (--no-fuse)`;
  if (asked === true && ran === 'unfused')
    return 'unfused (fused asked; the chosen kernel families do not take the fusions)';
  return ran;
}

function graphLines(r: BenchResult): string[] {
  const text = graphText(r);
  const kv = kvText(r);
  return [...(text ? [`- **Graph:** ${text}`] : []), ...(kv ? [`- **KV cache:** ${kv}`] : [])];
}

/**
 * The run's KV type and window (`--kv-dtype`, `--window`) in words, when either departs from f32
 * with full attention; null otherwise (and for the KV matrix, whose cells carry their own).
 */
export function kvText(r: Pick<BenchResult, 'spec'>): string | null {
  const { dtype, window } = r.spec.kv;
  if (dtype === 'f32' && window === null) return null;
  return `${dtype} KV, ${window === null ? 'full attention' : `sliding window of ${window} tokens`}`;
}

function timestampsText(t: BenchResult['env']['timestamps']): string {
  if (!t.supported) return 'no';
  return t.quantumNs === null ? 'yes, not quantized' : `yes, quantized to ${t.quantumNs / 1000} µs`;
}

/** A time in ms, or the missing mark for a clock the point does not have. */
function optionalMs(ms: number | null): string {
  return ms === null ? MISSING : formatMs(ms);
}

/**
 * The pass as a row names it: with the weight format when the points mix formats (a format
 * sweep), so an int4 decode is never read as the f32 one, and with the graph on the fusion
 * workload's points ("decode fused"), so they are never read as the sweep's.
 */
export function passCell(points: readonly Point[]): (p: Point) => string {
  const mixed = new Set(points.map((p) => p.weightFormat ?? 'f32')).size > 1;
  return (p) => [p.pass, mixed ? (p.weightFormat ?? 'f32') : '', p.graph ?? ''].filter(Boolean).join(' ');
}

function pointsTable(points: readonly Point[]): string[] {
  const pass = passCell(points);
  return [
    MARKDOWN_POINTS_HEADER,
    markdownDelimiter('llrrrlrrrrrrr'),
    ...points.map((p) =>
      markdownRow([
        pass(p),
        pointSize(p),
        p.timebase,
        `${formatMs(p.medianMs)}${p.highVariance ? ` ${HIGH_VARIANCE_MARK}` : ''}`,
        fixed(p.tokensPerSec, 1),
        p.bound,
        fixed(p.roofPct, 1),
        formatMs(p.predictedMs),
        fixed(p.gflops, 1),
        fixed(p.gbps, 1),
        formatIntensity(p.intensity),
        formatMs(p.wallMedianMs),
        optionalMs(p.gpuMedianMs),
      ]),
    ),
  ];
}

function targetsTable(targets: NonNullable<BenchResult['targets']>): string[] {
  return [
    '| target | goal | reached | met |',
    markdownDelimiter('llll'),
    ...targets.map((t) =>
      markdownRow([
        escapeMarkdown(t.name),
        escapeMarkdown(t.target),
        escapeMarkdown(t.reached),
        t.met === null
          ? `not judged${t.note ? `: ${escapeMarkdown(t.note)}` : ''}`
          : t.met
            ? 'yes'
            : '**no**',
      ]),
    ),
  ];
}

function kernelPointsTable(points: NonNullable<BenchResult['kernelPoints']>): string[] {
  const shape = (s: Record<string, number>) =>
    escapeMarkdown(
      Object.entries(s)
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
    );
  return [
    '| kernel | variant | shape | clock | ms | wall ms | GPU ms | GFLOP/s | GB/s | bound | % roof |',
    markdownDelimiter('llllrrrrrlr'),
    ...points.map((p) =>
      markdownRow([
        escapeMarkdown(p.name),
        escapeMarkdown(p.variant),
        shape(p.shape),
        p.timebase,
        formatMs(p.medianMs),
        formatMs(p.wallMedianMs),
        optionalMs(p.gpuMedianMs),
        fixed(p.gflops, 2),
        fixed(p.gbps, 2),
        p.bound,
        fixed(p.roofPct, 1),
      ]),
    ),
  ];
}

/** Latency per point, wall clock: TTFT of each prompt length, TPOT and ITL of each depth. */
function latencyTable(points: readonly Point[]): string[] {
  const q = (x: Point['ttftMs']) =>
    x ? `${formatMs(x.p50)} / ${formatMs(x.p95)} / ${formatMs(x.p99)}` : MISSING;
  const pass = passCell(points);
  return [
    markdownRow([
      'latency (wall clock)',
      'L/depth',
      'TTFT p50/p95/p99 ms',
      'TPOT p50/p95/p99 ms',
      'ITL p50/p95/p99 ms',
    ]),
    markdownDelimiter('llrrr'),
    ...points.map((p) => markdownRow([pass(p), pointSize(p), q(p.ttftMs), q(p.tpotMs), q(p.itlMs)])),
  ];
}

/**
 * Kernels of every profiled point in one table. A kernel's share is of the point's GPU time when
 * the adapter has timestamps (kernel times are GPU times), else of its wall-clock time.
 */
function kernelTable(points: readonly Point[]): string[] {
  const pass = passCell(points);
  const rows = points.flatMap((p) => {
    const passMs = p.gpuMedianMs ?? p.medianMs;
    return p.kernels.map((k) =>
      markdownRow([
        escapeMarkdown(k.name),
        `${pass(p)} ${pointSize(p)}`,
        String(k.calls),
        formatMs(k.medianMs),
        passMs > 0 ? fixed((k.medianMs / passMs) * 100, 1) : MISSING,
        rate(k.flops, k.medianMs, 1e9),
        rate(k.bytes, k.medianMs, 1e9),
      ]),
    );
  });
  return [
    markdownRow(['kernel', 'pass L/depth', 'calls', 'ms', '% of pass', 'GFLOP/s', 'GB/s']),
    markdownDelimiter('llrrrrr'),
    ...rows,
  ];
}

/** A llama-bench-like report: run header, points table, latencies, kernels and warnings. */
export function toMarkdown(r: BenchResult): string {
  const sections = [headerLines(r)];
  if (r.targets && r.targets.length > 0) sections.push(targetsTable(r.targets));
  if (r.kernelPoints && r.kernelPoints.length > 0) sections.push(kernelPointsTable(r.kernelPoints));
  // Each workload's own section, in the registry's order.
  const own = sectionReports(r, { preset: r.model.preset });
  sections.push(...own);
  if (r.points.length > 0 || (!r.kernelPoints && own.length === 0)) {
    sections.push(r.points.length > 0 ? pointsTable(r.points) : ['No measured points.']);
    if (r.points.some((p) => p.highVariance)) sections.push([HIGH_VARIANCE_LEGEND]);
    if (r.points.length > 0) sections.push(latencyTable(r.points));
  }
  if (r.points.some((p) => p.kernels.length > 0)) sections.push(kernelTable(r.points));
  if (r.peers && r.peers.length > 0) {
    const gen = decodeGen(r);
    const adapter = `${adapterLabel(r.env.adapter)}, ${r.env.runtime?.name ?? 'browser'} runtime`;
    sections.push([peersReport(r.points, r.peers, gen, adapter, isSoftwareAdapter(r.env.adapter))]);
  }
  if (r.generation) sections.push(generationLines(r.generation));
  if (r.warnings.length > 0) {
    sections.push(['**Warnings:**', '', ...r.warnings.map((w) => `- ${escapeMarkdown(w)}`)]);
  }
  return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
}

export function formatFor(r: BenchResult, format: ExportFormat): string {
  switch (format) {
    case 'json':
      return toJson(r);
    case 'jsonl':
      return toJsonl(r);
    case 'csv':
      return toCsv(r);
    case 'md':
      return toMarkdown(r);
  }
}

/**
 * The weights by tensor type with their bits per weight, and the whole model's, as llama.cpp's
 * loader reports a file ("type q4_K: 113 tensors", "4.95 BPW"); absent in files from before.
 */
function weightTypeLines(r: BenchResult): string[] {
  const types = r.model.weightTypes;
  if (!types || r.model.bitsPerWeight === undefined) return [];
  const parts = types.map(
    (t) =>
      `${t.format} ${t.bitsPerWeight.toFixed(2)} bpw (${t.tensors} tensors, ${formatCount(t.params)} weights)`,
  );
  const gpu = (8 * r.model.weightBytes) / r.model.params;
  return [
    `- **Bits per weight:** ${r.model.bitsPerWeight.toFixed(2)} for the whole model as its file stores it, ${gpu.toFixed(2)} as the GPU holds it; by type: ${parts.join(', ')}`,
  ];
}
