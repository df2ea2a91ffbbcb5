import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TuningStore } from '../../measure/tuning-cache.ts';

/**
 * The Node runtime's tuning store: every key in one JSON file (the host uses results/.cache/). A
 * missing or unreadable file holds nothing; what it holds is validated by loadTuning like any cache.
 */
export function fileTuningStore(path: string): TuningStore {
  const readAll = (): Record<string, unknown> => {
    try {
      const data: unknown = JSON.parse(readFileSync(path, 'utf8'));
      return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  };
  return {
    async get(key) {
      return readAll()[key];
    },
    async put(key, value) {
      const all = readAll();
      all[key] = value;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, JSON.stringify(all));
    },
  };
}
