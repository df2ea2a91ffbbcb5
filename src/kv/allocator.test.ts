import { describe, expect, it } from 'vitest';
import { InputError, KvCacheExhaustedError } from '../errors.ts';
import { mulberry32 } from '../random.ts';
import { PageAllocator, type PageCopy } from './allocator.ts';

function allocator(numPages: number, pageSize: number, bytesPerTokenSlot = 1): PageAllocator {
  return new PageAllocator({ numPages, pageSize, bytesPerTokenSlot });
}

describe('PageAllocator construction', () => {
  it('rejects sizes that are not positive integers, naming the field', () => {
    expect(() => new PageAllocator({ numPages: 0, pageSize: 16, bytesPerTokenSlot: 1 })).toThrow(
      'numPages must be a positive integer, got 0',
    );
    expect(() => new PageAllocator({ numPages: 4, pageSize: 1.5, bytesPerTokenSlot: 1 })).toThrow(
      'pageSize must be a positive integer, got 1.5',
    );
    expect(() => new PageAllocator({ numPages: 4, pageSize: 16, bytesPerTokenSlot: -2 })).toThrow(
      'bytesPerTokenSlot must be a positive integer, got -2',
    );
    expect(() => new PageAllocator({ numPages: Number.NaN, pageSize: 16, bytesPerTokenSlot: 1 })).toThrow(
      InputError,
    );
  });

  it('starts with every page free and no sequences', () => {
    const kv = allocator(3, 4);
    expect(kv.freePageIds()).toEqual([0, 1, 2]);
    expect(kv.sequences()).toEqual([]);
    expect(kv.stats().usedPages).toBe(0);
  });
});

describe('appendTokens', () => {
  it('grows the block table exactly when a page boundary is crossed, lowest ids first', () => {
    const kv = allocator(8, 4);
    const seq = kv.createSequence();
    expect(kv.blockTable(seq)).toEqual([]);

    expect(kv.appendTokens(seq, 1)).toEqual([]);
    expect(kv.blockTable(seq)).toEqual([0]);
    kv.appendTokens(seq, 3);
    expect(kv.length(seq)).toBe(4);
    expect(kv.blockTable(seq)).toEqual([0]);
    kv.appendTokens(seq, 1);
    expect(kv.blockTable(seq)).toEqual([0, 1]);
    kv.appendTokens(seq, 8);
    expect(kv.length(seq)).toBe(13);
    expect(kv.blockTable(seq)).toEqual([0, 1, 2, 3]);
    expect(kv.appendTokens(seq, 0)).toEqual([]);
    expect(kv.blockTable(seq)).toEqual([0, 1, 2, 3]);
  });

  it('rejects a token count that is not a non-negative integer', () => {
    const kv = allocator(2, 4);
    const seq = kv.createSequence();
    expect(() => kv.appendTokens(seq, -1)).toThrow('token count must be a non-negative integer, got -1');
    expect(() => kv.appendTokens(seq, 0.5)).toThrow(InputError);
    expect(kv.length(seq)).toBe(0);
  });

  it('returns a block table that later appends do not change', () => {
    const kv = allocator(4, 2);
    const seq = kv.createSequence();
    kv.appendTokens(seq, 2);
    const before = kv.blockTable(seq);
    kv.appendTokens(seq, 2);
    expect(before).toEqual([0]);
  });
});

describe('freeSequence', () => {
  it('returns its pages to the free list and forgets the sequence', () => {
    const kv = allocator(4, 4);
    const a = kv.createSequence();
    const b = kv.createSequence();
    kv.appendTokens(a, 5);
    kv.appendTokens(b, 4);
    expect(kv.freePageIds()).toEqual([3]);

    kv.freeSequence(a);
    expect(kv.freePageIds()).toEqual([0, 1, 3]);
    expect(kv.refCount(0)).toBe(0);
    expect(kv.sequences()).toEqual([b]);
    expect(kv.stats().usedPages).toBe(1);

    // Freed pages are reused, lowest first.
    const c = kv.createSequence();
    kv.appendTokens(c, 5);
    expect(kv.blockTable(c)).toEqual([0, 1]);
  });
});

