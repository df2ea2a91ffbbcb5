import { describe, expect, it } from 'vitest';
import { InputError, KvCacheExhaustedError } from '../errors.ts';
import { mulberry32 } from '../random.ts';
import { PageAllocator, type PageAllocatorOptions, type PageCopy } from './allocator.ts';
import { murmur3Words, pageHash, ROOT_KEY } from './prefix-cache.ts';

function cached(
  numPages: number,
  pageSize: number,
  extra: Partial<PageAllocatorOptions> = {},
): PageAllocator {
  return new PageAllocator({ numPages, pageSize, bytesPerTokenSlot: 1, prefixCache: true, ...extra });
}

/** `n` consecutive token ids from `from`. */
const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

/** What an engine does with a prompt: look up its cached prefix, reserve the rest, commit its tokens. */
function prefill(kv: PageAllocator, prompt: readonly number[]): { seq: number; hit: number } {
  const seq = kv.createSequence();
  const hit = kv.acquirePrefix(seq, prompt);
  kv.appendTokens(seq, prompt.length - hit);
  kv.commitTokens(seq, prompt);
  return { seq, hit };
}

describe('page hash', () => {
  it('is MurmurHash3 x86_32 over 32-bit words (published test vectors)', () => {
    expect(murmur3Words([], 0)).toBe(0);
    expect(murmur3Words([], 1)).toBe(0x514e28b7);
    expect(murmur3Words([], 0xffffffff)).toBe(0x81f16f39);
    expect(murmur3Words([0], 0)).toBe(0x2362f9de);
    expect(murmur3Words([0x87654321], 0)).toBe(0xf55b516b);
    expect(murmur3Words([0x87654321], 0x5082edee)).toBe(0x2362f9de);
    expect(murmur3Words([0xffffffff], 0)).toBe(0x76293b50);
  });

  it('is 16 hex digits, deterministic, and depends on the previous key and on every token', () => {
    const tokens = [5, 6, 7, 8];
    const key = pageHash(ROOT_KEY, tokens, 0, 4);
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    expect(pageHash(ROOT_KEY, [...tokens], 0, 4)).toBe(key);
    // The same page after another prefix, a changed token, a swap, or a range shifted by one.
    const next = pageHash(key, tokens, 0, 4);
    const variants = [
      next,
      pageHash(ROOT_KEY, [5, 6, 7, 9], 0, 4),
      pageHash(ROOT_KEY, [6, 5, 7, 8], 0, 4),
      pageHash(ROOT_KEY, [0, ...tokens], 0, 4),
      pageHash(next, tokens, 0, 4),
    ];
    expect(new Set([key, ...variants]).size).toBe(6);
    // Only tokens[start..end) count.
    expect(pageHash(ROOT_KEY, [1, 5, 6, 7, 8, 2], 1, 5)).toBe(key);
  });
});

describe('prefix cache off (the default)', () => {
  it('never caches: commit and acquire do nothing, freed pages go back to the free list', () => {
    for (const kv of [
      new PageAllocator({ numPages: 4, pageSize: 4, bytesPerTokenSlot: 1 }),
      new PageAllocator({ numPages: 4, pageSize: 4, bytesPerTokenSlot: 1, prefixCache: false }),
    ]) {
      const prompt = range(100, 9);
      const a = prefill(kv, prompt);
      expect(a.hit).toBe(0);
      expect(kv.pageKey(0)).toBeUndefined();
      kv.freeSequence(a.seq);
      expect(kv.freePageIds()).toEqual([0, 1, 2, 3]);
      expect(kv.cachedPageIds()).toEqual([]);
      const b = prefill(kv, prompt);
      expect(b.hit).toBe(0);
      expect(kv.blockTable(b.seq)).toEqual([0, 1, 2]);
      const s = kv.stats();
      expect([s.cachedPages, s.prefixQueries, s.prefixHits]).toEqual([0, 0, 0]);
      expect(kv.availablePages()).toBe(1);
      // Validation still applies.
      expect(() => kv.commitTokens(b.seq, range(0, 10))).toThrow(InputError);
    }
  });
});

