import { InputError, InternalError, KvCacheExhaustedError } from '../errors.ts';
import { type ChainLink, type PageHashFn, PrefixIndex, ROOT_LINK } from './prefix-cache.ts';

/** Sizes of a paged KV cache, all positive integers. */
export interface PageAllocatorOptions {
  /** Pages in each layer's pool; page ids are `0 .. numPages - 1`. */
  readonly numPages: number;
  /** Token slots per page (8, 16 or 32 in practice). */
  readonly pageSize: number;
  /** Bytes one token's K and V take across all layers; used only for memory accounting. */
  readonly bytesPerTokenSlot: number;
  /**
   * Automatic prefix caching (DESIGN §8): full pages committed with `commitTokens` stay cached when
   * released, and `acquirePrefix` attaches them to new prompts. Off by default; off, `commitTokens`
   * and `acquirePrefix` do nothing and every released page goes back to the free list.
   */
  readonly prefixCache?: boolean;
  /**
   * Sliding-window attention of this many tokens (Mistral's): a query at position p sees only
   * p − window + 1 … p, so before an append at position `start` every page whose tokens all lie
   * before start − window + 1 is released (see `grow`). Absent: every page is kept.
   */
  readonly window?: number;
  /** Test seam: replaces the page hash (e.g. by a constant, to force collisions). */
  readonly prefixHash?: PageHashFn;
}

/**
 * A copy the engine must run on the GPU, in every layer's pool, before writing the tokens that
 * `appendTokens` reserved: slots `0 .. tokens - 1` of `srcPage` go to the same slots of `dstPage`.
 */
export interface PageCopy {
  readonly srcPage: number;
  readonly dstPage: number;
  readonly tokens: number;
}

/**
 * Exact memory accounting of the cache; every byte figure is a token-slot count times `bytesPerTokenSlot`.
 * The byte figures cover referenced (used) pages only: cached pages, which no sequence references and
 * which `take` may evict at any time, count in none of them (they hold `cachedPages * pageSize` slots).
 */
export interface PageAllocatorStats {
  readonly pageSize: number;
  readonly totalPages: number;
  /** Pages referenced by at least one sequence. */
  readonly usedPages: number;
  /** Pages on the free list. `freePages + usedPages + cachedPages === totalPages`. */
  readonly freePages: number;
  /** The whole pool: `totalPages * pageSize` slots. */
  readonly bytesReserved: number;
  /** Used pages: `usedPages * pageSize` slots. */
  readonly bytesAllocated: number;
  /** Filled slots, each physical page counted once however many sequences share it. */
  readonly bytesUsed: number;
  /** `bytesAllocated - bytesUsed`: internal fragmentation in partly filled last pages. */
  readonly bytesWasted: number;
  /** Sum of sequence lengths, as if nothing were shared. */
  readonly logicalTokens: number;
  /** Filled slots, shared ones counted once. */
  readonly physicalTokens: number;
  /** Pages referenced by more than one sequence (prefix sharing). */
  readonly sharedPages: number;
}

/** The prefix cache's part of `PageAllocator.stats()`; all 0 when the cache is off. */
export interface PrefixCacheStats {
  /** Keyed pages no sequence references: kept for later hits, evicted least recently released first. */
  readonly cachedPages: number;
  /** Prompt tokens `acquirePrefix` was asked about (whole prompts, including the capped last token). */
  readonly prefixQueries: number;
  /** Of those, tokens found cached; the hit rate is `prefixHits / prefixQueries`. */
  readonly prefixHits: number;
}

interface Sequence {
  /** Page ids in token order: slot `p % pageSize` of page `pages[floor(p / pageSize)]` holds position `p`. */
  readonly pages: number[];
  /** Tokens reserved so far; `pages.length === ceil(length / pageSize)` always holds. */
  length: number;
  /**
   * Leading pages let go of by the sliding window: `pages[0 … dropped − 1]` are no longer
   * referenced by this sequence (their ids are stale) and are never read again. 0 without a window.
   */
  dropped: number;
  /**
   * Prefix cache: one link per leading full page already processed by `commitTokens` or attached by
   * `acquirePrefix` (whether this sequence's page holds the key or an identical page elsewhere does).
   * `chain.length <= floor(length / pageSize)` always holds; empty when the cache is off.
   */
  readonly chain: ChainLink[];
}