describe('fork (prefix sharing)', () => {
  it('shares every page and the length, and frees pages only when both sequences are freed', () => {
    const kv = allocator(4, 4);
    const parent = kv.createSequence();
    kv.appendTokens(parent, 8);
    const child = kv.fork(parent);

    expect(child).not.toBe(parent);
    expect(kv.length(child)).toBe(8);
    expect(kv.blockTable(child)).toEqual([0, 1]);
    expect(kv.refCount(0)).toBe(2);
    expect(kv.refCount(1)).toBe(2);
    expect(kv.stats().usedPages).toBe(2);

    kv.freeSequence(parent);
    expect(kv.refCount(0)).toBe(1);
    expect(kv.freePageIds()).toEqual([2, 3]);
    expect(kv.blockTable(child)).toEqual([0, 1]);

    kv.freeSequence(child);
    expect(kv.freePageIds()).toEqual([0, 1, 2, 3]);
  });

  it('copies on write a shared, partly filled last page', () => {
    const kv = allocator(8, 4);
    const parent = kv.createSequence();
    kv.appendTokens(parent, 6); // pages [0 (full), 1 (2 of 4)]
    const child = kv.fork(parent);

    const copies = kv.appendTokens(child, 1);
    expect(copies).toEqual<PageCopy[]>([{ srcPage: 1, dstPage: 2, tokens: 2 }]);
    expect(kv.blockTable(parent)).toEqual([0, 1]);
    expect(kv.blockTable(child)).toEqual([0, 2]);
    expect(kv.length(parent)).toBe(6);
    expect(kv.length(child)).toBe(7);
    expect([kv.refCount(0), kv.refCount(1), kv.refCount(2)]).toEqual([2, 1, 1]);

    // The parent now owns page 1 alone, so it writes in place.
    expect(kv.appendTokens(parent, 1)).toEqual([]);
    expect(kv.blockTable(parent)).toEqual([0, 1]);
  });

  it('copies on write and takes new pages in one append', () => {
    const kv = allocator(8, 4);
    const parent = kv.createSequence();
    kv.appendTokens(parent, 3);
    const child = kv.fork(parent);
    expect(kv.appendTokens(child, 6)).toEqual([{ srcPage: 0, dstPage: 1, tokens: 3 }]);
    expect(kv.blockTable(child)).toEqual([1, 2, 3]);
    expect(kv.blockTable(parent)).toEqual([0]);
  });

  it('never copies a shared full page: new tokens go to a new page', () => {
    const kv = allocator(8, 4);
    const parent = kv.createSequence();
    kv.appendTokens(parent, 8);
    const child = kv.fork(parent);

    expect(kv.appendTokens(child, 1)).toEqual([]);
    expect(kv.blockTable(child)).toEqual([0, 1, 2]);
    expect(kv.blockTable(parent)).toEqual([0, 1]);
    expect([kv.refCount(0), kv.refCount(1), kv.refCount(2)]).toEqual([2, 2, 1]);
  });

  it('does not copy when the append is empty', () => {
    const kv = allocator(4, 4);
    const parent = kv.createSequence();
    kv.appendTokens(parent, 2);
    const child = kv.fork(parent);
    expect(kv.appendTokens(child, 0)).toEqual([]);
    expect(kv.blockTable(child)).toEqual([0]);
    expect(kv.refCount(0)).toBe(2);
  });
});

describe('exhaustion', () => {
  it('throws KvCacheExhaustedError with a clear message and changes nothing', () => {
    const kv = allocator(4, 4, 10);
    const a = kv.createSequence();
    kv.appendTokens(a, 10); // pages [0, 1, 2 (2 of 4)]
    const b = kv.fork(a);
    const statsBefore = kv.stats();
    const freeBefore = kv.freePageIds();

    // Needs a copy-on-write page for page 2 plus one new page; only page 3 is free.
    let caught: unknown;
    try {
      kv.appendTokens(b, 3);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KvCacheExhaustedError);
    const error = caught as KvCacheExhaustedError;
    expect(error.name).toBe('KvCacheExhaustedError');
    expect(error.message).toBe(
      'KV cache exhausted: sequence 1 needs 2 more pages of 4 tokens but only 1 of 4 pages are free ' +
        '(2 sequences hold 3 pages)',
    );
    expect([error.sequence, error.needed, error.free]).toEqual([b, 2, 1]);

    expect(kv.stats()).toEqual(statsBefore);
    expect(kv.freePageIds()).toEqual(freeBefore);
    expect(kv.length(b)).toBe(10);
    expect(kv.blockTable(b)).toEqual([0, 1, 2]);
    expect(kv.refCount(2)).toBe(2);

    // The copy-on-write page alone fits.
    expect(kv.appendTokens(b, 2)).toEqual([{ srcPage: 2, dstPage: 3, tokens: 2 }]);
  });

  it('throws for a fresh sequence longer than the whole pool', () => {
    const kv = allocator(2, 8);
    const seq = kv.createSequence();
    expect(() => kv.appendTokens(seq, 17)).toThrow(KvCacheExhaustedError);
    expect(kv.blockTable(seq)).toEqual([]);
    expect(kv.length(seq)).toBe(0);
    kv.appendTokens(seq, 16);
    expect(kv.stats().freePages).toBe(0);
  });
});

