import { admittedInOrder, kvBytesPerToken, reservedTokens } from '../capacity/kv.ts';
import { type LengthMix, sequenceLengths } from '../capacity/lengths.ts';
import { GpuOutOfMemoryError, InputError, KvCacheExhaustedError } from '../errors.ts';
import { BufferPool, readFloat32 } from '../gpu/buffers.ts';
import { checkedRun } from '../gpu/device.ts';
import { KvWriteKernel } from '../kernels/kv-write.ts';
import { KernelRig } from '../kernels/rig.ts';
import type { PageAllocatorStats } from '../kv/allocator.ts';
import { KvCache, type KvCacheOptions, type KvCacheShape, pageBytes } from '../kv/cache.ts';
import { decodeKvRow, kvRowBytes, roundTripKv } from '../kv/format.ts';
import { kvRowIndex } from '../kv/layout.ts';
import type { CapacityResult } from '../spec/workloads/capacity.ts';
import { BYTES } from '../weight-format.ts';
import type { WorkloadContext, WorkloadEngine, WorkloadRunner } from './workload.ts';

/** Halvings of the pool tried after an out-of-memory error before the probe gives up. */
const OOM_RETRIES = 4;
/** Readback of the pool for the slot check, in pieces of at most this many bytes. */
const READBACK_CHUNK = 64 * 2 ** 20;

interface Admission {
  reached: number;
  stats: PageAllocatorStats;
  /** Bytes of the GPU pool buffers as created. */
  poolBytes: number;
  slotsVerified: boolean;
}

/**
 * The capacity probe: does the KV calculator's count of sequences match what the real paged pool
 * admits? It builds the pool on the device (the requested bytes, capped by the device's per-buffer
 * limit, halved on an out-of-memory error), then admits seeded sequences one by one through the
 * engine's own cache until the allocator refuses one. Every admitted token's slot is then written
 * on the GPU with its sequence's marker and read back, so two sequences sharing a slot, or a slot
 * past the pool's end, would fail the check. The same is done for a contiguous cache of the same
 * bytes in which every sequence reserves maxSeqLen, and both are compared with the calculator.
 */
