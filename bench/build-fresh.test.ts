import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIsFresh } from './build-fresh.ts';

/** A tree with one source and both builds' outputs, each file at the time given (seconds). */
function tree(source: number, page: number | null, node: number | null): string {
  const root = mkdtempSync(join(tmpdir(), 'fresh-'));
  const put = (path: string, at: number) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), '');
    utimesSync(join(root, path), at, at);
  };
  put('src/model/a.ts', source);
  // Folders take the time of their newest change too; keep them old.
  utimesSync(join(root, 'src/model'), 1, 1);
  utimesSync(join(root, 'src'), 1, 1);
  if (page !== null) put('dist/index.html', page);
  if (node !== null) put('dist-node/host.mjs', node);
  return root;
}

describe('buildIsFresh', () => {
  it('is fresh only when both builds exist and are newer than every source', () => {
    expect(buildIsFresh(tree(100, 200, 200))).toBe(true);
    // A source edited after the build, in either build's view.
    expect(buildIsFresh(tree(300, 200, 400))).toBe(false);
    expect(buildIsFresh(tree(300, 400, 200))).toBe(false);
    // A build missing.
    expect(buildIsFresh(tree(100, 200, null))).toBe(false);
    expect(buildIsFresh(tree(100, null, 200))).toBe(false);
  });
});
