import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TuneResult } from '../../measure/autotune.ts';
import { fileTuningStore } from './tuning-file.ts';

describe('the Node tuning store', () => {
  it('keeps each key across store objects (and so across runs), and creates its folder', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tuning-')), 'cache', 'tuning.json');
    const a = { searchMs: 1 } as unknown as TuneResult;
    const b = { searchMs: 2 } as unknown as TuneResult;
    await fileTuningStore(path).put('a', a);
    await fileTuningStore(path).put('b', b);
    const store = fileTuningStore(path);
    expect(await store.get('a')).toEqual(a);
    expect(await store.get('b')).toEqual(b);
    expect(await store.get('c')).toBeUndefined();
  });

  it('treats a missing or corrupt file as empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuning-'));
    expect(await fileTuningStore(join(dir, 'none.json')).get('a')).toBeUndefined();
    writeFileSync(join(dir, 'bad.json'), '{not json');
    expect(await fileTuningStore(join(dir, 'bad.json')).get('a')).toBeUndefined();
  });
});
