/**
 * The KV matrix's figures as the report and the page read them: each cell's row (its bytes against
 * the f32 cell's, its times at the longest depth), the targets judged from the cells, and the
 * Markdown report. Pure: everything here is computed from the section alone.
 */
import type { KvDtype } from '../../kv/format.ts';
import { escapeMarkdown, fixed, formatMs, MISSING, markdownDelimiter, markdownRow } from '../../markdown.ts';
import { taskQualityTable } from './formats.ts';
import { ERROR_BUCKETS, type KvCell, type KvSection } from './kv-result.ts';

/** The window as the tables write it. */
export function windowText(window: number | null): string {
  return window === null ? 'none' : String(window);
}

/** What a KV head count is for this model: MHA (one per query head), MQA (one), else GQA. */
export function groupingName(kvHeads: number, heads: number): 'MHA' | 'GQA' | 'MQA' {
  if (kvHeads === heads) return 'MHA';
  return kvHeads === 1 ? 'MQA' : 'GQA';
}

/** A cell in a few words: "GQA 3 · int8 · window 64". */
export function cellLabel(c: Pick<KvCell, 'kvHeads' | 'kvDtype' | 'window'>, heads: number): string {
  const window = c.window === null ? 'full' : `window ${c.window}`;
  return `${groupingName(c.kvHeads, heads)} ${c.kvHeads} · ${c.kvDtype} · ${window}`;
}

/** The cell of `kvHeads`, `kvDtype` and `window`, if the section has it. */
export function findCell(
  s: KvSection,
  kvHeads: number,
  kvDtype: KvDtype,
  window: number | null,
): KvCell | undefined {
  return s.cells.find((c) => c.kvHeads === kvHeads && c.kvDtype === kvDtype && c.window === window);
}

/** The value at `depth` of a per-depth list, or null. */
export function atDepth(list: readonly { depth: number; ms: number }[], depth: number): number | null {
  return list.find((x) => x.depth === depth)?.ms ?? null;
}

/** The longest depth any cell was timed at (the depth the tables report); null when none was. */
export function longestDepth(s: KvSection): number | null {
  const depths = s.cells.flatMap((c) => [...c.tpotMs, ...c.decodeAttentionMs].map((x) => x.depth));
  return depths.length > 0 ? Math.max(...depths) : null;
}

/** One cell as the tables show it. */
export interface KvCellRow {
  cell: KvCell;
  /** allocatedBytesPerToken ÷ the f32 cell's of the same kvHeads and window; null without that cell. */
  ratioToF32: number | null;
  /** Decode attention and TPOT at the section's longest depth; null where the cell has none there. */
  decodeAttentionMs: number | null;
  tpotMs: number | null;
}

