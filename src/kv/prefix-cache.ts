import { fmix32 } from '../random.ts';

/**
 * The index behind the allocator's automatic prefix cache (DESIGN §8 "Prefix cache"), as vLLM's
 * automatic prefix caching: a full KV page is keyed by a hash of the previous page's key and its own
 * token ids, so a key names a whole token prefix, and a new prompt finds the pages already computed
 * for its longest cached prefix by walking its full pages from the start.
 *
 * The index only knows keys, token ids and identities of pages; refcounts, the free list and the
 * LRU order of evictable pages belong to `PageAllocator`.
 *
 * Collisions never return wrong K/V. A page's K/V depend on its own tokens and on every token before
 * it, so a lookup accepts a page only when its stored token ids equal the prompt's *and* its stored
 * parent is exactly the page accepted one step before. Parents are compared by entry id: every
 * registration gets a fresh, never reused number, so by induction an accepted chain is exactly a
 * registered chain, whatever the hash did. The hash's strength therefore only affects the hit rate.
 */

/** A page key: 16 hex digits (64 bits) from the default hash; `ROOT_KEY` stands before page 0. */
export type PageHashFn = (prevKey: string, tokens: readonly number[], start: number, end: number) => string;

export const ROOT_KEY = '';
/** The entry id standing before page 0; registered pages get 1, 2, 3, … */
export const ROOT_ENTRY = 0;

/** One processed page of a sequence's chain: its key and the entry that holds its identity. */
export interface ChainLink {
  readonly key: string;
  readonly entry: number;
}

export const ROOT_LINK: ChainLink = { key: ROOT_KEY, entry: ROOT_ENTRY };

const SEED_A = 0x9747b28c;
const SEED_B = 0x2545f491;

/** One MurmurHash3 x86_32 body round over a 32-bit word. */
function round(h: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  let x = h ^ k;
  x = (x << 13) | (x >>> 19);
  return (Math.imul(x, 5) + 0xe6546b64) | 0;
}

/** MurmurHash3 x86_32's finalization: the length in bytes, then fmix32. */
function finish(h: number, bytes: number): number {
  return fmix32(h ^ bytes);
}

/** MurmurHash3 x86_32 of 32-bit words read as little-endian bytes (exported for its test vectors). */
export function murmur3Words(words: readonly number[], seed: number): number {
  let h = seed | 0;
  for (const word of words) h = round(h, word);
  return finish(h, words.length * 4);
}

function hex32(x: number): string {
  return x.toString(16).padStart(8, '0');
}

/**
 * The default page key: MurmurHash3 x86_32 under two seeds over the words
 * `[prevKey high 32 bits, prevKey low 32 bits, tokens[start], …, tokens[end - 1]]`, the two results
 * side by side as 16 hex digits. Deterministic across runs and machines. Token ids must be integers
 * in 0…2³²−1 (the allocator checks).
 */
export function pageHash(prevKey: string, tokens: readonly number[], start: number, end: number): string {
  const prevHi = prevKey === ROOT_KEY ? 0 : Number.parseInt(prevKey.slice(0, 8), 16);
  const prevLo = prevKey === ROOT_KEY ? 0 : Number.parseInt(prevKey.slice(8, 16), 16);
  let a = round(round(SEED_A, prevHi), prevLo);
  let b = round(round(SEED_B, prevHi), prevLo);
  for (let i = start; i < end; i++) {
    a = round(a, tokens[i]);
    b = round(b, tokens[i]);
  }
  const bytes = (end - start + 2) * 4;
  return hex32(finish(a, bytes)) + hex32(finish(b, bytes));
}

/**
 * Keyed pages: key → page, and for each keyed page its key, token ids, entry id and parent entry id.
 * A page is keyed exactly when the map sends its key to it.
 */
export class PrefixIndex {
  private readonly byKey = new Map<string, number>();
  private readonly keys: (string | undefined)[];
  private readonly tokens: (Uint32Array | undefined)[];
  /** Entry id of each keyed page; `ROOT_ENTRY` (0) when unkeyed. Entry ids are never reused. */
  private readonly entries: Float64Array;
  private readonly parents: Float64Array;
  private nextEntry = ROOT_ENTRY + 1;

