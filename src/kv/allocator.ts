import { InputError, InternalError, KvCacheExhaustedError } from '../errors.ts';

/** Sizes of a paged KV cache, all positive integers. */
export interface PageAllocatorOptions {
  /** Pages in each layer's pool; page ids are `0 .. numPages - 1`. */
  readonly numPages: number;
  /** Token slots per page (8, 16 or 32 in practice). */
  readonly pageSize: number;
  /** Bytes one token's K and V take across all layers; used only for memory accounting. */
  readonly bytesPerTokenSlot: number;
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

/** Exact memory accounting of the cache; every byte figure is a token-slot count times `bytesPerTokenSlot`. */
export interface PageAllocatorStats {
  readonly pageSize: number;
  readonly totalPages: number;
  /** Pages referenced by at least one sequence. */
  readonly usedPages: number;
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

interface Sequence {
  /** Page ids in token order: slot `p % pageSize` of page `pages[floor(p / pageSize)]` holds position `p`. */
  readonly pages: number[];
  /** Tokens reserved so far; `pages.length === ceil(length / pageSize)` always holds. */
  length: number;
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
 */
export class PageAllocator {
  readonly numPages: number;
  readonly pageSize: number;
  readonly bytesPerTokenSlot: number;

  /** Sequences referencing each page; 0 exactly when the page is on the free list. */
  private readonly refCounts: Uint32Array;
  private readonly freeList: MinHeap;
  private readonly live = new Map<number, Sequence>();
  private nextSequenceId = 0;

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
    this.refCounts = new Uint32Array(options.numPages);
    this.freeList = new MinHeap(Array.from({ length: options.numPages }, (_, page) => page));
  }

  /** Starts an empty sequence and returns its id. Takes no pages until tokens are appended. */
  createSequence(): number {
    const id = this.nextSequenceId++;
    this.live.set(id, { pages: [], length: 0 });
    return id;
  }

  /** Starts a sequence sharing every page and the length of `parent` (prefix sharing); returns its id. */
  fork(parent: number): number {
    const source = this.sequence(parent);
    for (const page of source.pages) this.refCounts[page]++;
    const id = this.nextSequenceId++;
    this.live.set(id, { pages: [...source.pages], length: source.length });
    return id;
  }

  /** Ends a sequence; pages no other sequence references go back to the free list. */
  freeSequence(seq: number): void {
    const { pages } = this.sequence(seq);
    for (const page of pages) this.release(page);
    this.live.delete(seq);
  }

  length(seq: number): number {
    return this.sequence(seq).length;
  }

  /** The sequence's page ids in token order (a copy; later appends do not change it). */
  blockTable(seq: number): readonly number[] {
    return [...this.sequence(seq).pages];
  }

  /** Live sequence ids, oldest first. */
  sequences(): readonly number[] {
    return [...this.live.keys()];
  }

  /** Sequences referencing `page`; 0 for a free page. */
  refCount(page: number): number {
    this.checkPage(page);
    return this.refCounts[page];
  }

  /** Free page ids, lowest first (the order they will be handed out). */
  freePageIds(): readonly number[] {
    return this.freeList.sorted();
  }

  /**
   * Reserves slots for positions `length .. length + n - 1` of `seq`, taking new pages as needed,
   * and returns the copies the engine must run before writing them (at most one, for copy-on-write).
   * Throws `KvCacheExhaustedError`, changing nothing, when too few pages are free.
   */
  appendTokens(seq: number, n: number): PageCopy[] {
    const s = this.sequence(seq);
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new InputError(`appendTokens: token count must be a non-negative integer, got ${String(n)}`);
    }
    if (n === 0) return [];

    const filledInLastPage = s.length % this.pageSize;
    const lastPage = s.pages[s.pages.length - 1];
    const copyOnWrite = filledInLastPage !== 0 && this.refCounts[lastPage] > 1;
    const newPages = Math.ceil((s.length + n) / this.pageSize) - s.pages.length;
    const needed = newPages + (copyOnWrite ? 1 : 0);
    if (needed > this.freeList.size) {
      throw new KvCacheExhaustedError({
        sequence: seq,
        needed,
        free: this.freeList.size,
        totalPages: this.numPages,
        pageSize: this.pageSize,
        liveSequences: this.live.size,
      });
    }