export function kvCellRows(s: KvSection): KvCellRow[] {
  const depth = longestDepth(s);
  return s.cells.map((cell) => {
    const f32 = findCell(s, cell.kvHeads, 'f32', cell.window);
    return {
      cell,
      ratioToF32:
        f32 && f32.allocatedBytesPerToken > 0
          ? cell.allocatedBytesPerToken / f32.allocatedBytesPerToken
          : null,
      decodeAttentionMs: depth === null ? null : atDepth(cell.decodeAttentionMs, depth),
      tpotMs: depth === null ? null : atDepth(cell.tpotMs, depth),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Targets

/** One of the targets, judged from the cells. */
export interface KvTarget {
  name: string;
  /** The goal, in words. */
  goal: string;
  /** The worst figure over the cells it applies to; null when the cells it needs are missing. */
  figure: number | null;
  /** What the figure counts: a ratio of two cells, pages, or a share (0…1). */
  unit: 'ratio' | 'pages' | 'share';
  /** The bound the figure is held against (the exact value, for the equalities). */
  limit: number;
  /** null: not judged (the cells it needs are not in the section). */
  met: boolean | null;
  /** Which cells gave the figure, or which are missing. */
  note: string;
}

/** Relative slack of the exact ratios (f16 0.5×, MQA 1/heads): the division's rounding, no more. */
const EXACT = 1e-12;
/** Decode attention at depth 4·W against at W: within this share. */
export const WINDOW_TIME_BAND = 0.15;
/** int8 decode attention at the longest depth, at most this share of f32's. */
export const INT8_ATTENTION_LIMIT = 0.6;

/** A figure of one cell or pair of cells, with the words that say which. */
interface Sample {
  figure: number;
  where: string;
}

interface Rule {
  name: string;
  goal: string;
  unit: KvTarget['unit'];
  limit: number;
  /** Whether one sample meets the target. */
  pass: (x: number) => boolean;
  /** How far one sample is from the goal: the largest is the figure reported. */
  badness: (x: number) => number;
  /** Why it is not judged when there is no sample. */
  missing: string;
}

/** The target from its samples: the worst one is the figure; met when every one passes. */
function judge(rule: Rule, samples: readonly Sample[]): KvTarget {
  const { name, goal, unit, limit } = rule;
  if (samples.length === 0) return { name, goal, unit, limit, figure: null, met: null, note: rule.missing };
  const worst = samples.reduce((a, b) => (rule.badness(b.figure) > rule.badness(a.figure) ? b : a));
  return {
    name,
    goal,
    unit,
    limit,
    figure: worst.figure,
    met: samples.every((x) => rule.pass(x.figure)),
    note: samples.length === 1 ? worst.where : `worst of ${samples.length}: ${worst.where}`,
  };
}

/** Ratios of `dtype` cells' allocated bytes per token to the f32 cell of the same kvHeads and window. */
function bytesAgainstF32(s: KvSection, dtype: KvDtype): Sample[] {
  return s.cells.flatMap((c) => {
    if (c.kvDtype !== dtype) return [];
    const f32 = findCell(s, c.kvHeads, 'f32', c.window);
    if (!f32 || f32.allocatedBytesPerToken <= 0) return [];
    return [{ figure: c.allocatedBytesPerToken / f32.allocatedBytesPerToken, where: cellLabel(c, s.heads) }];
  });
}

/** MQA cells' allocated bytes per token against the MHA cell of the same type and window. */
function mqaAgainstMha(s: KvSection): Sample[] {
  if (s.heads === 1) return [];
  return s.cells.flatMap((c) => {
    if (c.kvHeads !== 1) return [];
    const mha = findCell(s, s.heads, c.kvDtype, c.window);
    if (!mha || mha.allocatedBytesPerToken <= 0) return [];
    return [
      {
        figure: c.allocatedBytesPerToken / mha.allocatedBytesPerToken,
        where: `${c.kvDtype}, window ${windowText(c.window)}`,
      },
    ];
  });
}

type Windowed = KvCell & { window: number };

/** Pages at depth 4·W less pages at W, per windowed cell that counted both. */
function windowPages(s: KvSection, windowed: readonly Windowed[]): Sample[] {
  return windowed.flatMap((c) => {
    const atW = c.pagesAt.find((p) => p.depth === c.window);
    const at4W = c.pagesAt.find((p) => p.depth === 4 * c.window);
    if (!atW || !at4W) return [];
    return [
      {
        figure: at4W.pages - atW.pages,
        where: `${cellLabel(c, s.heads)}: ${at4W.pages} pages at ${4 * c.window}, ${atW.pages} at ${c.window}`,
      },
    ];
  });
}

/** Decode attention at depth 4·W over at W, per windowed cell timed at both. */
function windowTimes(s: KvSection, windowed: readonly Windowed[]): Sample[] {
  return windowed.flatMap((c) => {
    const atW = atDepth(c.decodeAttentionMs, c.window);
    const at4W = atDepth(c.decodeAttentionMs, 4 * c.window);
    if (atW === null || at4W === null || atW <= 0) return [];
    return [{ figure: at4W / atW, where: cellLabel(c, s.heads) }];
  });
}

/** int8 decode attention over f32's at the longest depth both were timed at, full attention. */
function int8Attention(s: KvSection): Sample[] {
  return s.cells.flatMap((c) => {
    if (c.kvDtype !== 'int8' || c.window !== null) return [];
    const f32 = findCell(s, c.kvHeads, 'f32', null);
    if (!f32) return [];
    const common = c.decodeAttentionMs
      .map((x) => x.depth)
      .filter((d) => (atDepth(f32.decodeAttentionMs, d) ?? 0) > 0);
    if (common.length === 0) return [];
    const depth = Math.max(...common);
    const ratio = (atDepth(c.decodeAttentionMs, depth) ?? 0) / (atDepth(f32.decodeAttentionMs, depth) ?? 1);
    return [{ figure: ratio, where: `${cellLabel(c, s.heads)} at depth ${depth}` }];
  });
}

/**
 * The targets, from the cells alone (same run):
 * - f16 KV: allocated bytes per token exactly 0.5× the f32 cell of the same kvHeads and window;
 * - int8 KV: at most (headDim + 4) ÷ (4 · headDim) of it (one f32 scale per token and KV head);
 * - MQA (kvHeads 1): exactly 1/heads of MHA (kvHeads = heads), same type and window;
 * - a window W: pages at depth 4·W at most those at W plus one, and decode attention at 4·W within
 *   15 % of at W;
 * - int8 decode attention at the longest depth both were timed at ≤ 0.6× f32's (full attention);
 * - f16 top-1 agreement 100 % in every part of the context (full attention: a window's error is
 *   the window's own);
 * - int8's error table filled: every part, for every full-attention int8 cell.
 * Each is judged on every cell (or pair) it applies to, and met when all pass; the figure is the
 * worst of them. A target whose cells are missing is not judged (met null).
 */
export function kvTargets(s: KvSection): KvTarget[] {
  const int8Limit = (s.headDim + 4) / (4 * s.headDim);
  const oneOver = 1 / s.heads;
  const windowed = s.cells.filter((c): c is Windowed => c.window !== null);
  const full = s.cells.filter((c) => c.window === null);
  return [
    judge(
      {
        name: 'f16 KV bytes per token against f32 (allocator)',
        goal: '= 0.500×',
        unit: 'ratio',
        limit: 0.5,
        pass: (x) => Math.abs(x - 0.5) <= EXACT,
        badness: (x) => Math.abs(x - 0.5),
        missing: 'no f16 cell with an f32 cell of the same KV heads and window',
      },
      bytesAgainstF32(s, 'f16'),
    ),
    judge(
      {
        name: 'int8 KV bytes per token against f32 (allocator, scales included)',
        goal: `≤ ${fixed(int8Limit, 3)}× ((head_dim + 4) ÷ (4 · head_dim))`,
        unit: 'ratio',
        limit: int8Limit,
        pass: (x) => x <= int8Limit * (1 + EXACT),
        badness: (x) => x,
        missing: 'no int8 cell with an f32 cell of the same KV heads and window',
      },
      bytesAgainstF32(s, 'int8'),
    ),
    judge(
      {
        name: 'MQA KV bytes per token against MHA (allocator)',
        goal: `= 1/${s.heads} (${fixed(oneOver, 3)}×)`,
        unit: 'ratio',
        limit: oneOver,
        pass: (x) => Math.abs(x - oneOver) <= EXACT * oneOver,
        badness: (x) => Math.abs(x - oneOver),
        missing: `no MQA (1 KV head) cell with an MHA (${s.heads} KV heads) cell of the same type and window`,
      },
      mqaAgainstMha(s),
    ),
    judge(
      {
        name: 'Window: pages one sequence holds at depth 4·W, beyond those at W',
        goal: '≤ 1 page',
        unit: 'pages',
        limit: 1,
        pass: (x) => x <= 1,
        badness: (x) => x,
        missing: 'no windowed cell with its pages counted at depths W and 4·W',
      },
      windowPages(s, windowed),
    ),
    judge(
      {
        name: 'Window: decode attention time at depth 4·W against at W',
        goal: `within ${WINDOW_TIME_BAND * 100} % (${fixed(1 - WINDOW_TIME_BAND, 2)}…${fixed(1 + WINDOW_TIME_BAND, 2)}×)`,
        unit: 'ratio',
        limit: 1 + WINDOW_TIME_BAND,
        pass: (x) => Math.abs(x - 1) <= WINDOW_TIME_BAND,
        badness: (x) => Math.abs(x - 1),
        missing: 'no windowed cell with decode attention timed at depths W and 4·W',
      },
      windowTimes(s, windowed),
    ),
    judge(
      {
        name: 'int8 decode attention time at the longest depth against f32',
        goal: `≤ ${INT8_ATTENTION_LIMIT}×`,
        unit: 'ratio',
        limit: INT8_ATTENTION_LIMIT,
        pass: (x) => x <= INT8_ATTENTION_LIMIT,
        badness: (x) => x,
        missing: 'no full-attention int8 cell with its f32 cell timed at a common depth',
      },
      int8Attention(s),
    ),
    judge(
      {
        name: 'f16 KV top-1 agreement with f32 KV, every part of the context',
        goal: '= 100 %',
        unit: 'share',
        limit: 1,
        pass: (x) => x === 1,
        badness: (x) => 1 - x,
        missing: 'no full-attention f16 cell with its error measured',
      },
      full
        .filter((c) => c.kvDtype === 'f16')
        .flatMap((c) =>
          c.error.map((e) => ({ figure: e.top1, where: `${cellLabel(c, s.heads)}, ${e.bucket} fifth` })),
        ),
    ),
    judge(
      {
        name: 'int8 KV error table filled (first, middle and last fifths)',
        goal: 'every part',
        unit: 'share',
        limit: 1,
        pass: (x) => x === 1,
        badness: (x) => 1 - x,
        missing: 'no full-attention int8 cell',
      },
      full
        .filter((c) => c.kvDtype === 'int8')
        .map((c) => ({
          figure: new Set(c.error.map((e) => e.bucket)).size / ERROR_BUCKETS.length,
          where: cellLabel(c, s.heads),
        })),
    ),
  ];
}

/** A target's figure as the tables write it. */
export function figureText(t: KvTarget): string {
  if (t.figure === null) return MISSING;
  if (t.unit === 'pages') return `${t.figure} page${t.figure === 1 ? '' : 's'}`;
  if (t.unit === 'share') return `${fixed(t.figure * 100, 1)} %`;
  return `${fixed(t.figure, 3)}×`;
}

/**
 * The targets in the shape of the result's `targets` (name, target, reached, met, note), for the
 * runner's engine to return from its `targets`.
 */
export function kvResultTargets(
  s: KvSection,
): { name: string; target: string; reached: string; met: boolean | null; note?: string }[] {
  return kvTargets(s).map((t) =>
    t.met === null
      ? { name: t.name, target: t.goal, reached: MISSING, met: null, note: t.note }
      : { name: t.name, target: t.goal, reached: `${figureText(t)} (${t.note})`, met: t.met },
  );
}

// ---------------------------------------------------------------------------------------------
// Report

export const KV_CAPTION = 'KV cache: heads shared, element types and a sliding window, on one model shape';

/** What each column of the cell table means, for the report and the page. */
export const KV_DEFINITIONS =
  'bytes/token: KV bytes one token costs over all layers, K and V, int8’s scales included, calculated and as the allocator holds them after a real run, and the allocated bytes against the f32 cell of the same KV heads and window. max context: the longest sequence the fixed pool holds; max sequences: how many sequences of the stated length it admits at once (both by real allocation, markers written and read back). prefill: one prefill of L tokens, wall clock. Decode attention: the attention kernels of one decode step, GPU timestamps where the adapter has them; TPOT: time per output token, wall clock; both at the longest depth. Error: against the same KV heads with f32 KV and no window, over one long context cut into fifths (first, middle, last): the logits’ relative error, the share of positions whose top token agrees, and the first position where the greedy tokens part.';

/** `n` bytes as MiB, for the pool. */
const mib = (n: number) => fixed(n / 2 ** 20, 1);

/** A top-1 share as a percentage. */
export function top1Text(top1: number): string {
  return `${fixed(top1 * 100, 1)} %`;
}

/** The report's blocks: the cell table, the error by position, the targets. */
export function kvReport(s: KvSection): string[][] {
  const depth = longestDepth(s);
  const at = depth === null ? '' : ` @ ${depth}`;
  const opt = (v: number | null) => (v === null ? MISSING : formatMs(v));
  const cells = [
    `**${KV_CAPTION}.** ${escapeMarkdown(s.model)}: ${s.heads} heads of ${s.headDim}, ${s.layers} layers, pages of ${s.pageSize} tokens, maxSeqLen ${s.maxSeqLen}; fixed pool ${mib(s.poolBytes)} MiB; prefill L = ${s.prefillTokens}; error over ${s.errorContext} tokens. Clocks: decode attention ${s.clocks.decodeAttentionMs === 'gpu' ? 'GPU timestamps' : 'wall (no usable GPU timestamps)'}, TPOT and prefill wall.`,
    '',
    markdownRow([
      'KV heads',
      'KV type',
      'window',
      'bytes/token calc',
      'bytes/token allocated',
      '× f32',
      'max context',
      'max sequences',
      'prefill ms',
      `decode attention ms${at}`,
      `TPOT ms${at}`,
    ]),
    markdownDelimiter('rllrrrrrrrr'),
    ...kvCellRows(s).map((r) =>
      markdownRow([
        `${r.cell.kvHeads} (${groupingName(r.cell.kvHeads, s.heads)})`,
        r.cell.kvDtype,
        windowText(r.cell.window),
        fixed(r.cell.bytesPerToken, 0),
        fixed(r.cell.allocatedBytesPerToken, 0),
        r.ratioToF32 === null ? MISSING : `${fixed(r.ratioToF32, 3)}×`,
        String(r.cell.maxContext),
        `${r.cell.maxSequences} × ${r.cell.sequenceTokens}`,
        formatMs(r.cell.prefillMs),
        opt(r.decodeAttentionMs),
        opt(r.tpotMs),
      ]),
    ),
    '',
    KV_DEFINITIONS,
  ];
  const measured = s.cells.filter((c) => c.error.length > 0);
  const errors =
    measured.length === 0
      ? []
      : [
          [
            `**Error by position** against f32 KV without a window, same KV heads, over ${s.errorContext} tokens cut into fifths.`,
            '',
            markdownRow(['KV heads', 'KV type', 'window', 'part', 'rel err', 'top-1', 'first divergence']),
            markdownDelimiter('rlllrrr'),
            ...measured.flatMap((c) =>
              c.error.map((e) =>
                markdownRow([
                  String(c.kvHeads),
                  c.kvDtype,
                  windowText(c.window),
                  e.bucket,
                  e.relErr.toExponential(2),
                  top1Text(e.top1),
                  e.firstDivergence === null ? 'none' : String(e.firstDivergence),
                ]),
              ),
            ),
          ],
        ];
  const targets = [
    '**KV targets** (judged from the cells above):',
    '',
    markdownRow(['target', 'goal', 'reached', 'met']),
    markdownDelimiter('llll'),
    ...kvResultTargets(s).map((t) =>
      markdownRow([
        escapeMarkdown(t.name),
        escapeMarkdown(t.target),
        escapeMarkdown(t.reached),
        t.met === null ? `not judged: ${escapeMarkdown(t.note ?? '')}` : t.met ? 'yes' : '**no**',
      ]),
    ),
  ];
  // A trained model: the format sweep's task table, by KV cache.
  const tasks = s.taskQuality && s.taskQuality.length > 0 ? [taskQualityTable(s.taskQuality, s.model)] : [];
  return [cells, ...errors, ...tasks, targets];
}
