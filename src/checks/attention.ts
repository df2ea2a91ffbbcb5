import { InputError } from '../errors.ts';
import { PagedAttentionDecodeKernel, PagedAttentionPrefillKernel } from '../kernels/attention.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import { KvWriteKernel } from '../kernels/kv-write.ts';
import { attentionRef, compare } from '../kernels/reference.ts';
import type { KernelRig } from '../kernels/rig.ts';
import { type AttentionVariant, DEFAULT_VARIANTS, variantName } from '../kernels/variants.ts';
import { decodeKvRow, type KvDtype, kvRowBytes, roundTripKv } from '../kv/format.ts';
import { type KvLayout, kvRowIndex, pageBytes, slotsOf } from '../kv/layout.ts';
import {
  compareRows,
  type KernelCase,
  type OpKind,
  type RowCheck,
  rowsToCheck,
  seededData,
  TOLERANCES,
} from './case.ts';

/** Where K/V live: pages of `pageSize` tokens, or (paged: false) one slot of `pageSize` tokens per sequence. */
export interface KvSpec {
  kvHeads: number;
  headDim: number;
  /** Tokens per page; for the contiguous cache, each sequence's capacity (at least its length). */
  pageSize: number;
  paged: boolean;
  /** How the pool stores K and V (src/kv/format.ts); f32 when absent. */
  kvDtype?: KvDtype;
}

export interface AttentionSpec extends KvSpec {
  /** Sliding window in tokens; absent: full causal attention. */
  window?: number;
  heads: number;
  variant?: AttentionVariant;
}

/** Pages in the pool that no sequence owns, so the owned ones sit at no fixed offset. */
const SPARE_PAGES = 2;

export function kvLayoutOf(kv: KvSpec): KvLayout {
  return { kvHeads: kv.kvHeads, pageSize: kv.pageSize, headDim: kv.headDim, dtype: kv.kvDtype ?? 'f32' };
}

/**
 * What a kernel reading the pool is held to: with f32 K/V, the f32 tolerance of its op; with f16 or
 * int8, the reference attends over the same rounded values in float64, and the looser tolerance
 * only allows for the few values the GPU's conversion rounds the other way (a tie, or an f32
 * reciprocal of the row scale one ulp off).
 */
export function kvKind(kv: { kvDtype?: KvDtype }, exact: OpKind, quantized: OpKind = 'quantizedKv'): OpKind {
  return (kv.kvDtype ?? 'f32') === 'f32' ? exact : quantized;
}

/**
 * The pool's values, every row decoded as the shaders read it (f32 words as they are), in the
 * f32 layout [pages, 2, kvHeads, pageSize, headDim]: what a KV write is compared in.
 */
export function decodePool(g: KvLayout, words: Uint32Array, pages: number): Float32Array {
  const { headDim, kvHeads, pageSize, dtype } = g;
  const out = new Float32Array(pages * 2 * kvHeads * pageSize * headDim);
  // Rows are consecutive in the pool, each kvRowBytes long.
  const u32PerRow = kvRowBytes(headDim, dtype) / 4;
  for (let row = 0; row < out.length / headDim; row++) {
    const at = row * u32PerRow;
    out.set(decodeKvRow(dtype, words.subarray(at, at + u32PerRow), headDim), row * headDim);
  }
  return out;
}

/** The same rows as `decodePool` reads them, from the values the writer was given. */
export function decodedReference(g: KvLayout, rows: ArrayLike<number>): Float64Array {
  return roundTripKv(g.dtype, rows, g.headDim);
}

/**
 * Block tables for sequences of the given lengths over one pool whose pages are dealt out in a
 * shuffled order, spare pages included: a kernel that ignored the table, assumed its pages in
 * order, or strode by the length instead of the page size would read the wrong rows.
 */
