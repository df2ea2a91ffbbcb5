import type { TuningStore } from '../../measure/tuning-cache.ts';

/**
 * The browser runtime's tuning store: one IndexedDB object store. Where IndexedDB is missing or
 * refuses (private windows, some workers) it quietly keeps nothing, and the search runs each time.
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

/** The browser's store: one IndexedDB object store; a store that cannot be opened keeps nothing. */
export const indexedDbTuningStore: TuningStore = {
  async get(key) {
    const db = await open();
    if (!db?.objectStoreNames.contains(DB.store)) return undefined;
    return new Promise<unknown>((resolve) => {
      try {
        const req = db.transaction(DB.store, 'readonly').objectStore(DB.store).get(key);
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => resolve(undefined);
      } catch {
        resolve(undefined);
      }
    });
  },
  async put(key, value) {
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
  },
};