  constructor(
    numPages: number,
    private readonly hash: PageHashFn = pageHash,
  ) {
    this.keys = new Array<string | undefined>(numPages).fill(undefined);
    this.tokens = new Array<Uint32Array | undefined>(numPages).fill(undefined);
    this.entries = new Float64Array(numPages);
    this.parents = new Float64Array(numPages);
  }

  /** Keyed pages. */
  get size(): number {
    return this.byKey.size;
  }

  keyOf(prev: ChainLink, tokens: readonly number[], start: number, end: number): string {
    return this.hash(prev.key, tokens, start, end);
  }

  isKeyed(page: number): boolean {
    return this.entries[page] !== ROOT_ENTRY;
  }

  pageKey(page: number): string | undefined {
    return this.keys[page];
  }

  /** The chain link a keyed page stands for. */
  linkOf(page: number): ChainLink {
    return { key: this.keys[page] ?? ROOT_KEY, entry: this.entries[page] };
  }

  /**
   * The page cached under `key` as the successor of `prev` holding exactly `tokens[start..end)`,
   * or -1. A key whose page has other tokens or another parent is a collision (or a stale orphan,
   * whose parent was evicted) and misses.
   */
  find(key: string, prev: ChainLink, tokens: readonly number[], start: number, end: number): number {
    const page = this.byKey.get(key);
    if (page === undefined) return -1;
    return this.matches(page, prev, tokens, start, end) ? page : -1;
  }

  /**
   * Registers `page` as holding `tokens[start..end)` after `prev`, under `key`. Returns the link the
   * sequence's chain continues with, and a page that lost its key to this one (or -1):
   * - `page` already keyed with this very identity: nothing changes (a fork's shared page).
   * - `page` keyed with another identity: it is re-keyed (its old key dropped first).
   * - another page holds `key` with this identity: it stays the cached one and `page` stays unkeyed
   *   (no retroactive dedupe); the chain continues through the existing entry.
   * - another page holds `key` with another identity (a stale orphan, or a true hash collision): it
   *   loses the key, which `page` takes; the caller frees the loser if nothing references it.
   */
  register(
    page: number,
    key: string,
    prev: ChainLink,
    tokens: readonly number[],
    start: number,
    end: number,
  ): { link: ChainLink; displaced: number } {
    if (this.isKeyed(page)) {
      if (this.keys[page] === key && this.matches(page, prev, tokens, start, end)) {
        return { link: this.linkOf(page), displaced: -1 };
      }
      this.unkey(page);
    }
    let displaced = -1;
    const holder = this.byKey.get(key);
    if (holder !== undefined) {
      if (this.matches(holder, prev, tokens, start, end)) return { link: this.linkOf(holder), displaced: -1 };
      this.unkey(holder);
      displaced = holder;
    }
    const entry = this.nextEntry++;
    this.byKey.set(key, page);
    this.keys[page] = key;
    this.tokens[page] = Uint32Array.from(tokens.slice(start, end));
    this.entries[page] = entry;
    this.parents[page] = prev.entry;
    return { link: { key, entry }, displaced };
  }

  /** Drops a page's key, if any: it is no longer found, and its contents may be overwritten. */
  unkey(page: number): void {
    const key = this.keys[page];
    if (key === undefined) return;
    if (this.byKey.get(key) === page) this.byKey.delete(key);
    this.keys[page] = undefined;
    this.tokens[page] = undefined;
    this.entries[page] = ROOT_ENTRY;
    this.parents[page] = ROOT_ENTRY;
  }

  private matches(
    page: number,
    prev: ChainLink,
    tokens: readonly number[],
    start: number,
    end: number,
  ): boolean {
    const stored = this.tokens[page];
    if (stored === undefined || this.parents[page] !== prev.entry || stored.length !== end - start)
      return false;
    for (let i = 0; i < stored.length; i++) if (stored[i] !== tokens[start + i]) return false;
    return true;
  }
}
