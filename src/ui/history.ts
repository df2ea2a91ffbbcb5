/**
 * Runs kept in this browser (IndexedDB), so a user can come back to them and compare them. Stored
 * results are validated again when read: the store may hold runs written by an older version.
 */
import { type BenchResult, BenchResultSchema } from '../results/schema.ts';

/**
 * Where history lives: a database of its own, so its version and stores never collide with the
 * engine's (the autotuner keeps its cache in 'webgpu-inference-bench'). Bump `version` with a
 * migration when the store's shape changes.
 */
const DB = { name: 'webgpu-inference-bench-history', version: 1, store: 'runs' } as const;

interface StoredRun {
  id?: number;
  savedAt: string;
  result: unknown;
}

export interface HistoryEntry {
  id: number;
  savedAt: string;
  result: BenchResult;
}

export interface HistoryListing {
  entries: HistoryEntry[];
  /** Ids of stored runs this version cannot read; the list offers to delete them. */
  unreadable: number[];
}

function done<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB request failed'));
  });
}

let dbPromise: Promise<IDBDatabase> | undefined;

function open(): Promise<IDBDatabase> {
  dbPromise ??= new Promise((resolve, reject) => {
    if (!globalThis.indexedDB) {
      reject(new Error('IndexedDB is not available in this browser (private mode?)'));
      return;
    }
    const request = indexedDB.open(DB.name, DB.version);
    request.onupgradeneeded = () => {
      request.result.createObjectStore(DB.store, { keyPath: 'id', autoIncrement: true });
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('Could not open IndexedDB'));
  });
  return dbPromise;
}

async function store(mode: IDBTransactionMode): Promise<IDBObjectStore> {
  return (await open()).transaction(DB.store, mode).objectStore(DB.store);
}

export async function saveRun(result: BenchResult): Promise<number> {
  const record: StoredRun = { savedAt: new Date().toISOString(), result };
  return Number(await done((await store('readwrite')).add(record)));
}

/** Every stored run, newest first. */
export async function listRuns(): Promise<HistoryListing> {
  const records = (await done((await store('readonly')).getAll())) as StoredRun[];
  const entries: HistoryEntry[] = [];
  const unreadable: number[] = [];
  for (const r of records) {
    if (r.id === undefined) continue;
    const parsed = BenchResultSchema.safeParse(r.result);
    if (parsed.success) entries.push({ id: r.id, savedAt: r.savedAt, result: parsed.data });
    else unreadable.push(r.id);
  }
  entries.sort((a, b) => b.id - a.id);
  return { entries, unreadable };
}

export async function deleteRun(id: number): Promise<void> {
  await done((await store('readwrite')).delete(id));
}