export const capacityProbe: WorkloadRunner<'capacity', CapacityRecord> = async (ctx, w) => {
  const c = ctx.config;
  const shape: KvCacheShape = {
    layers: c.numLayers,
    kvHeads: c.numKvHeads,
    headDim: c.headDim,
    maxSeqLen: c.maxSeqLen,
  };
  // The run's KV type: the calculator's bytes per token for it (int8's scales included) against the
  // pool of that type.
  const dtype = ctx.kv.dtype;
  const bpt = kvBytesPerToken(
    { layers: c.numLayers, heads: c.numHeads, kvHeads: c.numKvHeads, headDim: c.headDim },
    dtype,
  );
  const mix: LengthMix = {
    meanTokens: w.meanTokens ?? Math.max(1, Math.floor(c.maxSeqLen / 8)),
    longShare: w.longShare,
    longFactor: w.longFactor,
    maxTokens: c.maxSeqLen,
    seed: w.seed,
  };
  const requested = w.poolMiB * 2 ** 20;
  const deviceLimit = Math.min(ctx.gpu.limits.maxStorageBufferBindingSize, ctx.gpu.limits.maxBufferSize);
  const perLayer = Math.min(requested / c.numLayers, deviceLimit);
  if (perLayer < requested / c.numLayers) {
    ctx.warn(
      `Capacity probe: the device's buffer limit (${deviceLimit} bytes per layer pool) caps the KV pool below the ${w.poolMiB} MiB asked for.`,
    );
  }
  let pages = Math.floor(perLayer / pageBytes(shape, w.pageSize, dtype));
  if (pages < 1) {
    throw new InputError(
      `poolMiB: ${w.poolMiB} MiB holds not one page of ${w.pageSize} tokens in each of ${c.numLayers} layers`,
    );
  }

  ctx.progress(0, 2, 'capacity probe: paged pool');
  let paged: Admission | undefined;
  for (let attempt = 0; !paged; attempt++) {
    try {
      paged = await admit(
        ctx,
        shape,
        { mode: 'paged', pageSize: w.pageSize, capacityTokens: pages * w.pageSize, dtype },
        mix,
      );
    } catch (e) {
      if (!(e instanceof GpuOutOfMemoryError) || attempt === OOM_RETRIES || pages < 2) throw e;
      ctx.warn(
        `Capacity probe: out of GPU memory for ${pages} pages per layer; trying ${Math.floor(pages / 2)}.`,
      );
      pages = Math.floor(pages / 2);
    }
  }
  // The contiguous baseline gets the same memory: as many whole maxSeqLen slots as the paged pool holds.
  const slots = Math.floor((pages * w.pageSize) / c.maxSeqLen);
  ctx.progress(1, 2, 'capacity probe: contiguous pool');
  const contiguous: Admission =
    slots > 0
      ? await admit(
          ctx,
          shape,
          { mode: 'contiguous', pageSize: w.pageSize, capacityTokens: slots * c.maxSeqLen, dtype },
          mix,
        )
      : { reached: 0, stats: emptyStats(c.maxSeqLen), poolBytes: 0, slotsVerified: true };

  // The calculator's side: the pool's bytes over bytes per token, through the same lengths.
  const pool = paged.poolBytes;
  const predicted = {
    paged: admittedInOrder(pool, bpt, sequenceLengths(mix), (n) => reservedTokens(n, w.pageSize)),
    contiguous: admittedInOrder(pool, bpt, sequenceLengths(mix), () => c.maxSeqLen),
  };
  const predictedUnrounded = admittedInOrder(pool, bpt, sequenceLengths(mix), (n) => n);
  const reached = { paged: paged.reached, contiguous: contiguous.reached };
  const exact = reached.paged === predicted.paged && reached.contiguous === predicted.contiguous;
  const withinRounding =
    reached.contiguous === predicted.contiguous &&
    reached.paged >= predicted.paged &&
    reached.paged <= predictedUnrounded;
  const agreement = exact ? 'exact' : withinRounding ? 'page-rounding' : 'mismatch';
  let note: string | null = null;
  if (agreement !== 'exact') {
    note = `The allocator admitted ${reached.paged} paged and ${reached.contiguous} contiguous sequences where the calculator predicts ${predicted.paged} and ${predicted.contiguous} for ${pool} bytes at ${bpt} bytes per token (${predictedUnrounded} without page rounding).`;
    ctx.warn(`Capacity probe: ${note}`);
  }
  const result: CapacityResult = {
    kvDtype: dtype,
    kvBytesPerToken: bpt,
    pageSize: w.pageSize,
    maxSeqLen: c.maxSeqLen,
    requestedBytes: requested,
    deviceLimitBytes: deviceLimit,
    mix: { meanTokens: mix.meanTokens, longShare: mix.longShare, longFactor: mix.longFactor, seed: mix.seed },
    predicted,
    predictedUnrounded,
    reached,
    pagedOverContiguous: reached.contiguous > 0 ? reached.paged / reached.contiguous : null,
    ...bytesOf(paged.stats),
    contiguous: bytesOf(contiguous.stats),
    slotsVerified: paged.slotsVerified && contiguous.slotsVerified,
    agreement,
    note,
  };
  for (const [name, a] of [
    ['paged', paged],
    ['contiguous', contiguous],
  ] as const) {
    ctx.check({
      name: `capacity probe: ${name} slots written and read back`,
      maxAbsErr: 0,
      maxRelErr: 0,
      passed: a.slotsVerified,
    });
  }
  ctx.emit({ type: 'capacity', result });
  ctx.progress(2, 2, 'capacity probe done');
};

function bytesOf(s: PageAllocatorStats) {
  return { reservedBytes: s.bytesReserved, usedBytes: s.bytesUsed, wastedBytes: s.bytesWasted };
}

function emptyStats(pageSize: number): PageAllocatorStats {
  return {
    pageSize,
    totalPages: 0,
    usedPages: 0,
    freePages: 0,
    bytesReserved: 0,
    bytesAllocated: 0,
    bytesUsed: 0,
    bytesWasted: 0,
    logicalTokens: 0,
    physicalTokens: 0,
    sharedPages: 0,
  };
}

/** Builds a cache, admits sequences from `mix` until the allocator refuses one, and checks their slots on the GPU. */
export async function admit(
  ctx: Pick<WorkloadContext<never>, 'gpu' | 'pipelines' | 'signal'>,
  shape: KvCacheShape,
  options: KvCacheOptions,
  mix: LengthMix,
): Promise<Admission> {
  const buffers = new BufferPool(ctx.gpu);
  try {
    const cache = await KvCache.create(buffers, shape, options);
    // appendBatch records copy-on-write copies into an encoder; fresh sequences never share a
    // page, so it stays empty and is never submitted.
    const encoder = ctx.gpu.device.createCommandEncoder({ label: 'capacity probe admission' });
    const slots: number[][] = [];
    for (const length of sequenceLengths(mix)) {
      if (slots.length % 256 === 0) ctx.signal.throwIfAborted();
      const seq = cache.allocator.createSequence();
      try {
        slots.push(cache.appendBatch(encoder, [{ seq, n: length }])[0]);
      } catch (e) {
        if (!(e instanceof KvCacheExhaustedError)) throw e;
        cache.allocator.freeSequence(seq);
        break;
      }
    }
    const stats = cache.stats();
    const slotsVerified = await verifySlots(ctx, cache, slots);
    return {
      reached: slots.length,
      stats,
      poolBytes: cache.pools.reduce((n, b) => n + b.size, 0),
      slotsVerified,
    };
  } finally {
    buffers.destroyAll();
  }
}