/**
 * CPU-side page allocator for a paged KV cache, like vLLM's block manager.
 *
 * Why pages: a contiguous cache must reserve `maxSeqLen` slots per sequence up front; pages of a
 * few tokens are taken only as a sequence grows, so waste is bounded by one partly filled page per
 * sequence and many more sequences fit in the same memory.
 *
 * One page id names the same page in every layer: the GPU holds one pool per layer, shaped
 * `[numPages, 2 (K,V), nKvHeads, pageSize, headDim]`, and each sequence has a single block table
 * that indexes all of them. The allocator never touches the GPU; it only hands out ids.
 *
 * Why refcounts: `fork` gives a new sequence all of its parent's pages (a shared prompt prefix, or
 * parallel samples of one prompt) without copying anything. No sequence may write into a page that
 * another one references. A full shared page is never written again (new tokens go to new pages), but
 * a partly filled shared last page would be, so the sequence appending into it first gets a private
 * copy (copy-on-write): the engine copies the filled slots on the GPU, then writes into the copy.
 *
 * Free pages are handed out lowest id first, so the same calls always give the same ids.
 *
 * Prefix cache (option `prefixCache`, off by default; see prefix-cache.ts for keys and collisions):
 * - `commitTokens` tells the allocator a sequence's token ids; each newly complete page is keyed by
 *   (previous page's key, its tokens). If an identical page already holds the key, it stays the
 *   cached one. Only pages not yet processed are hashed, so calling it after every step is cheap.
 * - A keyed page whose refcount drops to 0 is not freed but cached: it joins the evictable list,
 *   least recently released first (a sequence releases its pages tail first, as vLLM does, so a
 *   prompt's later pages go before its earlier ones). `take` uses the free list first, then evicts the
 *   least recently released cached page, dropping its key. `availablePages()` counts both.
 * - `acquirePrefix` attaches to a new sequence the longest chain of cached pages matching its
 *   prompt's full pages (reviving evictable ones), always leaving the last prompt token uncached.
 * - A keyed page is never written: it is full, so appends go to new pages; a sequence that truncates
 *   into a keyed page it alone references un-keys it at once, and one that truncated into a shared
 *   keyed page copies it on write, or un-keys it if it has meanwhile become its alone.
 */
export class PageAllocator {
  readonly numPages: number;
  readonly pageSize: number;
  readonly bytesPerTokenSlot: number;

  /** Sequences referencing each page; 0 exactly when the page is on the free list or cached. */
  private readonly refCounts: Uint32Array;
  private readonly freeList: MinHeap;
  private readonly live = new Map<number, Sequence>();
  private nextSequenceId = 0;
  /** Present exactly when the prefix cache is on. */
  private readonly prefix: PrefixIndex | undefined;
  /** Cached pages (keyed, refcount 0), least recently released first (a Set keeps insertion order). */
  private readonly evictable = new Set<number>();
  private prefixQueries = 0;
  private prefixHits = 0;
  /** Sliding window in tokens; 0 for none. */
  readonly window: number;

  constructor(options: PageAllocatorOptions) {
    for (const key of ['numPages', 'pageSize', 'bytesPerTokenSlot'] as const) {
      const value = options[key];
      if (!Number.isSafeInteger(value) || value <= 0) {
        throw new InputError(`PageAllocator: ${key} must be a positive integer, got ${String(value)}`);
      }
    }
    this.numPages = options.numPages;
    this.pageSize = options.pageSize;
    this.bytesPerTokenSlot = options.bytesPerTokenSlot;
    const window = options.window ?? 0;
    if (!Number.isSafeInteger(window) || window < 0 || (window > 0 && window < options.pageSize)) {
      throw new InputError(
        `PageAllocator: window must be at least one page (${options.pageSize} tokens), got ${String(options.window)}`,
      );
    }
    this.window = window;
    this.refCounts = new Uint32Array(options.numPages);
    this.freeList = new MinHeap(Array.from({ length: options.numPages }, (_, page) => page));
    this.prefix =
      options.prefixCache === true ? new PrefixIndex(options.numPages, options.prefixHash) : undefined;
  }

  /** Starts an empty sequence and returns its id. Takes no pages until tokens are appended. */
  createSequence(): number {
    const id = this.nextSequenceId++;
    this.live.set(id, { pages: [], length: 0, dropped: 0, chain: [] });
    return id;
  }