describe('acquirePrefix', () => {
  it('hits the longest cached chain of full pages, and nothing after a different first token', () => {
    const kv = cached(16, 4);
    // 14 tokens = 3.5 pages: pages 0, 1, 2 full and keyed, page 3 half full and not keyed.
    const promptA = range(100, 14);
    const a = prefill(kv, promptA);
    expect(a.hit).toBe(0);
    expect(kv.blockTable(a.seq)).toEqual([0, 1, 2, 3]);
    expect([0, 1, 2, 3].map((p) => kv.pageKey(p) !== undefined)).toEqual([true, true, true, false]);

    kv.freeSequence(a.seq);
    // Released tail first: the unkeyed page 3 is freed, 2, 1, 0 are cached in that order.
    expect(kv.cachedPageIds()).toEqual([2, 1, 0]);
    expect(kv.freePageIds()).toEqual(range(3, 13));

    // Same first 3 pages (12 tokens), a different tail: exactly 3 pages hit.
    const promptB = [...promptA.slice(0, 12), 7, 8, 9, 10, 11];
    const b = kv.createSequence();
    expect(kv.acquirePrefix(b, promptB)).toBe(12);
    expect(kv.length(b)).toBe(12);
    expect(kv.blockTable(b)).toEqual([0, 1, 2]);
    expect([0, 1, 2].map((p) => kv.refCount(p))).toEqual([1, 1, 1]);
    expect(kv.cachedPageIds()).toEqual([]);
    // The rest of the prompt goes to new pages: no copy, lowest free ids.
    expect(kv.appendTokens(b, promptB.length - 12)).toEqual([]);
    expect(kv.blockTable(b)).toEqual([0, 1, 2, 3, 4]);

    // A different first token: nothing hits, although every later token is the same.
    const c = kv.createSequence();
    expect(kv.acquirePrefix(c, [999, ...promptA.slice(1)])).toBe(0);
    expect(kv.length(c)).toBe(0);
    expect(kv.blockTable(c)).toEqual([]);

    const s = kv.stats();
    expect([s.prefixQueries, s.prefixHits]).toEqual([14 + 17 + 14, 12]);
    expect([s.usedPages, s.freePages, s.cachedPages]).toEqual([5, 11, 0]);
  });

  it('always leaves at least the last prompt token to compute', () => {
    const kv = cached(8, 4);
    const prompt = range(1, 8); // exactly 2 pages
    kv.freeSequence(prefill(kv, prompt).seq);
    expect(kv.cachedPageIds()).toEqual([1, 0]);

    // floor((8 - 1) / 4) = 1 page, although both are cached.
    const a = kv.createSequence();
    expect(kv.acquirePrefix(a, prompt)).toBe(4);
    expect(kv.blockTable(a)).toEqual([0]);
    // One more token: both pages.
    const b = kv.createSequence();
    expect(kv.acquirePrefix(b, [...prompt, 50])).toBe(8);
    expect(kv.blockTable(b)).toEqual([0, 1]);
    // One page exactly: nothing; an empty prompt: nothing.
    const c = kv.createSequence();
    expect(kv.acquirePrefix(c, prompt.slice(0, 4))).toBe(0);
    expect(kv.acquirePrefix(c, [])).toBe(0);
    expect(kv.stats().prefixQueries).toBe(8 + 8 + 9 + 4 + 0);
  });

  it('attaches pages another live sequence holds, which are never written: appends take new pages', () => {
    const kv = cached(8, 4);
    const prompt = range(30, 9);
    const a = prefill(kv, prompt); // pages 0, 1 (keyed), 2 (1 token)
    const b = kv.createSequence();
    expect(kv.acquirePrefix(b, prompt)).toBe(8);
    expect(kv.blockTable(b)).toEqual([0, 1]);
    expect([kv.refCount(0), kv.refCount(1), kv.refCount(2)]).toEqual([2, 2, 1]);
    expect(kv.stats().sharedPages).toBe(2);
    // The last prompt token, then decode tokens: no copy, fresh pages only.
    expect(kv.appendTokens(b, 1)).toEqual([]);
    expect(kv.appendTokens(b, 4)).toEqual([]);
    expect(kv.blockTable(b)).toEqual([0, 1, 3, 4]);
    expect(kv.blockTable(a.seq)).toEqual([0, 1, 2]);
    expect([kv.refCount(0), kv.refCount(1), kv.refCount(2)]).toEqual([2, 2, 1]);
  });

  it('refuses a sequence that is not empty, and token ids that are not 32-bit unsigned integers', () => {
    const kv = cached(4, 4);
    const a = kv.createSequence();
    kv.appendTokens(a, 1);
    expect(() => kv.acquirePrefix(a, [1, 2])).toThrow('acquirePrefix: sequence 0 must be new and empty');
    const b = kv.createSequence();
    expect(() => kv.acquirePrefix(b, [1, 2, 3.5, 4, 5])).toThrow(
      'acquirePrefix: token id at position 2 must be an integer',
    );
    expect(() => kv.acquirePrefix(b, [1, 2, 3, 2 ** 32, 5])).toThrow(InputError);
    expect(() => kv.acquirePrefix(b, [-1, 2, 3, 4, 5])).toThrow(InputError);
    expect(kv.stats().prefixQueries).toBe(0);
  });
});

