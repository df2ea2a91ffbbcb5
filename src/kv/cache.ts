import { InputError } from '../errors.ts';
import type { BufferPool } from '../gpu/buffers.ts';
import { PageAllocator, type PageAllocatorStats } from './allocator.ts';
import type { KvDtype } from './format.ts';
import { pageBytes as layoutPageBytes, slotsOf } from './layout.ts';

/** Page sizes the paged cache supports (tokens per page). */
export const PAGE_SIZES = [8, 16, 32] as const;

export interface KvCacheShape {
  layers: number;
  kvHeads: number;
  headDim: number;
  maxSeqLen: number;
}

export interface KvCacheOptions {
  /** 'paged' uses pages of `pageSize` tokens; 'contiguous' gives each sequence one slot of maxSeqLen tokens (the A/B baseline). */
  mode: 'paged' | 'contiguous';
  pageSize: number;
  /** Token slots in the pool (paged) or, divided by maxSeqLen, sequences (contiguous). */
  capacityTokens: number;
  /** Keep full pages cached for later prompts that start the same way (paged only; off by default). */
  prefixCache?: boolean;
  /** How K and V are stored (src/kv/format.ts); f32 when absent. */
  dtype?: KvDtype;
  /**
   * Sliding-window attention of this many tokens: pages wholly before every sequence's window go
   * back to the pool (paged only; a contiguous slot is kept whole). Absent: full attention.
   */
  window?: number | null;
}

/** Bytes of one page in one layer's pool: [2 (K, V), kvHeads, pageSize] rows of the KV type, scales included. */
export function pageBytes(shape: KvCacheShape, pageSize: number, dtype: KvDtype = 'f32'): number {
  return layoutPageBytes({ kvHeads: shape.kvHeads, pageSize, headDim: shape.headDim, dtype });
}

/** The per-layer page count and page size for a cache configuration, before anything is allocated. */
export function kvGeometry(shape: KvCacheShape, o: KvCacheOptions) {
  const pageSize = o.mode === 'paged' ? o.pageSize : shape.maxSeqLen;
  if (o.mode === 'paged' && !(PAGE_SIZES as readonly number[]).includes(o.pageSize)) {
    throw new InputError(`page size ${o.pageSize} is not one of ${PAGE_SIZES.join(', ')}`);
  }
  const numPages = Math.max(1, Math.ceil(o.capacityTokens / pageSize));
  return { pageSize, numPages, layerPoolBytes: numPages * pageBytes(shape, pageSize, o.dtype) };
}

/**
 * Token slots a cache needs so that `sequences` live sequences holding `tokens` context tokens
 * between them always fit: paged, the tokens plus one partly filled page per sequence; contiguous,
 * a whole maxSeqLen slot per sequence however short it is (which is the point of the baseline).
 */
export function kvCapacityTokens(
  mode: KvCacheOptions['mode'],
  pageSize: number,
  maxSeqLen: number,
  need: { sequences: number; tokens: number },
): number {
  return mode === 'paged' ? need.tokens + need.sequences * pageSize : need.sequences * maxSeqLen;
}

/**
 * The paged KV cache on the GPU: one page pool per layer, addressed through per-sequence block
 * tables that the CPU allocator maintains (shared by all layers). In contiguous mode each sequence
 * owns one page of maxSeqLen tokens, so the same allocator, kv-write kernel and pool layout serve
 * as the baseline, and only the attention kernels' address computation differs.
 */
export class KvCache {
  readonly allocator: PageAllocator;
  readonly pageSize: number;
  readonly paged: boolean;
  /** Block-table entries per sequence in the batched decode tables. */
  readonly tableStride: number;
  /** How the pools store K and V. */
  readonly dtype: KvDtype;
  /** Sliding window in tokens; 0 for full attention. */
  readonly window: number;
  private readonly pageBytesPerLayer: number;

  private constructor(
    readonly shape: KvCacheShape,
    readonly pools: GPUBuffer[],
    geometry: ReturnType<typeof kvGeometry>,
    private readonly scratch: GPUBuffer,
    options: KvCacheOptions,
  ) {
    const paged = options.mode === 'paged';
    this.pageSize = geometry.pageSize;
    this.paged = paged;
    this.dtype = options.dtype ?? 'f32';
    this.window = options.window ?? 0;
    this.pageBytesPerLayer = pageBytes(shape, geometry.pageSize, this.dtype);
    this.tableStride = paged ? Math.ceil(shape.maxSeqLen / geometry.pageSize) : 1;
    this.allocator = new PageAllocator({
      numPages: geometry.numPages,
      pageSize: geometry.pageSize,
      bytesPerTokenSlot: (this.pageBytesPerLayer * shape.layers) / geometry.pageSize,
      prefixCache: paged && (options.prefixCache ?? false),
      window: paged ? this.window : 0,
    });
  }

  static async create(buffers: BufferPool, shape: KvCacheShape, options: KvCacheOptions): Promise<KvCache> {
    const geometry = kvGeometry(shape, options);
    const pools: GPUBuffer[] = [];
    for (let l = 0; l < shape.layers; l++) {
      // [pages, 2, kvHeads, pageSize, rowWords] words of the KV type (src/kv/layout.ts)
      pools.push(await buffers.allocate(`kv pool layer ${l}`, geometry.layerPoolBytes));
    }
    const scratch = await buffers.allocate(
      'kv copy-on-write scratch',
      pageBytes(shape, geometry.pageSize, options.dtype),
    );
    return new KvCache(shape, pools, geometry, scratch, options);
  }

  /**
   * Reserves slots for `n` new tokens of each sequence, all or nothing (see
   * PageAllocator.appendTokensBatch), and records any copy-on-write page copies into `encoder` (for
   * every layer). Returns each request's new tokens' slots (page·pageSize + offset).
   */
  appendBatch(encoder: GPUCommandEncoder, requests: readonly { seq: number; n: number }[]): number[][] {
    for (const { seq, n } of requests) {
      const end = this.allocator.length(seq) + n;
      if (end > this.shape.maxSeqLen) {
        throw new InputError(
          `Sequence ${seq} would reach ${end} tokens, past the model's maxSeqLen of ${this.shape.maxSeqLen}`,
        );
      }
    }
    const starts = requests.map(({ seq }) => this.allocator.length(seq));
    const copies = this.allocator.appendTokensBatch(requests);
    const bytes = this.pageBytesPerLayer;
    for (const copy of copies.flat()) {
      // WebGPU forbids a copy within one buffer, so each page goes through a scratch buffer.
      for (const pool of this.pools) {
        encoder.copyBufferToBuffer(pool, copy.srcPage * bytes, this.scratch, 0, bytes);
        encoder.copyBufferToBuffer(this.scratch, 0, pool, copy.dstPage * bytes, bytes);
      }
    }
    return requests.map(({ seq, n }, i) =>
      slotsOf(this.allocator.blockTable(seq), starts[i], n, this.pageSize),
    );
  }

  /** The sequence's block table padded to tableStride entries, as the decode kernel reads it. */
  paddedTable(seq: number): number[] {
    const table = [...this.allocator.blockTable(seq)];
    while (table.length < this.tableStride) table.push(0);
    return table;
  }

  stats(): PageAllocatorStats {
    return this.allocator.stats();
  }
}
