import type { TuneResult } from './autotune.ts';

/**
 * Autotuning results kept in IndexedDB, keyed by adapter, browser version and the shapes searched,
 * so the search runs once per device and browser. Where IndexedDB is missing or refuses (private
 * windows, some workers) the cache quietly does nothing and the search simply runs again.
 */
const DB = { name: 'webgpu-inference-bench-autotune', store: 'autotune', version: 1 } as const;

function open(): Promise<IDBDatabase | undefined> {
  if (typeof indexedDB === 'undefined') return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const req = indexedDB.open(DB.name, DB.version);
    req.onupgradeneeded = () => {
      if (!req.result.objectStoreNames.contains(DB.store)) req.result.createObjectStore(DB.store);
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => resolve(undefined);
  });
}

export async function loadTuning(key: string): Promise<TuneResult | undefined> {
  const db = await open();
  if (!db?.objectStoreNames.contains(DB.store)) return undefined;
  return new Promise((resolve) => {
    try {
      const req = db.transaction(DB.store, 'readonly').objectStore(DB.store).get(key);
      req.onsuccess = () => resolve(req.result as TuneResult | undefined);
      req.onerror = () => resolve(undefined);
    } catch {
      resolve(undefined);
    }
  });
}

export async function saveTuning(key: string, value: TuneResult): Promise<void> {
  const db = await open();
  if (!db?.objectStoreNames.contains(DB.store)) return;
  await new Promise<void>((resolve) => {
    try {
      const tx = db.transaction(DB.store, 'readwrite');
      tx.objectStore(DB.store).put(value, key);
      tx.oncomplete = () => resolve();
      tx.onerror = () => resolve();
    } catch {
      resolve();
    }
  });
}
