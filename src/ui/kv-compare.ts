/**
 * The KV matrices of several runs joined in one table, keyed by device × cell: one row per run and
 * (KV heads, KV type, window), sortable by any column, so the same cell on two machines sits side
 * by side when sorted by cell, and the fastest machine for a cell comes first when sorted by a time.
 */
import { KV_DTYPES, type KvDtype } from '../kv/format.ts';
import type { BenchResult } from '../results/schema.ts';
import { cellLabel, kvCellRows, longestDepth } from '../spec/workloads/kv-report.ts';
import { fixed, formatMs, MISSING } from './format.ts';
import { type Column, sortableTable } from './sortable-table.ts';

interface Row {
  run: string;
  /** The run's order, so the unsorted table lists runs as the compare list does. */
  index: number;
  model: string;
  cell: string;
  kvHeads: number;
  kvDtype: KvDtype;
  window: number | null;
  allocated: number;
  ratioToF32: number | null;
  maxContext: number;
  maxSequences: number;
  sequenceTokens: number;
  prefillMs: number;
  depth: number | null;
  decodeAttentionMs: number | null;
  tpotMs: number | null;
  /** The worst top-1 share and relative error over the cell's parts; null for a reference cell. */
  worstTop1: number | null;
  worstRelErr: number | null;
}

/** Rows of every run that has a KV matrix, in the runs' order. */
export function kvCompareRows(runs: readonly { label: string; result: BenchResult }[]): Row[] {
  return runs.flatMap(({ label, result }, index) => {
    const s = result.kv;
    if (!s) return [];
    const depth = longestDepth(s);
    return kvCellRows(s).map((r) => ({
      run: label,
      index,
      model: s.model,
      cell: cellLabel(r.cell, s.heads),
      kvHeads: r.cell.kvHeads,
      kvDtype: r.cell.kvDtype,
      window: r.cell.window,
      allocated: r.cell.allocatedBytesPerToken,
      ratioToF32: r.ratioToF32,
      maxContext: r.cell.maxContext,
      maxSequences: r.cell.maxSequences,
      sequenceTokens: r.cell.sequenceTokens,
      prefillMs: r.cell.prefillMs,
      depth,
      decodeAttentionMs: r.decodeAttentionMs,
      tpotMs: r.tpotMs,
      worstTop1: r.cell.error.length > 0 ? Math.min(...r.cell.error.map((e) => e.top1)) : null,
      worstRelErr: r.cell.error.length > 0 ? Math.max(...r.cell.error.map((e) => e.relErr)) : null,
    }));
  });
}

const orNone = (v: number | null, text: (x: number) => string) => (v === null ? MISSING : text(v));
/** Missing figures sort last, ascending. */
const sortKey = (v: number | null) => v ?? Number.POSITIVE_INFINITY;

/** The joined table, or null when no run has a KV matrix. */
export function kvCompareTable(
  runs: readonly { label: string; result: BenchResult }[],
  testId: string,
): HTMLElement | null {
  const rows = kvCompareRows(runs);
  if (rows.length === 0) return null;
  const columns: Column<Row>[] = [
    { header: 'run', cell: (r) => r.run, sortValue: (r) => r.index },
    { header: 'model', cell: (r) => r.model, sortValue: (r) => r.model },
    {
      header: 'cell',
      title:
        'KV heads (MHA, GQA, MQA), KV type and window: sort by it to put the same cell of each run together',
      cell: (r) => r.cell,
      // Most KV heads first, then f32, f16, int8, then full attention before the windows.
      sortValue: (r) =>
        [1e6 - r.kvHeads, KV_DTYPES.indexOf(r.kvDtype), r.window ?? 0]
          .map((n) => String(n).padStart(7, '0'))
          .join(' '),
    },
    {
      header: 'bytes/token',
      title: 'KV bytes per token as the allocator holds them',
      cell: (r) => fixed(r.allocated, 0),
      sortValue: (r) => r.allocated,
      numeric: true,
    },
    {
      header: '× f32',
      title: 'Against the f32 cell of the same run, KV heads and window',
      cell: (r) => orNone(r.ratioToF32, (x) => `${fixed(x, 3)}×`),
      sortValue: (r) => sortKey(r.ratioToF32),
      numeric: true,
    },
    {
      header: 'max context',
      title: 'The longest sequence the run’s fixed pool holds',
      cell: (r) => String(r.maxContext),
      sortValue: (r) => r.maxContext,
      numeric: true,
    },
    {
      header: 'max sequences',
      title: 'Sequences of the stated length the run’s fixed pool admits at once',
      cell: (r) => `${r.maxSequences} × ${r.sequenceTokens}`,
      sortValue: (r) => r.maxSequences,
      numeric: true,
    },
    {
      header: 'prefill ms',
      title: 'One prefill, wall clock',
      cell: (r) => formatMs(r.prefillMs),
      sortValue: (r) => r.prefillMs,
      numeric: true,
    },
    {
      header: 'depth',
      title: 'The longest depth of the run, where the two times are taken',
      cell: (r) => orNone(r.depth, String),
      sortValue: (r) => sortKey(r.depth),
      numeric: true,
    },
    {
      header: 'decode attention ms',
      title: 'The attention kernels of one decode step at that depth (GPU timestamps where the run had them)',
      cell: (r) => orNone(r.decodeAttentionMs, formatMs),
      sortValue: (r) => sortKey(r.decodeAttentionMs),
      numeric: true,
    },
    {
      header: 'TPOT ms',
      title: 'Time per output token at that depth, wall clock',
      cell: (r) => orNone(r.tpotMs, formatMs),
      sortValue: (r) => sortKey(r.tpotMs),
      numeric: true,
    },
    {
      header: 'worst top-1',
      title: 'The lowest top-1 agreement over the parts of the long context (none: the reference cell)',
      cell: (r) => orNone(r.worstTop1, (x) => `${fixed(x * 100, 1)} %`),
      sortValue: (r) => sortKey(r.worstTop1),
      numeric: true,
    },
    {
      header: 'worst rel err',
      title: 'The largest relative error of the logits over the parts of the long context',
      cell: (r) => orNone(r.worstRelErr, (x) => x.toExponential(2)),
      sortValue: (r) => sortKey(r.worstRelErr),
      numeric: true,
    },
  ];
  return sortableTable(columns, rows, {
    testId,
    caption:
      'Every run’s KV cells, one row per device × cell; sort by cell to put each cell’s runs together.',
  });
}