describe('collision safety', () => {
  it('compares the stored token ids on a key hit (every page forced onto one key)', () => {
    const kv = cached(4, 4, { prefixHash: () => 'one key' });
    const promptA = [1, 2, 3, 4, 5];
    kv.freeSequence(prefill(kv, promptA).seq);
    expect(kv.pageKey(0)).toBe('one key');
    expect(kv.cachedPageIds()).toEqual([0]);

    // Same key, other tokens: a miss, not page 0.
    const promptB = [9, 9, 9, 9, 5];
    const b = prefill(kv, promptB);
    expect(b.hit).toBe(0);
    expect(kv.blockTable(b.seq)).toEqual([1, 2]);
    // B's page took the key; A's cached page lost it and went back to the free list.
    expect(kv.pageKey(1)).toBe('one key');
    expect(kv.pageKey(0)).toBeUndefined();
    expect(kv.cachedPageIds()).toEqual([]);
    expect(kv.freePageIds()).toEqual([0, 3]);
    expect(kv.acquirePrefix(kv.createSequence(), promptA)).toBe(0);
    expect(kv.acquirePrefix(kv.createSequence(), promptB)).toBe(4);
  });

  it('compares the parent too: equal tokens after a different prefix miss (hash blind to the prefix)', () => {
    // A hash that ignores the previous key: page 1 of [1,1,1,1 | 2,2,2,2] and of [3,3,3,3 | 2,2,2,2]
    // collide, although page 1's K/V differ (they were computed after different pages 0).
    const kv = cached(8, 4, {
      prefixHash: (_prev, tokens, start, end) => tokens.slice(start, end).join(','),
    });
    prefill(kv, [1, 1, 1, 1, 2, 2, 2, 2, 0]); // pages 0, 1 keyed, 2
    const b = kv.createSequence();
    kv.appendTokens(b, 9); // pages 3, 4, 5
    kv.commitTokens(b, [3, 3, 3, 3]); // only page 3 is keyed
    expect([kv.pageKey(1), kv.pageKey(3), kv.pageKey(4)]).toEqual(['2,2,2,2', '3,3,3,3', undefined]);

    // Page 0 hits page 3; page 1's key finds page 1, whose parent is page 0, not page 3: a miss.
    const c = kv.createSequence();
    expect(kv.acquirePrefix(c, [3, 3, 3, 3, 2, 2, 2, 2, 0])).toBe(4);
    expect(kv.blockTable(c)).toEqual([3]);
  });
});