function shuffledTables(lengths: readonly number[], kv: KvSpec, seed: number) {
  const longest = Math.max(...lengths);
  if (!kv.paged && kv.pageSize < longest) {
    throw new InputError(`a contiguous slot of ${kv.pageSize} tokens cannot hold ${longest}`);
  }
  const pagesOf = (n: number) => (kv.paged ? Math.ceil(n / kv.pageSize) : 1);
  const totalPages = lengths.reduce((a, n) => a + pagesOf(n), 0) + SPARE_PAGES;
  const order = Array.from({ length: totalPages }, (_, i) => i);
  let s = seed >>> 0;
  for (let i = order.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const tables: number[][] = [];
  let next = 0;
  for (const n of lengths) {
    tables.push(order.slice(next, next + pagesOf(n)));
    next += pagesOf(n);
  }
  const spare = order[next];
  // poolElements: 4-byte words of the pool; poolValues: its K/V values (what decodePool gives).
  return {
    tables,
    spare,
    totalPages,
    poolElements: (totalPages * pageBytes(kvLayoutOf(kv))) / 4,
    poolValues: totalPages * 2 * kv.kvHeads * kv.pageSize * kv.headDim,
  };
}

/** What the poison page holds: a key this large would take every query's whole attention. */
const POISON = 1e4;

/**
 * Block tables as a sliding window leaves them (paged): every page wholly before the first key the
 * sequence's first query sees points at `poison`, a spare page full of huge keys and values. A
 * kernel that walked into a page the window let go of (which the allocator may have handed to
 * another sequence) would attend to them and fail the check.
 */
function windowedTables(
  tables: readonly number[][],
  firstQueryPositions: readonly number[],
  kv: AttentionSpec,
  poison: number,
): number[][] {
  const window = kv.window ?? 0;
  if (!kv.paged || window === 0) return tables.map((t) => [...t]);
  return tables.map((table, b) => {
    const firstVisible = Math.max(0, firstQueryPositions[b] - window + 1);
    return table.map((page, i) => ((i + 1) * kv.pageSize <= firstVisible ? poison : page));
  });
}

/**
 * Writes each sequence's K/V rows (concatenated in `k`, `v`) into a fresh pool through the kv-write
 * kernel, and, given a `poison` page, fills it with POISON (see windowedTables).
 */
async function writtenPool(
  ctx: KernelContext,
  rig: KernelRig,
  kv: KvSpec,
  tables: readonly number[][],
  lengths: readonly number[],
  poolElements: number,
  k: Float32Array<ArrayBuffer>,
  v: Float32Array<ArrayBuffer>,
  poison?: number,
) {
  const pool = rig.output(poolElements);
  const kernel = await KvWriteKernel.create(ctx, kvLayoutOf(kv).dtype);
  const write = (slots: number[], kRows: Float32Array<ArrayBuffer>, vRows: Float32Array<ArrayBuffer>) =>
    rig.own(
      kernel.call({
        k: rig.input(kRows),
        v: rig.input(vRows),
        slots: rig.inputU32(slots),
        pool,
        rows: slots.length,
        kvHeads: kv.kvHeads,
        headDim: kv.headDim,
        pageSize: kv.pageSize,
      }),
    );
  const writes = [
    write(
      tables.flatMap((table, b) => slotsOf(table, 0, lengths[b], kv.pageSize)),
      k,
      v,
    ),
  ];
  if (poison !== undefined && kv.paged) {
    const rows = new Float32Array(kv.pageSize * kv.kvHeads * kv.headDim).fill(POISON);
    const slots = Array.from({ length: kv.pageSize }, (_, i) => poison * kv.pageSize + i);
    writes.push(write(slots, rows, rows));
  }
  return { pool, writes };
}

function windowName(s: AttentionSpec): string {
  return s.window ? ` window ${s.window}` : '';
}

function layoutName(kv: KvSpec): string {
  const layout = kv.paged ? `paged(${kv.pageSize})` : 'contiguous';
  return (kv.kvDtype ?? 'f32') === 'f32' ? layout : `${layout} ${kv.kvDtype} KV`;
}

/**
 * kv-write alone: positions start … start + rows − 1 of a sequence scattered into a shuffled paged
 * pool (or a contiguous slot), the whole pool read back and compared with the rows placed on the
 * CPU through kv/layout.ts, so the shader's addressing and the CPU's are checked against each other.
 */
export function kvWriteCase(ctx: KernelContext, s: KvSpec & { rows: number; start: number }): KernelCase {
  const kind = kvKind(s, 'exact', 'quantizedKvWrite');
  const { rows, start, kvHeads, headDim, pageSize } = s;
  const g = kvLayoutOf(s);
  const kvWidth = kvHeads * headDim;
  const { tables, totalPages, poolElements, poolValues } = shuffledTables([start + rows], s, 3);
  const table = tables[0];
  return {
    op: 'kv_write',
    variant: layoutName(s),
    shape: { rows, start, kvHeads, headDim, pageSize },
    kind,
    bufferBytes: 4 * poolElements,
    async prepare(rig) {
      const k = seededData(rows * kvWidth, 17);
      const v = seededData(rows * kvWidth, 18);
      const slots = slotsOf(table, start, rows, pageSize);
      const pool = rig.output(poolElements);
      const kernel = await KvWriteKernel.create(ctx, g.dtype);
      const call = rig.own(
        kernel.call({
          k: rig.input(k),
          v: rig.input(v),
          slots: rig.inputU32(slots),
          pool,
          rows,
          kvHeads,
          headDim,
          pageSize,
        }),
      );
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          // Both sides as values: the pool decoded as the shaders read it, and the rows the writer
          // was given stored and read back on the CPU (src/kv/format.ts), placed through kv/layout.ts.
          const want = poolReference(s, slots, decodedReference(g, k), decodedReference(g, v), poolValues);
          const got = decodePool(g, await rig.readU32(pool, poolElements), totalPages);
          return compare(got, want, TOLERANCES[kind]);
        },
      };
    },
  };
}