    const copies: PageCopy[] = [];
    if (copyOnWrite) {
      const dstPage = this.take();
      copies.push({ srcPage: lastPage, dstPage, tokens: filledInLastPage });
      this.release(lastPage);
      s.pages[s.pages.length - 1] = dstPage;
    }
    for (let i = 0; i < newPages; i++) s.pages.push(this.take());
    s.length += n;
    return copies;
  }

  /**
   * Shortens `seq` to its first `length` tokens: speculative decoding's rollback of rejected draft
   * tokens. Pages past the new length go back to the pool (or lose one reference, if shared); a
   * partly used last page stays, its slots past `length` simply unread. A shared page is never
   * written afterwards: the next append into a shared, partly filled last page copies it first
   * (copy-on-write), as for a fork.
   */
  truncate(seq: number, length: number): void {
    const s = this.sequence(seq);
    if (!Number.isSafeInteger(length) || length < 0 || length > s.length) {
      throw new InputError(`truncate: length must be a whole number in 0…${s.length}, got ${String(length)}`);
    }
    const keep = Math.ceil(length / this.pageSize);
    for (const page of s.pages.splice(keep)) this.release(page);
    s.length = length;
  }

  /**
   * Appends to several sequences at once, all or nothing: when the k-th append does not fit, the
   * ones before it are undone and the error is rethrown, so no sequence grew. A batch step of a
   * scheduler needs exactly this: a failed step must leave the cache as it found it.
   */
  appendTokensBatch(requests: readonly { seq: number; n: number }[]): PageCopy[][] {
    const seqs = requests.map((r) => r.seq);
    if (new Set(seqs).size !== seqs.length) {
      throw new InputError(`appendTokensBatch: a sequence appears twice in one batch (${seqs.join(', ')})`);
    }
    const undo: (() => void)[] = [];
    try {
      return requests.map(({ seq, n }) => {
        const s = this.sequence(seq);
        const before = { pages: [...s.pages], length: s.length };
        const copies = this.appendTokens(seq, n);
        undo.push(() => this.restore(s, before, copies));
        return copies;
      });
    } catch (e) {
      for (const step of undo.reverse()) step();
      throw e;
    }
  }

  /** Undoes one successful `appendTokens`: new pages back to the free list, a copied page back to its source. */
  private restore(s: Sequence, before: { pages: number[]; length: number }, copies: readonly PageCopy[]) {
    for (const page of s.pages.slice(before.pages.length)) this.release(page);
    for (const copy of copies) {
      this.release(copy.dstPage);
      this.refCounts[copy.srcPage]++;
    }
    s.pages.splice(0, s.pages.length, ...before.pages);
    s.length = before.length;
  }

  stats(): PageAllocatorStats {
    const { pageSize, numPages, bytesPerTokenSlot } = this;
    // A page's filled slots are the most any referencing sequence has written into it: a full shared
    // prefix page is full, and copy-on-write guarantees no sequence sees another's slots past its own.
    const filled = new Uint32Array(numPages);
    let logicalTokens = 0;
    for (const { pages, length } of this.live.values()) {
      logicalTokens += length;
      pages.forEach((page, i) => {
        filled[page] = Math.max(filled[page], Math.min(pageSize, length - i * pageSize));
      });
    }
    let physicalTokens = 0;
    let sharedPages = 0;
    for (let page = 0; page < numPages; page++) {
      physicalTokens += filled[page];
      if (this.refCounts[page] > 1) sharedPages++;
    }
    const usedPages = numPages - this.freeList.size;
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

  /** Takes the lowest free page; callers check `freeList.size` first. */
  private take(): number {
    const page = this.freeList.pop();
    this.refCounts[page] = 1;
    return page;
  }

  private release(page: number): void {
    this.refCounts[page]--;
    if (this.refCounts[page] === 0) this.freeList.push(page);
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