describe('commitTokens', () => {
  it('keys only completely covered pages, and hashes each page once when called after every step', () => {
    let hashes = 0;
    const kv = cached(8, 4, {
      prefixHash: (prev, tokens, start, end) => {
        hashes++;
        return pageHash(prev, tokens, start, end);
      },
    });
    const seq = kv.createSequence();
    const tokens: number[] = [];
    for (let step = 0; step < 14; step++) {
      kv.appendTokens(seq, 1);
      tokens.push(40 + step);
      kv.commitTokens(seq, tokens);
      // After 4, 8 and 12 tokens a page is complete.
      expect(hashes).toBe(Math.floor(tokens.length / 4));
    }
    expect([0, 1, 2, 3].map((p) => kv.pageKey(p) !== undefined)).toEqual([true, true, true, false]);
    // Committing fewer tokens than the sequence holds is fine, and re-committing hashes nothing.
    kv.commitTokens(seq, tokens.slice(0, 5));
    kv.commitTokens(seq, tokens);
    expect(hashes).toBe(3);
  });

  it('keeps the page already cached under a key: the duplicate stays unkeyed and is freed on release', () => {
    const kv = cached(8, 4);
    const prompt = range(7, 9);
    // Both prompts look up before either commits (they prefill in the same step): no hits.
    const a = kv.createSequence();
    const b = kv.createSequence();
    expect([kv.acquirePrefix(a, prompt), kv.acquirePrefix(b, prompt)]).toEqual([0, 0]);
    kv.appendTokens(a, 9); // pages 0, 1, 2
    kv.appendTokens(b, 9); // pages 3, 4, 5
    kv.commitTokens(a, prompt);
    kv.commitTokens(b, prompt);
    expect([0, 1, 3, 4].map((p) => kv.pageKey(p) !== undefined)).toEqual([true, true, false, false]);
    kv.freeSequence(b);
    expect(kv.cachedPageIds()).toEqual([]);
    expect(kv.freePageIds()).toEqual([3, 4, 5, 6, 7]);
    kv.freeSequence(a);
    expect(kv.cachedPageIds()).toEqual([1, 0]);
  });

  it("continues a fork's chain from its parent's", () => {
    const kv = cached(8, 4);
    const parent = prefill(kv, range(0, 4)).seq; // page 0 keyed
    const child = kv.fork(parent);
    kv.appendTokens(child, 4); // page 1
    kv.commitTokens(child, range(0, 8));
    expect(kv.pageKey(1)).toBeDefined();
    kv.freeSequence(parent);
    kv.freeSequence(child);
    expect(kv.acquirePrefix(kv.createSequence(), range(0, 9))).toBe(8);
  });

  it('refuses more token ids than the sequence holds, and ids that are not 32-bit unsigned integers', () => {
    const kv = cached(4, 4);
    const seq = kv.createSequence();
    kv.appendTokens(seq, 4);
    expect(() => kv.commitTokens(seq, range(0, 5))).toThrow(
      'commitTokens: 5 token ids given but sequence 0 holds only 4 tokens',
    );
    expect(() => kv.commitTokens(seq, [0, 1, Number.NaN, 3])).toThrow(
      'commitTokens: token id at position 2 must be an integer',
    );
    expect(kv.pageKey(0)).toBeUndefined();
  });
});