  /** Starts a sequence sharing every page and the length of `parent` (prefix sharing); returns its id. */
  fork(parent: number): number {
    const source = this.sequence(parent);
    for (const page of source.pages.slice(source.dropped)) this.refCounts[page]++;
    const id = this.nextSequenceId++;
    this.live.set(id, {
      pages: [...source.pages],
      length: source.length,
      dropped: source.dropped,
      chain: [...source.chain],
    });
    return id;
  }

  /**
   * Ends a sequence; pages no other sequence references go back to the free list, or, when keyed,
   * to the cache. Pages are released tail first, so a cached prompt loses its last pages first.
   */
  freeSequence(seq: number): void {
    const { pages, dropped } = this.sequence(seq);
    for (let i = pages.length - 1; i >= dropped; i--) this.release(pages[i]);
    this.live.delete(seq);
  }

  length(seq: number): number {
    return this.sequence(seq).length;
  }

  /**
   * The sequence's page ids in token order (a copy; later appends do not change it). Pages the
   * sliding window let go of read as page 0 here: kernels never read them.
   */
  blockTable(seq: number): readonly number[] {
    const s = this.sequence(seq);
    return s.pages.map((page, i) => (i < s.dropped ? 0 : page));
  }

  /** Pages the sequence holds now: all of its pages, less those the sliding window let go of. */
  heldPages(seq: number): number {
    const s = this.sequence(seq);
    return s.pages.length - s.dropped;
  }

  /** Live sequence ids, oldest first. */
  sequences(): readonly number[] {
    return [...this.live.keys()];
  }

  /** Sequences referencing `page`; 0 for a free or cached page. */
  refCount(page: number): number {
    this.checkPage(page);
    return this.refCounts[page];
  }

  /** Free page ids, lowest first (the order they will be handed out). Cached pages are not among them. */
  freePageIds(): readonly number[] {
    return this.freeList.sorted();
  }

  /** Cached (evictable) page ids, least recently released first: the order `take` evicts them in. */
  cachedPageIds(): readonly number[] {
    return [...this.evictable];
  }

  /** Pages an append may take: free ones plus cached ones it would evict. What admission may count on. */
  availablePages(): number {
    return this.freeList.size + this.evictable.size;
  }

  /** The prefix-cache key of `page`, or undefined when it is not keyed (always, with the cache off). */
  pageKey(page: number): string | undefined {
    this.checkPage(page);
    return this.prefix?.pageKey(page);
  }

  /**
   * Tells the prefix cache the token ids of positions `0 .. tokens.length - 1` of `seq`
   * (`tokens.length <= length(seq)`); each completely covered page not yet processed is keyed, unless
   * an identical page already holds its key. Only new pages are hashed, so calling this after every
   * step with the whole token list costs O(new full pages · pageSize). Does nothing with the cache off.
   */
  commitTokens(seq: number, tokens: readonly number[]): void {
    const s = this.sequence(seq);
    if (tokens.length > s.length) {
      throw new InputError(
        `commitTokens: ${tokens.length} token ids given but sequence ${seq} holds only ${s.length} tokens`,
      );
    }
    const prefix = this.prefix;
    if (prefix === undefined) return;
    const { pageSize } = this;
    const full = Math.floor(tokens.length / pageSize);
    checkTokenIds('commitTokens', tokens, s.chain.length * pageSize, full * pageSize);
    for (let i = s.chain.length; i < full; i++) {
      // A page the window let go of before it was keyed is no longer this sequence's to key, and the
      // chain of keys cannot skip it.
      if (i < s.dropped) break;
      const start = i * pageSize;
      const prev = i === 0 ? ROOT_LINK : s.chain[i - 1];
      const key = prefix.keyOf(prev, tokens, start, start + pageSize);
      const { link, displaced } = prefix.register(s.pages[i], key, prev, tokens, start, start + pageSize);
      // A page that lost its key and that nothing references is cached no more: back to the free list.
      if (displaced >= 0 && this.evictable.delete(displaced)) this.freeList.push(displaced);
      s.chain.push(link);
    }
  }