/**
 * The page pool a KV write of rows k, v [rows, kvHeads, headDim] into `slots` leaves, as values in
 * the f32 layout of src/kv/layout.ts; every slot not written stays zero.
 */
export function poolReference(
  shape: { kvHeads: number; pageSize: number; headDim: number },
  slots: readonly number[],
  k: ArrayLike<number> & { subarray(a: number, b: number): ArrayLike<number> },
  v: ArrayLike<number> & { subarray(a: number, b: number): ArrayLike<number> },
  poolElements: number,
): Float64Array {
  const g: KvLayout = { ...shape, dtype: 'f32' };
  const { kvHeads, pageSize, headDim } = g;
  const want = new Float64Array(poolElements);
  slots.forEach((slot, r) => {
    const page = Math.floor(slot / pageSize);
    for (let h = 0; h < kvHeads; h++) {
      const src = (r * kvHeads + h) * headDim;
      want.set(k.subarray(src, src + headDim), kvRowIndex(g, page, 0, h, slot % pageSize));
      want.set(v.subarray(src, src + headDim), kvRowIndex(g, page, 1, h, slot % pageSize));
    }
  });
  return want;
}

/**
 * kv-write of `start` cached tokens plus L new ones, then causal prefill attention of the L new
 * queries over all of them, through the block table.
 */
export function attentionPrefillCase(
  ctx: KernelContext,
  s: AttentionSpec & { L: number; start: number; rows?: RowCheck },
): KernelCase {
  const kind = kvKind(s, 'reduction');
  const { L, start, heads, kvHeads, headDim, pageSize } = s;
  const variant = s.variant ?? DEFAULT_VARIANTS.attentionPrefill;
  const T = start + L;
  const qWidth = heads * headDim;
  const kvWidth = kvHeads * headDim;
  const { tables, spare, poolElements } = shuffledTables([T], s, 7);
  const g = kvLayoutOf(s);
  return {
    op: 'attention_prefill',
    variant: `${variantName(variant)} ${layoutName(s)}${windowName(s)}`,
    shape: { L, start, heads, kvHeads, headDim, pageSize },
    kind,
    bufferBytes: 4 * Math.max(poolElements, T * kvWidth, L * qWidth),
    async prepare(rig) {
      const q = seededData(L * qWidth, 14);
      const k = seededData(T * kvWidth, 15);
      const v = seededData(T * kvWidth, 16);
      const { pool, writes } = await writtenPool(ctx, rig, s, tables, [T], poolElements, k, v, spare);
      const out = rig.output(L * qWidth);
      const kernel = await PagedAttentionPrefillKernel.create(ctx, s, variant);
      const blockTable = rig.inputU32(windowedTables(tables, [start], s, spare)[0]);
      const call = rig.own(kernel.call({ q: rig.input(q), pool, blockTable, out, L, start }));
      return {
        setup: writes,
        call,
        async check() {
          await rig.run(call);
          // Query l sits at position start + l and sees keys 0 ..= start + l (the window's last
          // ones), over K/V as the pool's type stores them.
          const kq = decodedReference(g, k);
          const vq = decodedReference(g, v);
          const rowRef = (l: number) =>
            attentionRef(q.subarray(l * qWidth, (l + 1) * qWidth), kq, vq, 1, start + l, s);
          const rows = rowsToCheck(L, s.rows ?? 'all');
          return compareRows(await rig.read(out, L * qWidth), rows, qWidth, rowRef, TOLERANCES[kind]);
        },
      };
    },
  };
}