describe('eviction', () => {
  it('uses free pages first, then evicts the least recently released cached page', () => {
    for (const order of ['A then B', 'B then A'] as const) {
      const kv = cached(2, 4);
      const promptA = [1, 2, 3, 4];
      const promptB = [5, 6, 7, 8];
      const a = prefill(kv, promptA).seq; // page 0
      const b = prefill(kv, promptB).seq; // page 1
      kv.freeSequence(order === 'A then B' ? a : b);
      kv.freeSequence(order === 'A then B' ? b : a);
      expect(kv.cachedPageIds()).toEqual(order === 'A then B' ? [0, 1] : [1, 0]);
      expect(kv.freePageIds()).toEqual([]);

      // One new page: the first released prompt's page is evicted and loses its key.
      const c = kv.createSequence();
      kv.appendTokens(c, 1);
      const evicted = order === 'A then B' ? 0 : 1;
      expect(kv.blockTable(c)).toEqual([evicted]);
      expect(kv.pageKey(evicted)).toBeUndefined();
      expect(kv.cachedPageIds()).toEqual([1 - evicted]);

      const [gone, kept] = order === 'A then B' ? [promptA, promptB] : [promptB, promptA];
      expect(kv.acquirePrefix(kv.createSequence(), [...gone, 0])).toBe(0);
      const hit = kv.createSequence();
      expect(kv.acquirePrefix(hit, [...kept, 0])).toBe(4);
      expect(kv.blockTable(hit)).toEqual([1 - evicted]);
    }
  });

  it("releases a sequence's pages tail first, and takes a free page before evicting any", () => {
    const kv = cached(3, 4);
    const prompt = range(10, 8);
    kv.freeSequence(prefill(kv, prompt).seq); // pages 0, 1 cached; page 2 free
    expect(kv.cachedPageIds()).toEqual([1, 0]);
    const x = kv.createSequence();
    kv.appendTokens(x, 4);
    expect(kv.blockTable(x)).toEqual([2]);
    expect(kv.cachedPageIds()).toEqual([1, 0]);
    kv.appendTokens(x, 4); // evicts page 1, the prompt's tail
    expect(kv.blockTable(x)).toEqual([2, 1]);
    expect(kv.acquirePrefix(kv.createSequence(), [...prompt, 0])).toBe(4);
  });

  it('counts cached pages as available: appends may use them, the error counts them', () => {
    const kv = cached(4, 4);
    kv.freeSequence(prefill(kv, range(0, 8)).seq);
    expect(kv.availablePages()).toBe(4);
    const s = kv.stats();
    expect([s.freePages, s.cachedPages, s.usedPages]).toEqual([2, 2, 0]);
    expect([s.bytesAllocated, s.bytesUsed, s.physicalTokens]).toEqual([0, 0, 0]);

    const b = kv.createSequence();
    let caught: unknown;
    try {
      kv.appendTokens(b, 17);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KvCacheExhaustedError);
    expect((caught as KvCacheExhaustedError).message).toBe(
      'KV cache exhausted: sequence 1 needs 5 more pages of 4 tokens but only 4 of 4 pages are free ' +
        '(1 sequences hold 0 pages)',
    );
    expect(kv.cachedPageIds()).toEqual([1, 0]);

    expect(kv.appendTokens(b, 16)).toEqual([]);
    expect(kv.blockTable(b)).toEqual([2, 3, 1, 0]);
    expect(kv.availablePages()).toBe(0);
    expect([kv.pageKey(0), kv.pageKey(1)]).toEqual([undefined, undefined]);
  });

  it('revives a cached page on a hit, and re-caches it as the most recently released', () => {
    const kv = cached(4, 4);
    const promptA = range(0, 9);
    kv.freeSequence(prefill(kv, promptA).seq); // pages 0, 1 cached, 2 freed
    kv.freeSequence(prefill(kv, range(50, 4)).seq); // page 2 cached
    expect(kv.cachedPageIds()).toEqual([1, 0, 2]);

    const b = kv.createSequence();
    expect(kv.acquirePrefix(b, promptA)).toBe(8);
    expect([kv.refCount(0), kv.refCount(1)]).toEqual([1, 1]);
    expect(kv.cachedPageIds()).toEqual([2]);
    expect(kv.stats().usedPages).toBe(2);

    kv.freeSequence(b);
    expect(kv.cachedPageIds()).toEqual([2, 1, 0]);
    // So the other prompt's page, released earlier, goes first.
    const c = kv.createSequence();
    kv.appendTokens(c, 8); // page 3 (free), then page 2 (evicted)
    expect(kv.blockTable(c)).toEqual([3, 2]);
    expect(kv.acquirePrefix(kv.createSequence(), promptA)).toBe(8);
  });
});