  /**
   * For a new, empty sequence about to prefill `tokens`: attaches the longest chain of cached pages
   * matching the prompt's full pages from the start (each one more reference; evictable ones are
   * revived), sets the sequence's length to the tokens they hold, and returns that hit in tokens (a
   * multiple of pageSize). At most `floor((tokens.length - 1) / pageSize)` pages are attached, so the
   * last prompt token is always left to compute (the engine needs its logits). The attached pages are
   * full and never written: the next append opens a new page. Returns 0 with the cache off.
   */
  acquirePrefix(seq: number, tokens: readonly number[]): number {
    const s = this.sequence(seq);
    if (s.length !== 0) {
      throw new InputError(
        `acquirePrefix: sequence ${seq} must be new and empty, but holds ${s.length} tokens`,
      );
    }
    const prefix = this.prefix;
    if (prefix === undefined) return 0;
    const { pageSize } = this;
    const maxPages = Math.max(0, Math.floor((tokens.length - 1) / pageSize));
    checkTokenIds('acquirePrefix', tokens, 0, maxPages * pageSize);
    let prev = ROOT_LINK;
    for (let i = 0; i < maxPages; i++) {
      const start = i * pageSize;
      const key = prefix.keyOf(prev, tokens, start, start + pageSize);
      const page = prefix.find(key, prev, tokens, start, start + pageSize);
      if (page < 0) break;
      if (this.refCounts[page] === 0) this.evictable.delete(page);
      this.refCounts[page]++;
      s.pages.push(page);
      prev = prefix.linkOf(page);
      s.chain.push(prev);
    }
    s.length = s.pages.length * pageSize;
    this.prefixQueries += tokens.length;
    this.prefixHits += s.length;
    return s.length;
  }

  /**
   * Reserves slots for positions `length .. length + n - 1` of `seq`, taking new pages as needed,
   * and returns the copies the engine must run before writing them (at most one, for copy-on-write).
   * Takes free pages first, then evicts cached ones (least recently released first).
   * Throws `KvCacheExhaustedError`, changing nothing, when too few pages are available.
   */
  appendTokens(seq: number, n: number): PageCopy[] {
    const s = this.sequence(seq);
    checkTokenCount(n);
    if (n === 0) return [];
    const need = this.need(s, n);
    const available = this.availablePages();
    if (need.pages > available) throw this.exhausted(seq, need.pages, available);
    return this.grow(s, n, need.copyOnWrite);
  }

  /**
   * Shortens `seq` to its first `length` tokens: speculative decoding's rollback of rejected draft
   * tokens. Pages past the new length go back to the pool (or lose one reference, if shared); a
   * partly used last page stays, its slots past `length` simply unread. A shared page is never
   * written afterwards: the next append into a shared, partly filled last page copies it first
   * (copy-on-write), as for a fork. A keyed page truncated into that this sequence alone holds
   * leaves the prefix cache here, since the next append will overwrite its tail.
   */
  truncate(seq: number, length: number): void {
    const s = this.sequence(seq);
    if (!Number.isSafeInteger(length) || length < 0 || length > s.length) {
      throw new InputError(`truncate: length must be a whole number in 0…${s.length}, got ${String(length)}`);
    }
    const keep = Math.ceil(length / this.pageSize);
    if (keep < s.dropped || (keep === s.dropped && length > 0)) {
      throw new InputError(
        `truncate: sequence ${seq}'s pages before token ${s.dropped * this.pageSize} left its sliding window; it cannot shrink to ${length}`,
      );
    }
    const dropped = s.pages.splice(keep);
    for (let i = dropped.length - 1; i >= 0; i--) this.release(dropped[i]);
    s.length = length;
    const fullPages = Math.floor(length / this.pageSize);
    if (s.chain.length > fullPages) s.chain.length = fullPages;
    // Truncating into a keyed page this sequence alone holds: the next append writes into it, so it
    // leaves the cache now. A shared one stays keyed; the append copies it, or un-keys it (see grow).
    if (fullPages < keep && this.refCounts[s.pages[keep - 1]] === 1) this.prefix?.unkey(s.pages[keep - 1]);
  }

