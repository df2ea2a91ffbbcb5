import type { CapacityEstimate, CapacityInput } from './estimate.ts';
import type { CapacityModel } from './model.ts';

/** Everything `npm run capacity -- --format json` prints: the model, the inputs, and the estimate. */
export interface CapacityReport extends CapacityEstimate {
  modelShape: CapacityModel;
  input: CapacityInput;
}

const GB = 1e9;
const GIB = 2 ** 30;

/** Bytes exactly, then in GB and GiB (both, since both are quoted and they differ by 7%). */
export function bytesText(n: number): string {
  return `${Math.round(n).toLocaleString('en-US')} B (${(n / GB).toFixed(2)} GB, ${(n / GIB).toFixed(2)} GiB)`;
}

function ms(n: number | null): string {
  return n === null ? '—' : n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(4);
}

function count(n: number | null, digits = 0): string {
  return n === null
    ? '—'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function pct(n: number | null): string {
  return n === null ? '—' : Number.isFinite(n) ? `${(n * 100).toFixed(1)}%` : '∞';
}

/**
 * KV bytes per token, and for a scaled type how many of them are scales: int8's scales are part
 * of what the cache stores, so they are counted, and shown apart so the figure can be checked.
 */
function kvPerTokenText(r: CapacityReport): string {
  const i = r.input;
  const scales =
    r.kvScaleBytesPerToken > 0
      ? `${count(r.kvBytesPerToken - r.kvScaleBytesPerToken)} of values + ${count(r.kvScaleBytesPerToken)} of f32 scales (one per token, layer, KV head, K or V); `
      : '';
  return `${count(r.kvBytesPerToken)} (${i.kvDtype}: ${scales}${r.kvRatioToF32.toFixed(3)}× f32; MHA would need ${count(r.kvBytesPerTokenMha)}, GQA keeps ${(r.gqaRatio * 100).toFixed(1)}%)`;
}

/** The window, and what it keeps of each class: tokens, and pages at their most. */
function windowText(r: CapacityReport, w: number): string {
  const kept = r.classes.map(
    (c) =>
      `${c.name} keeps ${count(c.heldTokens)} of ${count(c.tokens)}${c.heldTokens < c.tokens ? ' (capped)' : ''}, at most ${count(c.pagesPerSession)} pages of ${r.input.pageSize}`,
  );
  return `${count(w)} tokens: ${kept.join('; ')}`;
}

/** Tokens a class's KV row counts: the held ones, and the whole length when the window cut it. */
function classTokensText(c: CapacityReport['classes'][number]): string {
  return c.heldTokens < c.tokens
    ? `${count(c.heldTokens)} of ${count(c.tokens)} tokens (window)`
    : `${count(c.tokens)} tokens`;
}

/** The report as [label, value] rows, in reading order; the table and Markdown forms share them. */
export function capacityRows(r: CapacityReport): [string, string][] {
  const m = r.modelShape;
  const i = r.input;
  const windowRow: [string, string][] =
    i.window === undefined ? [] : [['sliding window', windowText(r, i.window)]];
  return [
    [
      'model',
      `${m.name}: ${m.layers} layers, ${m.heads} heads / ${m.kvHeads} KV heads × ${m.headDim}, d ${m.hidden}, ffn ${m.intermediate}, vocab ${m.vocab}, context ${m.contextLength}`,
    ],
    [
      'parameters',
      `${count(r.model.params)}${r.model.weightsExact ? ' (weights from the file’s tensor table)' : ` (${i.weights})`}`,
    ],
    [
      'traffic',
      `${i.sessions} sessions, ${i.input} in + ${i.output} out tokens, ${pct(i.longShare)} long at ${i.longFactor}×${i.rps ? `, peak ${i.rps} req/s` : ''}`,
    ],
    ['GPUs', `${i.gpus} × ${bytesText(i.gpuMem)}, headroom ${i.headroom}`],
    ['KV bytes per token', kvPerTokenText(r)],
    ...windowRow,
    ['KV per mean request', `${bytesText(r.kvBytesPerRequest)}; MHA ${bytesText(r.kvBytesPerRequestMha)}`],
    ['weights', bytesText(r.weightsBytes)],
    ...r.classes.map((c): [string, string] => [
      `KV, ${c.name} sessions`,
      `${c.sessions} × ${classTokensText(c)} = ${bytesText(c.kvBytes)}`,
    ]),
    ['KV total', bytesText(r.kvBytesTotal)],
    ['total', bytesText(r.totalBytes)],
    ['GPUs needed', `${r.gpusNeeded} (usable ${bytesText(r.usableBytesPerGpu)} each)`],
    ['KV budget on the GPUs given', bytesText(Math.max(0, r.kvBudgetBytes))],
    [
      'max concurrency',
      `paged ${count(r.maxConcurrency.paged)} (pages of ${i.pageSize}), contiguous ${count(r.maxConcurrency.contiguous)} (${count(r.contiguousReserve)} tokens reserved each)${r.maxConcurrency.contiguous > 0 ? `: ${(r.maxConcurrency.paged / r.maxConcurrency.contiguous).toFixed(2)}×` : ''}`,
    ],
    [
      'prefill per request',
      `${ms(r.prefillMs)} ms${r.prefillMsLong === null ? '' : `; long ${ms(r.prefillMsLong)} ms`}`,
    ],
    ['TPOT', `${ms(r.tpotMs)} ms at batch ${r.expectedBatch}`],
    [
      'throughput',
      `${count(r.throughputTokensPerSec, 1)} output tokens/s, ${count(r.requestsPerSec, 2)} requests/s`,
    ],
    [
      'utilization',
      `KV memory ${pct(r.utilization.kvMemory)}, prefill ${pct(r.utilization.prefill)}, decode ${pct(r.utilization.decode)}`,
    ],
    ['bottleneck', r.bottleneck ?? '— (needs roofs to compare compute and bandwidth)'],
  ];
}

export function capacityText(r: CapacityReport): string {
  const rows = capacityRows(r);
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  return [...lines, ...r.notes.map((n) => `note: ${n}`)].join('\n');
}

export function capacityMarkdown(r: CapacityReport): string {
  const cell = (s: string) => s.replaceAll('|', '\\|');
  return [
    '| quantity | value |',
    '| --- | --- |',
    ...capacityRows(r).map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`),
    '',
    ...r.notes.map((n) => `- ${n}`),
  ].join('\n');
}