describe('truncate into a keyed page', () => {
  it('un-keys a page this sequence alone holds, which is then written in place', () => {
    const kv = cached(8, 4);
    const prompt = range(20, 8);
    const a = prefill(kv, prompt).seq; // pages 0, 1 keyed
    kv.truncate(a, 6);
    expect([kv.pageKey(0) !== undefined, kv.pageKey(1)]).toEqual([true, undefined]);
    expect(kv.appendTokens(a, 1)).toEqual([]);
    expect(kv.blockTable(a)).toEqual([0, 1]);
    kv.freeSequence(a);
    expect(kv.cachedPageIds()).toEqual([0]);
    expect(kv.freePageIds()).toEqual(range(1, 7));
    expect(kv.acquirePrefix(kv.createSequence(), [...prompt, 0])).toBe(4);
  });

  it('keeps a page truncated to its end, or past, keyed and cached', () => {
    const kv = cached(8, 4);
    const prompt = range(20, 8);
    const a = prefill(kv, prompt).seq;
    kv.truncate(a, 4);
    expect(kv.pageKey(1)).toBeDefined();
    expect(kv.cachedPageIds()).toEqual([1]);
    // The next append opens a fresh page, and recommitting re-keys nothing.
    kv.appendTokens(a, 4);
    expect(kv.blockTable(a)).toEqual([0, 2]);
    kv.commitTokens(a, [...prompt.slice(0, 4), 1, 2, 3, 4]);
    kv.freeSequence(a);
    const b = kv.createSequence();
    expect(kv.acquirePrefix(b, [...prompt, 0])).toBe(8);
    expect(kv.blockTable(b)).toEqual([0, 1]);
  });

  it('forgets the chain past the new length, so later pages are keyed after the new tokens', () => {
    const kv = cached(8, 4);
    const [x, y, z, w] = [range(0, 4), range(10, 4), range(20, 4), range(30, 4)];
    const s = prefill(kv, [...x, ...y]).seq; // pages 0 (x), 1 (y) keyed
    kv.truncate(s, 4); // page 1 released, still keyed and cached
    kv.appendTokens(s, 8); // page 2 holds z, page 3 holds w
    expect(kv.blockTable(s)).toEqual([0, 2, 3]);
    kv.commitTokens(s, [...x, ...z, ...w]);
    // Page 3's K/V follow x, z: a prompt x, y, w must not reach it through page 1.
    const a = kv.createSequence();
    expect(kv.acquirePrefix(a, [...x, ...y, ...w, 0])).toBe(8);
    expect(kv.blockTable(a)).toEqual([0, 1]);
    const b = kv.createSequence();
    expect(kv.acquirePrefix(b, [...x, ...z, ...w, 0])).toBe(12);
    expect(kv.blockTable(b)).toEqual([0, 2, 3]);
  });

  it('keeps a shared keyed page keyed and copies it on write, or un-keys it once it is no longer shared', () => {
    const kv = cached(8, 4);
    const prompt = range(20, 8);
    const a = prefill(kv, prompt).seq; // pages 0, 1 keyed
    const f = kv.fork(a);
    kv.truncate(f, 6);
    expect(kv.pageKey(1)).toBeDefined();
    expect(kv.appendTokens(f, 1)).toEqual<PageCopy[]>([{ srcPage: 1, dstPage: 2, tokens: 2 }]);
    expect(kv.pageKey(1)).toBeDefined();

    const g = kv.fork(a);
    kv.truncate(g, 6);
    kv.freeSequence(a);
    expect(kv.refCount(1)).toBe(1);
    expect(kv.pageKey(1)).toBeDefined();
    // g alone holds page 1 now: no copy, and the page leaves the cache before it is written.
    expect(kv.appendTokens(g, 1)).toEqual([]);
    expect(kv.blockTable(g)).toEqual([0, 1]);
    expect(kv.pageKey(1)).toBeUndefined();
  });
});