describe('truncate (rolling back rejected draft tokens)', () => {
  it('returns the pages past the new length and keeps a partly used last page', () => {
    const kv = allocator(6, 4);
    const a = kv.createSequence();
    kv.appendTokens(a, 14); // pages 0..3, the last holding 2 tokens
    expect(kv.blockTable(a)).toEqual([0, 1, 2, 3]);
    kv.truncate(a, 5); // 5 tokens: page 0 full, page 1 holds 1
    expect(kv.length(a)).toBe(5);
    expect(kv.blockTable(a)).toEqual([0, 1]);
    expect(kv.freePageIds()).toEqual([2, 3, 4, 5]);
    // The next append continues in page 1 (slots 1..3), then takes the lowest free page.
    expect(kv.appendTokens(a, 4)).toEqual([]);
    expect(kv.blockTable(a)).toEqual([0, 1, 2]);
    kv.truncate(a, 0);
    expect(kv.blockTable(a)).toEqual([]);
    expect(kv.freePageIds()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('never writes a shared page: an append after truncating into one copies it first', () => {
    const kv = allocator(8, 4);
    const parent = kv.createSequence();
    kv.appendTokens(parent, 8); // pages 0, 1, both full
    const child = kv.fork(parent);
    kv.truncate(child, 6); // into shared page 1, 2 of its 4 slots are the child's
    expect(kv.blockTable(child)).toEqual([0, 1]);
    expect(kv.refCount(1)).toBe(2);
    // Page 1 is shared and partly the child's: the child gets a copy of its 2 slots, then writes there.
    expect(kv.appendTokens(child, 1)).toEqual([{ srcPage: 1, dstPage: 2, tokens: 2 }]);
    expect(kv.blockTable(child)).toEqual([0, 2]);
    expect(kv.refCount(1)).toBe(1);
    // Truncating to a page boundary inside the shared prefix just drops the reference.
    kv.truncate(child, 4);
    expect(kv.blockTable(child)).toEqual([0]);
    expect(kv.refCount(2)).toBe(0);
    expect(kv.appendTokens(child, 1)).toEqual([]);
    expect(kv.blockTable(child)).toEqual([0, 2]);
  });

  it('rejects a length past the sequence or not a whole number', () => {
    const kv = allocator(2, 4);
    const a = kv.createSequence();
    kv.appendTokens(a, 3);
    expect(() => kv.truncate(a, 4)).toThrow('truncate: length must be a whole number in 0…3, got 4');
    expect(() => kv.truncate(a, -1)).toThrow(InputError);
    expect(() => kv.truncate(a, 1.5)).toThrow(InputError);
  });
});

describe('appendTokensBatch (one decode or prefill step over several sequences)', () => {
  it('grows every sequence when all fit', () => {
    const kv = allocator(4, 4);
    const a = kv.createSequence();
    const b = kv.createSequence();
    expect(
      kv.appendTokensBatch([
        { seq: a, n: 5 },
        { seq: b, n: 3 },
      ]),
    ).toEqual([[], []]);
    expect([kv.blockTable(a), kv.blockTable(b)]).toEqual([[0, 1], [2]]);
  });

  it('is all or nothing: when the k-th does not fit, none of them grew', () => {
    // 4 pages of 4. a holds 3 tokens (page 0) shared with its fork c; b holds 4 (page 1).
    const kv = allocator(4, 4);
    const a = kv.createSequence();
    kv.appendTokens(a, 3);
    const c = kv.fork(a);
    const b = kv.createSequence();
    kv.appendTokens(b, 4);
    const before = {
      free: kv.freePageIds(),
      tables: [a, b, c].map((s) => kv.blockTable(s)),
      lengths: [a, b, c].map((s) => kv.length(s)),
      refs: [0, 1, 2, 3].map((p) => kv.refCount(p)),
    };
    // a appends 1: copy-on-write of shared page 0 (takes page 2). b appends 1: a new page (page 3).
    // c appends 5: page 0 is now its alone (no copy), plus 2 new pages, but none is left.
    expect(() =>
      kv.appendTokensBatch([
        { seq: a, n: 1 },
        { seq: b, n: 1 },
        { seq: c, n: 5 },
      ]),
    ).toThrow(KvCacheExhaustedError);
    expect(kv.freePageIds()).toEqual(before.free);
    expect([a, b, c].map((s) => kv.blockTable(s))).toEqual(before.tables);
    expect([a, b, c].map((s) => kv.length(s))).toEqual(before.lengths);
    expect([0, 1, 2, 3].map((p) => kv.refCount(p))).toEqual(before.refs);
    // And the same calls succeed once room is made, with the same ids as if nothing had happened.
    kv.freeSequence(b);
    expect(
      kv.appendTokensBatch([
        { seq: a, n: 1 },
        { seq: c, n: 1 },
      ]),
    ).toEqual([[{ srcPage: 0, dstPage: 1, tokens: 3 }], []]);
  });

  it('refuses a sequence twice in one batch', () => {
    const kv = allocator(4, 4);
    const a = kv.createSequence();
    expect(() =>
      kv.appendTokensBatch([
        { seq: a, n: 1 },
        { seq: a, n: 1 },
      ]),
    ).toThrow('appears twice');
    expect(kv.length(a)).toBe(0);
  });
});

describe('stats', () => {
  it('accounts memory exactly, counting shared pages once', () => {
    const kv = allocator(8, 4, 10);
    const a = kv.createSequence();
    kv.appendTokens(a, 6); // a: [0 (4), 1 (2)]
    const b = kv.fork(a);
    kv.appendTokens(b, 3); // COW 1 -> 2; b: [0 (shared), 2 (4), 3 (1)]
    const c = kv.createSequence();
    kv.appendTokens(c, 1); // c: [4 (1)]

    // Filled slots: page 0: 4, page 1: 2, page 2: 4, page 3: 1, page 4: 1 = 12 of 5 * 4 = 20.
    expect(kv.stats()).toEqual({
      pageSize: 4,
      totalPages: 8,
      usedPages: 5,
      freePages: 3,
      bytesReserved: 8 * 4 * 10,
      bytesAllocated: 5 * 4 * 10,
      bytesUsed: 12 * 10,
      bytesWasted: 8 * 10,
      logicalTokens: 6 + 9 + 1,
      physicalTokens: 12,
      sharedPages: 1,
      // Prefix cache off: nothing is ever cached or looked up.
      cachedPages: 0,
      prefixQueries: 0,
      prefixHits: 0,
    });
  });

  it('counts a shared partly filled page by its longest reader', () => {
    const kv = allocator(4, 4, 1);
    const a = kv.createSequence();
    kv.appendTokens(a, 3);
    kv.fork(a);
    const s = kv.stats();
    expect([s.logicalTokens, s.physicalTokens, s.bytesWasted, s.sharedPages]).toEqual([6, 3, 1, 1]);
  });
});

describe('unknown ids', () => {
  it('throws a clear error for an unknown or freed sequence', () => {
    const kv = allocator(4, 4);
    expect(() => kv.length(7)).toThrow('Unknown KV sequence id 7 (live sequences: none)');
    const a = kv.createSequence();
    const b = kv.createSequence();
    kv.freeSequence(a);
    expect(() => kv.appendTokens(a, 1)).toThrow(`Unknown KV sequence id ${a} (live sequences: ${b})`);
    expect(() => kv.fork(a)).toThrow(InputError);
    expect(() => kv.blockTable(a)).toThrow(InputError);
    expect(() => kv.freeSequence(a)).toThrow(InputError);
  });

  it('throws for a page id out of range', () => {
    const kv = allocator(4, 4);
    expect(() => kv.refCount(4)).toThrow('Page id 4 is out of range 0..3');
    expect(() => kv.refCount(-1)).toThrow(InputError);
  });
});

describe('randomized invariants', () => {
  /**
   * Drives the allocator with random operations while simulating the GPU pool: every token gets a
   * unique value written through the block table, after applying the returned copies. Each sequence
   * must then read back exactly its own history, which fails if a shared page were ever written.
   */
  function runScenario(seed: number, numPages: number, pageSize: number, steps: number, truncateShare = 0) {
    const random = mulberry32(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const kv = allocator(numPages, pageSize, 3);
    const pool: number[][] = Array.from({ length: numPages }, () => new Array<number>(pageSize).fill(-1));
    const history = new Map<number, number[]>();
    let nextToken = 0;
    let exhaustions = 0;
    let copiesOnWrite = 0;
    let truncations = 0;

    for (let step = 0; step < steps; step++) {
      const live = kv.sequences();
      const op = random();
      if (live.length === 0 || op < 0.1) {
        history.set(kv.createSequence(), []);
      } else if (op < 0.25) {
        const parent = pick(live);
        history.set(kv.fork(parent), [...(history.get(parent) ?? [])]);
      } else if (op < 0.4) {
        const seq = pick(live);
        kv.freeSequence(seq);
        history.delete(seq);
      } else if (op < 0.4 + truncateShare) {
        // Speculative decoding's rollback: keep a random prefix.
        const seq = pick(live);
        const tokens = history.get(seq) ?? [];
        const length = Math.floor(random() * (tokens.length + 1));
        kv.truncate(seq, length);
        tokens.length = length;
        truncations++;
      } else {
        const seq = pick(live);
        const n = Math.floor(random() * 2.5 * pageSize);
        const before = kv.stats();
        let copies: PageCopy[];
        try {
          copies = kv.appendTokens(seq, n);
        } catch (e) {
          expect(e).toBeInstanceOf(KvCacheExhaustedError);
          expect(kv.stats()).toEqual(before);
          exhaustions++;
          continue;
        }
        copiesOnWrite += copies.length;
        for (const { srcPage, dstPage, tokens } of copies) {
          for (let slot = 0; slot < tokens; slot++) pool[dstPage][slot] = pool[srcPage][slot];
        }
        const table = kv.blockTable(seq);
        const tokens = history.get(seq) ?? [];
        for (let i = 0; i < n; i++) {
          const position = tokens.length;
          const page = table[Math.floor(position / pageSize)];
          expect(kv.refCount(page)).toBe(1);
          pool[page][position % pageSize] = nextToken;
          tokens.push(nextToken++);
        }
      }
      checkInvariants(kv, pool, history);
    }
    return { exhaustions, copiesOnWrite, truncations };
  }

  function checkInvariants(kv: PageAllocator, pool: number[][], history: Map<number, number[]>): void {
    const { numPages, pageSize } = kv;
    const references = new Array<number>(numPages).fill(0);
    const filled = new Array<number>(numPages).fill(0);
    for (const seq of kv.sequences()) {
      const table = kv.blockTable(seq);
      const length = kv.length(seq);
      expect(table.length).toBe(Math.ceil(length / pageSize));
      table.forEach((page, i) => {
        references[page]++;
        filled[page] = Math.max(filled[page], Math.min(pageSize, length - i * pageSize));
      });
      const read = Array.from({ length }, (_, p) => pool[table[Math.floor(p / pageSize)]][p % pageSize]);
      expect(read).toEqual(history.get(seq));
    }
    const free = kv.freePageIds();
    expect(new Set(free).size).toBe(free.length);
    for (let page = 0; page < numPages; page++) {
      expect(kv.refCount(page)).toBe(references[page]);
      expect(free.includes(page)).toBe(references[page] === 0);
    }
    const s = kv.stats();
    expect(s.freePages + s.usedPages).toBe(s.totalPages);
    expect(s.freePages).toBe(free.length);
    expect(s.sharedPages).toBe(references.filter((r) => r > 1).length);
    const physicalTokens = filled.reduce((sum, f) => sum + f, 0);
    expect(s.physicalTokens).toBe(physicalTokens);
    expect(s.physicalTokens).toBeLessThanOrEqual(s.logicalTokens);
    expect(s.bytesUsed).toBe(physicalTokens * kv.bytesPerTokenSlot);
    expect(s.bytesWasted).toBe(s.bytesAllocated - s.bytesUsed);
    expect(s.bytesWasted).toBeGreaterThanOrEqual(0);
  }

  it.each([
    { seed: 1, numPages: 16, pageSize: 4 },
    { seed: 2, numPages: 32, pageSize: 8 },
    { seed: 3, numPages: 6, pageSize: 2 },
    { seed: 4, numPages: 12, pageSize: 1 },
  ])('holds for seed $seed ($numPages pages of $pageSize)', ({ seed, numPages, pageSize }) => {
    const { exhaustions, copiesOnWrite } = runScenario(seed, numPages, pageSize, 400);
    // A small pool must hit exhaustion, so the atomic-failure path is exercised too.
    expect(exhaustions).toBeGreaterThan(0);
    // Copy-on-write must happen, except with one-token pages, which are never partly filled.
    expect(copiesOnWrite > 0).toBe(pageSize > 1);
  });

  it.each([
    { seed: 5, numPages: 16, pageSize: 4 },
    { seed: 6, numPages: 8, pageSize: 2 },
    { seed: 7, numPages: 24, pageSize: 8 },
  ])(
    'holds with rollbacks mixed in, seed $seed ($numPages pages of $pageSize)',
    ({ seed, numPages, pageSize }) => {
      const { truncations, copiesOnWrite } = runScenario(seed, numPages, pageSize, 400, 0.15);
      expect(truncations).toBeGreaterThan(20);
      expect(copiesOnWrite).toBeGreaterThan(0);
    },
  );
});

describe('PageAllocator with a sliding window', () => {
  const windowed = (numPages: number, prefixCache = false) =>
    new PageAllocator({ numPages, pageSize: 8, bytesPerTokenSlot: 1, window: 16, prefixCache });

  it('lets go of pages wholly before the next query’s window: a sequence holds at most ⌈W/P⌉ + 1 pages', () => {
    const a = windowed(8);
    const seq = a.createSequence();
    let most = 0;
    for (let t = 0; t < 100; t++) {
      a.appendTokens(seq, 1);
      most = Math.max(most, a.heldPages(seq));
    }
    // W = 16, P = 8: 3 pages at most. At length 100 the last append started at 99, whose window
    // starts at 84: pages 0…9 (tokens 0…79) went, 10…12 stay (13 pages in all, ⌈100/8⌉).
    expect(most).toBe(3);
    expect(a.heldPages(seq)).toBe(3);
    expect(a.blockTable(seq).length).toBe(13);
    expect(a.stats().usedPages).toBe(3);
    expect(a.freePageIds().length).toBe(5);
  });

  it('counts the pages it lets go of before refusing an append', () => {
    // 3 pages in all: without the window a sequence could not pass 24 tokens.
    const a = windowed(3);
    const seq = a.createSequence();
    for (let t = 0; t < 64; t += 8) a.appendTokens(seq, 8);
    expect(a.length(seq)).toBe(64);
    expect(a.heldPages(seq)).toBe(3);
  });

  it('a chunk of queries keeps the pages its first query sees', () => {
    const a = windowed(16);
    const seq = a.createSequence();
    a.appendTokens(seq, 40);
    // The next chunk starts at 40: its first query sees 25…40, so pages 0, 1 and 2 (tokens 0…23)
    // go and page 3 (24…31, holding 25) stays, though the chunk's later queries do not see it.
    a.appendTokens(seq, 20);
    expect(a.heldPages(seq)).toBe(Math.ceil(60 / 8) - 3);
  });

  it('fork and free with dropped pages leave every reference count at zero', () => {
    const a = windowed(16);
    const s = a.createSequence();
    a.appendTokens(s, 50);
    a.appendTokens(s, 1);
    const f = a.fork(s);
    a.appendTokens(f, 30);
    a.freeSequence(s);
    a.freeSequence(f);
    expect(a.stats().usedPages).toBe(0);
    expect(a.freePageIds().length).toBe(16);
  });

  it('a prefix cached before the window passed it is still hit by a new prompt', () => {
    const a = windowed(32, true);
    const tokens = Array.from({ length: 64 }, (_, i) => i + 1);
    const s = a.createSequence();
    a.appendTokens(s, 24);
    a.commitTokens(s, tokens.slice(0, 24));
    const prefixPages = a.blockTable(s);
    for (let t = 24; t < 64; t++) {
      a.appendTokens(s, 1);
      a.commitTokens(s, tokens.slice(0, t + 1));
    }
    // At 64 tokens the last append started at 63 (window from 48): pages 0…5 went, 6 and 7 stay.
    // The ones keyed before they left s's window are cached, not free.
    expect(a.heldPages(s)).toBe(2);
    expect(a.stats().cachedPages).toBe(6);
    const n = a.createSequence();
    expect(a.acquirePrefix(n, tokens.slice(0, 25))).toBe(24);
    expect(a.blockTable(n)).toEqual(prefixPages);
  });

  it('a window shorter than a page, and a truncation into pages the window let go of, are refused', () => {
    expect(() => new PageAllocator({ numPages: 4, pageSize: 16, bytesPerTokenSlot: 1, window: 8 })).toThrow(
      /window must be at least one page \(16 tokens\)/,
    );
    const a = windowed(8);
    const s = a.createSequence();
    a.appendTokens(s, 40);
    a.appendTokens(s, 1);
    expect(() => a.truncate(s, 4)).toThrow(InputError);
  });
});
