import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIsFresh } from './build-fresh.ts';
import { BUILT_CLIS, builtCliPath } from './built-clis.ts';

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
  if (node !== null) for (const cli of BUILT_CLIS) put(builtCliPath(cli), node);
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

  it("counts a CLI's source as an input and a built CLI as an output", () => {
    // A CLI edited after the build.
    const edited = tree(100, 200, 200);
    mkdirSync(join(edited, 'bench'));
    writeFileSync(join(edited, 'bench/bench.ts'), '');
    utimesSync(join(edited, 'bench/bench.ts'), 300, 300);
    utimesSync(join(edited, 'bench'), 1, 1);
    expect(buildIsFresh(edited)).toBe(false);
    // A dist-node/ from before the CLIs were built there.
    const older = tree(100, 200, 200);
    rmSync(join(older, 'dist-node/cli-bench.mjs'));
    expect(buildIsFresh(older)).toBe(false);
  });
});