describe('appendTokensBatch with cached pages', () => {
  it('evicts nothing when the batch fails, and evicts in LRU order when it fits', () => {
    const kv = cached(4, 4);
    kv.freeSequence(prefill(kv, range(0, 8)).seq); // cached [1, 0], free [2, 3]
    const x = kv.createSequence();
    kv.appendTokens(x, 4); // page 2
    const y = kv.createSequence();
    // x needs 1 page, y 3: 4 > 3 available.
    let caught: unknown;
    try {
      kv.appendTokensBatch([
        { seq: x, n: 4 },
        { seq: y, n: 9 },
      ]);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KvCacheExhaustedError);
    expect([(caught as KvCacheExhaustedError).needed, (caught as KvCacheExhaustedError).free]).toEqual([
      3, 2,
    ]);
    expect(kv.cachedPageIds()).toEqual([1, 0]);
    expect(kv.freePageIds()).toEqual([3]);
    expect([kv.pageKey(0), kv.pageKey(1)].every((k) => k !== undefined)).toBe(true);
    expect([kv.length(x), kv.length(y)]).toEqual([4, 0]);
    expect([kv.blockTable(x), kv.blockTable(y)]).toEqual([[2], []]);

    expect(
      kv.appendTokensBatch([
        { seq: x, n: 4 },
        { seq: y, n: 5 },
      ]),
    ).toEqual([[], []]);
    expect([kv.blockTable(x), kv.blockTable(y)]).toEqual([
      [2, 3],
      [1, 0],
    ]);
    expect(kv.cachedPageIds()).toEqual([]);
    expect(kv.stats().cachedPages).toBe(0);
  });
});