  /**
   * Appends to several sequences at once, all or nothing: every append is planned before any page
   * is taken, so when the k-th does not fit the error is thrown with no sequence grown and no cached
   * page evicted. A batch step of a scheduler needs exactly this: a failed step must leave the cache
   * as it found it.
   */
  appendTokensBatch(requests: readonly { seq: number; n: number }[]): PageCopy[][] {
    const seqs = requests.map((r) => r.seq);
    if (new Set(seqs).size !== seqs.length) {
      throw new InputError(`appendTokensBatch: a sequence appears twice in one batch (${seqs.join(', ')})`);
    }
    // Earlier copies-on-write in the batch drop references, which may spare a later sequence its copy.
    const released = new Map<number, number>();
    let available = this.availablePages();
    const plans = requests.map(({ seq, n }) => {
      const s = this.sequence(seq);
      checkTokenCount(n);
      if (n === 0) return { s, n, copyOnWrite: false };
      const need = this.need(s, n, released);
      if (need.pages > available) throw this.exhausted(seq, need.pages, available);
      available -= need.pages;
      const drops = need.copyOnWrite ? [s.pages[s.pages.length - 1]] : [];
      for (let i = s.dropped; i < s.dropped + need.slides; i++) drops.push(s.pages[i]);
      for (const page of drops) released.set(page, (released.get(page) ?? 0) + 1);
      return { s, n, copyOnWrite: need.copyOnWrite };
    });
    return plans.map(({ s, n, copyOnWrite }) => (n === 0 ? [] : this.grow(s, n, copyOnWrite)));
  }

  /**
   * Pages an append of `n > 0` tokens takes, and whether the partly filled last page must be copied
   * first. `released` counts references that earlier copies-on-write of the same batch will drop.
   */
  private need(s: Sequence, n: number, released?: ReadonlyMap<number, number>) {
    const filledInLastPage = s.length % this.pageSize;
    const lastPage = s.pages[s.pages.length - 1];
    const copyOnWrite =
      filledInLastPage !== 0 && this.refCounts[lastPage] - (released?.get(lastPage) ?? 0) > 1;
    const newPages = Math.ceil((s.length + n) / this.pageSize) - s.pages.length;
    // Pages the window lets go of before this append that no one else holds come back at once.
    let freed = 0;
    for (let i = s.dropped; i < this.windowEnd(s); i++) {
      if (this.refCounts[s.pages[i]] - (released?.get(s.pages[i]) ?? 0) === 1) freed++;
    }
    return {
      copyOnWrite,
      pages: newPages + (copyOnWrite ? 1 : 0) - freed,
      slides: this.windowEnd(s) - s.dropped,
    };
  }

  /**
   * Pages wholly before the window of the next query (at position `length`): page i can go once
   * (i + 1) · pageSize ≤ length − window + 1. Never the last page (window ≥ pageSize).
   */
  private windowEnd(s: Sequence): number {
    if (this.window === 0 || s.length < this.window) return s.dropped;
    return Math.max(s.dropped, Math.floor((s.length - this.window + 1) / this.pageSize));
  }

  /** Lets go of the pages the window no longer shows (see windowEnd), oldest first. */
  private slide(s: Sequence): void {
    const end = this.windowEnd(s);
    for (; s.dropped < end; s.dropped++) this.release(s.pages[s.dropped]);
  }

  /** Carries out an append that `need` found to fit. */
  private grow(s: Sequence, n: number, copyOnWrite: boolean): PageCopy[] {
    this.slide(s);
    const filledInLastPage = s.length % this.pageSize;
    const last = s.pages.length - 1;
    const copies: PageCopy[] = [];
    if (copyOnWrite) {
      const srcPage = s.pages[last];
      const dstPage = this.take();
      copies.push({ srcPage, dstPage, tokens: filledInLastPage });
      this.release(srcPage);
      s.pages[last] = dstPage;
    } else if (filledInLastPage !== 0) {
      // The last page is this sequence's alone and about to be written. If it is still keyed (it was
      // truncated into while shared, and the others have let go since), it leaves the cache now.
      this.prefix?.unkey(s.pages[last]);
    }
    const newPages = Math.ceil((s.length + n) / this.pageSize) - s.pages.length;
    for (let i = 0; i < newPages; i++) s.pages.push(this.take());
    s.length += n;
    return copies;
  }

  private exhausted(seq: number, needed: number, free: number): KvCacheExhaustedError {
    return new KvCacheExhaustedError({
      sequence: seq,
      needed,
      free,
      totalPages: this.numPages,
      pageSize: this.pageSize,
      liveSequences: this.live.size,
    });
  }