/**
 * Writes marker s + 1 into every K element (and −(s + 1) into V) of every slot of sequence s, in
 * layer 0's pool, with the engine's kv-write kernel, then reads the pool back: each admitted slot
 * must hold its own sequence's markers, and exactly as many K rows as admitted tokens may be
 * non-zero (the pool starts zeroed), so no slot was shared and none fell outside the pool.
 */
export async function verifySlots(
  ctx: Pick<WorkloadContext<never>, 'gpu' | 'pipelines' | 'signal'>,
  cache: KvCache,
  slots: number[][],
): Promise<boolean> {
  const { kvHeads, headDim } = cache.shape;
  const width = kvHeads * headDim;
  const rows = slots.flatMap((s, seq) => s.map((slot) => ({ slot, marker: seq + 1 })));
  const limit = Math.min(ctx.gpu.limits.maxStorageBufferBindingSize, ctx.gpu.limits.maxBufferSize);
  const chunk = Math.max(1, Math.floor(limit / (width * BYTES.f32)));
  const kernel = await KvWriteKernel.create({ gpu: ctx.gpu, pipelines: ctx.pipelines }, cache.dtype);
  const pool = cache.pools[0];
  for (let start = 0; start < rows.length; start += chunk) {
    ctx.signal.throwIfAborted();
    const part = rows.slice(start, start + chunk);
    const k = new Float32Array(part.length * width);
    const v = new Float32Array(part.length * width);
    part.forEach((r, i) => {
      k.fill(r.marker, i * width, (i + 1) * width);
      v.fill(-r.marker, i * width, (i + 1) * width);
    });
    const rig = new KernelRig(ctx.gpu, 'capacity probe: slot check');
    try {
      const call = rig.own(
        kernel.call({
          k: rig.input(k),
          v: rig.input(v),
          slots: rig.inputU32(part.map((r) => r.slot)),
          pool,
          rows: part.length,
          kvHeads,
          headDim,
          pageSize: cache.pageSize,
        }),
      );
      await checkedRun(ctx.gpu, 'the capacity probe slot check', () => rig.run(call));
    } finally {
      rig.destroy();
    }
  }
  const data = new Float32Array(pool.size / BYTES.f32);
  for (let offset = 0; offset < pool.size; offset += READBACK_CHUNK) {
    const bytes = Math.min(READBACK_CHUNK, pool.size - offset);
    data.set(await readFloat32(ctx.gpu, pool, bytes, offset), offset / BYTES.f32);
  }
  // Rows decoded as the shaders read them; a marker row reads back as the CPU's store of it (exact
  // for f32 and int8, whose scale is the marker itself; f16 rounds markers past 2048).
  const words = new Uint32Array(data.buffer);
  const layout = { kvHeads, pageSize: cache.pageSize, headDim, dtype: cache.dtype };
  const rowU32 = kvRowBytes(headDim, cache.dtype) / 4;
  const row = (at: number) => decodeKvRow(cache.dtype, words.subarray(at, at + rowU32), headDim);
  const stored = (marker: number) =>
    roundTripKv(cache.dtype, new Float64Array(headDim).fill(marker), headDim)[0];
  for (const { slot, marker } of rows) {
    const page = Math.floor(slot / cache.pageSize);
    const offset = slot % cache.pageSize;
    const k = stored(marker);
    const v = stored(-marker);
    for (let h = 0; h < kvHeads; h++) {
      const kRow = row(kvRowIndex(layout, page, 0, h, offset));
      const vRow = row(kvRowIndex(layout, page, 1, h, offset));
      for (let d = 0; d < headDim; d++) {
        if (kRow[d] !== k || vRow[d] !== v) return false;
      }
    }
  }
  let written = 0;
  for (let at = 0; at + rowU32 <= words.length; at += rowU32) if (row(at)[0] > 0) written++;
  return written === rows.length * kvHeads;
}

/** The capacity probe's one record: admission counts and pool bytes, nothing timed. */
export interface CapacityRecord {
  type: 'capacity';
  result: CapacityResult;
}

/** The capacity probe's engine: its one record is its section. */
export const capacityEngine: WorkloadEngine<'capacity', CapacityRecord> = {
  run: capacityProbe,
  describe: () => 'capacity probe: admission counted and checked',
  collect: (records) => {
    const last = records.at(-1);
    return last ? { capacity: last.result } : {};
  },
  targets: () => [],
};