describe('randomized invariants with the prefix cache', () => {
  /**
   * Requests share prompt prefixes from a small vocabulary, so hits, evictions and exhaustion all
   * happen. The simulated pool stores in each slot the whole token prefix up to that position (what
   * its K/V depend on): a page attached to the wrong prompt, or a cached page written over, reads
   * back wrong.
   */
  function runScenario(seed: number, options: PageAllocatorOptions, steps: number) {
    const random = mulberry32(seed);
    const int = (n: number) => Math.floor(random() * n);
    const pick = <T>(items: readonly T[]): T => items[int(items.length)];
    const { numPages, pageSize } = options;
    const kv = new PageAllocator(options);
    const pool: string[][] = Array.from({ length: numPages }, () => new Array<string>(pageSize).fill(''));
    const history = new Map<number, number[]>();
    const bases = Array.from({ length: 3 }, () => Array.from({ length: 4 * pageSize }, () => int(3)));
    const counts = { hits: 0, evictions: 0, exhaustions: 0 };

    const write = (seq: number, tokens: number[], from: number) => {
      const table = kv.blockTable(seq);
      for (let p = from; p < tokens.length; p++) {
        const page = table[Math.floor(p / pageSize)];
        expect(kv.refCount(page)).toBe(1);
        expect(kv.pageKey(page)).toBeUndefined();
        pool[page][p % pageSize] = tokens.slice(0, p + 1).join(',');
      }
    };
    const append = (seq: number, n: number): boolean => {
      const before = kv.stats();
      const cachedBefore = kv.cachedPageIds();
      let copies: PageCopy[];
      try {
        copies = kv.appendTokens(seq, n);
      } catch (e) {
        expect(e).toBeInstanceOf(KvCacheExhaustedError);
        expect(kv.stats()).toEqual(before);
        expect(kv.cachedPageIds()).toEqual(cachedBefore);
        counts.exhaustions++;
        return false;
      }
      if (kv.stats().cachedPages < before.cachedPages) counts.evictions++;
      for (const { srcPage, dstPage, tokens } of copies) {
        for (let slot = 0; slot < tokens; slot++) pool[dstPage][slot] = pool[srcPage][slot];
      }
      return true;
    };

    for (let step = 0; step < steps; step++) {
      const live = kv.sequences();
      const op = random();
      if (live.length === 0 || op < 0.25) {
        const base = pick(bases);
        const prompt = [
          ...base.slice(0, int(base.length + 1)),
          ...Array.from({ length: int(pageSize + 2) }, () => int(3)),
        ];
        const seq = kv.createSequence();
        const hit = kv.acquirePrefix(seq, prompt);
        expect(hit % pageSize).toBe(0);
        expect(hit).toBeLessThanOrEqual(Math.max(0, prompt.length - 1));
        if (hit > 0) counts.hits++;
        history.set(seq, prompt.slice(0, hit));
        checkInvariants(kv, pool, history);
        if (!append(seq, prompt.length - hit)) {
          kv.freeSequence(seq);
          history.delete(seq);
        } else {
          write(seq, prompt, hit);
          history.set(seq, prompt);
          kv.commitTokens(seq, prompt);
        }
      } else if (op < 0.35) {
        const parent = pick(live);
        history.set(kv.fork(parent), [...(history.get(parent) ?? [])]);
      } else if (op < 0.5) {
        const seq = pick(live);
        kv.freeSequence(seq);
        history.delete(seq);
      } else if (op < 0.6) {
        const seq = pick(live);
        const tokens = history.get(seq) ?? [];
        const length = int(tokens.length + 1);
        kv.truncate(seq, length);
        tokens.length = length;
      } else {
        const seq = pick(live);
        const tokens = history.get(seq) ?? [];
        const n = 1 + int(pageSize + 1);
        if (append(seq, n)) {
          const from = tokens.length;
          for (let i = 0; i < n; i++) tokens.push(int(3));
          write(seq, tokens, from);
          // Sometimes the engine commits only what it has verified so far.
          kv.commitTokens(seq, random() < 0.8 ? tokens : tokens.slice(0, int(tokens.length + 1)));
        }
      }
      checkInvariants(kv, pool, history);
    }
    return counts;
  }

  function checkInvariants(kv: PageAllocator, pool: string[][], history: Map<number, number[]>): void {
    const { numPages, pageSize } = kv;
    const references = new Array<number>(numPages).fill(0);
    for (const seq of kv.sequences()) {
      const table = kv.blockTable(seq);
      const tokens = history.get(seq) ?? [];
      expect(kv.length(seq)).toBe(tokens.length);
      expect(table.length).toBe(Math.ceil(tokens.length / pageSize));
      for (const page of table) references[page]++;
      const read = tokens.map((_, p) => pool[table[Math.floor(p / pageSize)]][p % pageSize]);
      expect(read).toEqual(tokens.map((_, p) => tokens.slice(0, p + 1).join(',')));
    }
    const free = new Set(kv.freePageIds());
    const cachedIds = kv.cachedPageIds();
    const cachedSet = new Set(cachedIds);
    expect(cachedSet.size).toBe(cachedIds.length);
    for (let page = 0; page < numPages; page++) {
      expect(kv.refCount(page)).toBe(references[page]);
      // Each page is exactly one of: referenced, free (unkeyed), cached (keyed).
      const state = [references[page] > 0, free.has(page), cachedSet.has(page)];
      expect(state.filter(Boolean)).toHaveLength(1);
      if (free.has(page)) expect(kv.pageKey(page)).toBeUndefined();
      if (cachedSet.has(page)) expect(kv.pageKey(page)).toBeDefined();
    }
    const s = kv.stats();
    expect(s.freePages + s.usedPages + s.cachedPages).toBe(s.totalPages);
    expect([s.freePages, s.cachedPages]).toEqual([free.size, cachedSet.size]);
    expect(kv.availablePages()).toBe(free.size + cachedSet.size);
    expect(s.prefixHits).toBeLessThanOrEqual(s.prefixQueries);
    expect(s.bytesWasted).toBeGreaterThanOrEqual(0);
  }

  it.each([
    { seed: 11, numPages: 16, pageSize: 4 },
    { seed: 12, numPages: 24, pageSize: 2 },
    { seed: 13, numPages: 12, pageSize: 3 },
  ])('holds for seed $seed ($numPages pages of $pageSize)', ({ seed, numPages, pageSize }) => {
    const counts = runScenario(seed, { numPages, pageSize, bytesPerTokenSlot: 1, prefixCache: true }, 500);
    expect(counts.hits).toBeGreaterThan(20);
    expect(counts.evictions).toBeGreaterThan(5);
    expect(counts.exhaustions).toBeGreaterThan(0);
  });

  it('holds with a hash that collides all the time (exactness does not rest on the hash)', () => {
    const counts = runScenario(
      14,
      {
        numPages: 16,
        pageSize: 2,
        bytesPerTokenSlot: 1,
        prefixCache: true,
        prefixHash: (_prev, tokens, start) => String(tokens[start]),
      },
      500,
    );
    expect(counts.hits).toBeGreaterThan(5);
  });
});
