import { InputError } from '../errors.ts';
import { PagedAttentionDecodeKernel, PagedAttentionPrefillKernel } from '../kernels/attention.ts';
import type { KernelContext } from '../kernels/kernel.ts';
import { KvWriteKernel } from '../kernels/kv-write.ts';
import { attentionRef, compare } from '../kernels/reference.ts';
import type { KernelRig } from '../kernels/rig.ts';
import { type AttentionVariant, DEFAULT_VARIANTS, variantName } from '../kernels/variants.ts';
import { type KvLayout, kvRowIndex, slotsOf } from '../kv/layout.ts';
import { compareRows, type KernelCase, type RowCheck, rowsToCheck, seededData, TOLERANCES } from './case.ts';

/** Where K/V live: pages of `pageSize` tokens, or (paged: false) one slot of `pageSize` tokens per sequence. */
export interface KvSpec {
  kvHeads: number;
  headDim: number;
  /** Tokens per page; for the contiguous cache, each sequence's capacity (at least its length). */
  pageSize: number;
  paged: boolean;
}

export interface AttentionSpec extends KvSpec {
  heads: number;
  variant?: AttentionVariant;
}

/** Pages in the pool that no sequence owns, so the owned ones sit at no fixed offset. */
const SPARE_PAGES = 2;

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
  return { tables, poolElements: totalPages * 2 * kv.kvHeads * kv.pageSize * kv.headDim };
}

/** Writes each sequence's K/V rows (concatenated in `k`, `v`) into a fresh pool through the kv-write kernel. */
async function writtenPool(
  ctx: KernelContext,
  rig: KernelRig,
  kv: KvSpec,
  tables: readonly number[][],
  lengths: readonly number[],
  poolElements: number,
  k: Float32Array<ArrayBuffer>,
  v: Float32Array<ArrayBuffer>,
) {
  const pool = rig.output(poolElements);
  const slots = tables.flatMap((table, b) => slotsOf(table, 0, lengths[b], kv.pageSize));
  const write = (await KvWriteKernel.create(ctx)).call({
    k: rig.input(k),
    v: rig.input(v),
    slots: rig.inputU32(slots),
    pool,
    rows: slots.length,
    kvHeads: kv.kvHeads,
    headDim: kv.headDim,
    pageSize: kv.pageSize,
  });
  return { pool, write: rig.own(write) };
}

function layoutName(kv: KvSpec): string {
  return kv.paged ? `paged(${kv.pageSize})` : 'contiguous';
}

/**
 * kv-write alone: positions start … start + rows − 1 of a sequence scattered into a shuffled paged
 * pool (or a contiguous slot), the whole pool read back and compared with the rows placed on the
 * CPU through kv/layout.ts, so the shader's addressing and the CPU's are checked against each other.
 */
export function kvWriteCase(ctx: KernelContext, s: KvSpec & { rows: number; start: number }): KernelCase {
  const kind = 'exact';
  const { rows, start, kvHeads, headDim, pageSize } = s;
  const kvWidth = kvHeads * headDim;
  const { tables, poolElements } = shuffledTables([start + rows], s, 3);
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
      const kernel = await KvWriteKernel.create(ctx);
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
          const want = poolReference(s, slots, k, v, poolElements);
          return compare(await rig.read(pool, poolElements), want, TOLERANCES[kind]);
        },
      };
    },
  };
}

/**
 * The page pool a KV write of rows k, v [rows, kvHeads, headDim] into `slots` leaves, from the
 * layout of src/kv/layout.ts; every slot not written stays zero.
 */
export function poolReference(
  g: KvLayout,
  slots: readonly number[],
  k: ArrayLike<number> & { subarray(a: number, b: number): ArrayLike<number> },
  v: ArrayLike<number> & { subarray(a: number, b: number): ArrayLike<number> },
  poolElements: number,
): Float64Array {
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
  const kind = 'reduction';
  const { L, start, heads, kvHeads, headDim, pageSize } = s;
  const variant = s.variant ?? DEFAULT_VARIANTS.attentionPrefill;
  const T = start + L;
  const qWidth = heads * headDim;
  const kvWidth = kvHeads * headDim;
  const { tables, poolElements } = shuffledTables([T], s, 7);
  return {
    op: 'attention_prefill',
    variant: `${variantName(variant)} ${layoutName(s)}`,
    shape: { L, start, heads, kvHeads, headDim, pageSize },
    kind,
    bufferBytes: 4 * Math.max(poolElements, T * kvWidth, L * qWidth),
    async prepare(rig) {
      const q = seededData(L * qWidth, 14);
      const k = seededData(T * kvWidth, 15);
      const v = seededData(T * kvWidth, 16);
      const { pool, write } = await writtenPool(ctx, rig, s, tables, [T], poolElements, k, v);
      const out = rig.output(L * qWidth);
      const kernel = await PagedAttentionPrefillKernel.create(ctx, s, variant);
      const blockTable = rig.inputU32(tables[0]);
      const call = rig.own(kernel.call({ q: rig.input(q), pool, blockTable, out, L, start }));
      return {
        setup: [write],
        call,
        async check() {
          await rig.run(call);
          // Query l sits at position start + l and sees keys 0 ..= start + l.
          const rowRef = (l: number) =>
            attentionRef(q.subarray(l * qWidth, (l + 1) * qWidth), k, v, 1, start + l, s);
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
  const kind = 'reduction';
  const { lengths, heads, kvHeads, headDim, pageSize } = s;
  const variant = s.variant ?? DEFAULT_VARIANTS.attentionDecode;
  const B = lengths.length;
  const qWidth = heads * headDim;
  const kvWidth = kvHeads * headDim;
  const tokens = lengths.reduce((a, n) => a + n, 0);
  const { tables, poolElements } = shuffledTables(lengths, s, 11);
  const capacityPages = s.paged && s.capacity !== undefined ? Math.ceil(s.capacity / pageSize) : 1;
  const stride = Math.max(capacityPages, ...tables.map((t) => t.length));
  return {
    op: 'attention_decode',
    variant: `${variantName(variant)} ${layoutName(s)}`,
    shape: { batch: B, context: Math.max(...lengths), heads, kvHeads, headDim, pageSize },
    kind,
    bufferBytes: 4 * Math.max(poolElements, tokens * kvWidth, B * qWidth),
    async prepare(rig) {
      const q = seededData(B * qWidth, 20);
      const k = seededData(tokens * kvWidth, 21);
      const v = seededData(tokens * kvWidth, 22);
      const { pool, write } = await writtenPool(ctx, rig, s, tables, lengths, poolElements, k, v);
      const out = rig.output(B * qWidth);
      const kernel = await PagedAttentionDecodeKernel.create(ctx, s, variant);
      // [B, stride], each row padded with page 0, which the kernel must never read past seqLen.
      const padded = tables.flatMap((t) => [...t, ...Array<number>(stride - t.length).fill(0)]);
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
        setup: [write],
        call,
        async check() {
          await rig.run(...call);
          const rowRef = (b: number) => {
            const span = [firstToken[b] * kvWidth, (firstToken[b] + lengths[b]) * kvWidth] as const;
            const qb = q.subarray(b * qWidth, (b + 1) * qWidth);
            return attentionRef(qb, k.subarray(...span), v.subarray(...span), 1, lengths[b] - 1, s);
          };
          const rows = rowsToCheck(B, 'all');
          return compareRows(await rig.read(out, B * qWidth), rows, qWidth, rowRef, TOLERANCES[kind]);
        },
      };
    },
  };
}