/**
 * kv-write of B sequences of the given lengths, then one batched decode step of attention: each
 * sequence's last token attends to its whole context through its own block table.
 */
export function attentionDecodeCase(
  ctx: KernelContext,
  s: AttentionSpec & {
    lengths: readonly number[];
    /**
     * Tokens each sequence may grow to, as a model's decode plan is sized for maxSeqLen: the block
     * tables are ⌈capacity / pageSize⌉ wide (paged; a contiguous slot is pageSize tokens already),
     * so a kernel whose grid follows the table's capacity (split-K) covers slices past every length.
     */
    capacity?: number;
  },
): KernelCase {
  const kind = kvKind(s, 'reduction');
  const { lengths, heads, kvHeads, headDim, pageSize } = s;
  const variant = s.variant ?? DEFAULT_VARIANTS.attentionDecode;
  const g = kvLayoutOf(s);
  const B = lengths.length;
  const qWidth = heads * headDim;
  const kvWidth = kvHeads * headDim;
  const tokens = lengths.reduce((a, n) => a + n, 0);
  const { tables, spare, poolElements } = shuffledTables(lengths, s, 11);
  const capacityPages = s.paged && s.capacity !== undefined ? Math.ceil(s.capacity / pageSize) : 1;
  const stride = Math.max(capacityPages, ...tables.map((t) => t.length));
  return {
    op: 'attention_decode',
    variant: `${variantName(variant)} ${layoutName(s)}${windowName(s)}`,
    shape: { batch: B, context: Math.max(...lengths), heads, kvHeads, headDim, pageSize },
    kind,
    bufferBytes: 4 * Math.max(poolElements, tokens * kvWidth, B * qWidth),
    async prepare(rig) {
      const q = seededData(B * qWidth, 20);
      const k = seededData(tokens * kvWidth, 21);
      const v = seededData(tokens * kvWidth, 22);
      const { pool, writes } = await writtenPool(ctx, rig, s, tables, lengths, poolElements, k, v, spare);
      const out = rig.output(B * qWidth);
      const kernel = await PagedAttentionDecodeKernel.create(ctx, s, variant);
      // [B, stride], each row padded with page 0, which the kernel must never read past seqLen.
      const windowed = windowedTables(
        tables,
        lengths.map((n) => n - 1),
        s,
        spare,
      );
      const padded = windowed.flatMap((t) => [...t, ...Array<number>(stride - t.length).fill(0)]);
      const call = kernel
        .call({
          q: rig.input(q),
          pool,
          blockTables: rig.inputU32(padded),
          seqLens: rig.inputU32(lengths),
          out,
          batch: B,
          tableStride: stride,
        })
        .map((c) => rig.own(c));
      const firstToken = lengths.map((_, b) => lengths.slice(0, b).reduce((a, n) => a + n, 0));
      return {
        setup: writes,
        call,
        async check() {
          await rig.run(...call);
          const kq = decodedReference(g, k);
          const vq = decodedReference(g, v);
          const rowRef = (b: number) => {
            const span = [firstToken[b] * kvWidth, (firstToken[b] + lengths[b]) * kvWidth] as const;
            const qb = q.subarray(b * qWidth, (b + 1) * qWidth);
            return attentionRef(qb, kq.subarray(...span), vq.subarray(...span), 1, lengths[b] - 1, s);
          };
          const rows = rowsToCheck(B, 'all');
          return compareRows(await rig.read(out, B * qWidth), rows, qWidth, rowRef, TOLERANCES[kind]);
        },
      };
    },
  };
}