  stats(): PageAllocatorStats & PrefixCacheStats {
    const { pageSize, numPages, bytesPerTokenSlot } = this;
    // A page's filled slots are the most any referencing sequence has written into it: a full shared
    // prefix page is full, and copy-on-write guarantees no sequence sees another's slots past its own.
    const filled = new Uint32Array(numPages);
    let logicalTokens = 0;
    for (const { pages, length, dropped } of this.live.values()) {
      logicalTokens += length;
      pages.forEach((page, i) => {
        if (i < dropped) return;
        filled[page] = Math.max(filled[page], Math.min(pageSize, length - i * pageSize));
      });
    }
    let physicalTokens = 0;
    let sharedPages = 0;
    for (let page = 0; page < numPages; page++) {
      physicalTokens += filled[page];
      if (this.refCounts[page] > 1) sharedPages++;
    }
    const cachedPages = this.evictable.size;
    const usedPages = numPages - this.freeList.size - cachedPages;
    const bytesAllocated = usedPages * pageSize * bytesPerTokenSlot;
    const bytesUsed = physicalTokens * bytesPerTokenSlot;
    return {
      pageSize,
      totalPages: numPages,
      usedPages,
      freePages: this.freeList.size,
      bytesReserved: numPages * pageSize * bytesPerTokenSlot,
      bytesAllocated,
      bytesUsed,
      bytesWasted: bytesAllocated - bytesUsed,
      logicalTokens,
      physicalTokens,
      sharedPages,
      cachedPages,
      prefixQueries: this.prefixQueries,
      prefixHits: this.prefixHits,
    };
  }

  private sequence(seq: number): Sequence {
    const s = this.live.get(seq);
    if (s === undefined) {
      const known = this.live.size === 0 ? 'none' : [...this.live.keys()].join(', ');
      throw new InputError(`Unknown KV sequence id ${String(seq)} (live sequences: ${known})`);
    }
    return s;
  }

  private checkPage(page: number): void {
    if (!Number.isInteger(page) || page < 0 || page >= this.numPages) {
      throw new InputError(`Page id ${String(page)} is out of range 0..${this.numPages - 1}`);
    }
  }

  /**
   * Takes the lowest free page or, with none free, evicts the least recently released cached page
   * (dropping its key); callers check `availablePages()` first.
   */
  private take(): number {
    let page: number;
    if (this.freeList.size > 0) {
      page = this.freeList.pop();
    } else {
      const lru = this.evictable.values().next();
      if (lru.done === true) throw new InternalError('PageAllocator.take with no free or cached page');
      page = lru.value;
      this.evictable.delete(page);
      this.prefix?.unkey(page);
    }
    this.refCounts[page] = 1;
    return page;
  }

  /** Drops one reference; an unreferenced page is cached (most recent last) if keyed, else freed. */
  private release(page: number): void {
    this.refCounts[page]--;
    if (this.refCounts[page] !== 0) return;
    if (this.prefix?.isKeyed(page) === true) this.evictable.add(page);
    else this.freeList.push(page);
  }
}

function checkTokenCount(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new InputError(`appendTokens: token count must be a non-negative integer, got ${String(n)}`);
  }
}

/** Token ids the prefix cache hashes must be integers in 0…2³²−1. */
function checkTokenIds(caller: string, tokens: readonly number[], start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const t = tokens[i];
    if (!Number.isInteger(t) || t < 0 || t > 0xffffffff) {
      throw new InputError(
        `${caller}: token id at position ${i} must be an integer in 0…2^32−1, got ${String(t)}`,
      );
    }
  }
}

/** Binary min-heap of page ids, so the lowest free id is always handed out first. */
class MinHeap {
  private readonly items: number[];

  /** `items` must already be in ascending order, which is a valid heap. */
  constructor(items: number[]) {
    this.items = items;
  }

  get size(): number {
    return this.items.length;
  }

  sorted(): number[] {
    return [...this.items].sort((a, b) => a - b);
  }

  push(value: number): void {
    const items = this.items;
    let i = items.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent] <= value) break;
      items[i] = items[parent];
      i = parent;
    }
    items[i] = value;
  }

  pop(): number {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (last === undefined) throw new InternalError('MinHeap.pop on an empty heap');
    const n = items.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const child = right < n && items[right] < items[left] ? right : left;
        if (items[child] >= last) break;
        items[i] = items[child];
        i = child;
      }
      items[i] = last;
    }
    return top;
  }
}
