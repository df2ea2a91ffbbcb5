import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md draws the layers of src/; the import check (.dependency-cruiser.cjs) holds
 * their order. This keeps the drawing honest: the same layers, top to bottom, as the rules the
 * check enforces.
 */
const require = createRequire(import.meta.url);
const config = require('../.dependency-cruiser.cjs') as {
  forbidden: { name: string; from: { path?: string }; to: { path?: string | string[] } }[];
};

/** The layers' path patterns, top to bottom, as the check's upward rules list them. */
function layerPatterns(): RegExp[] {
  const upward = config.forbidden.filter((r) => r.name.startsWith('no-upward-from-'));
  // Each rule forbids its layer importing every layer above it: the first rule's targets are the top layer.
  const top = upward[0].to.path as string[];
  return [...top, ...upward.map((r) => r.from.path as string)].map((p) => new RegExp(p));
}

/** The folders that open each layer's line in the drawing, in order (the first code block). */
function drawnLayers(): string[] {
  const doc = readFileSync(new URL('../docs/architecture.md', import.meta.url), 'utf8');
  const drawing = doc.split('```')[1];
  return drawing
    .split('\n')
    .map((line) => /^ {2}([a-z-]+\/|leaves)\s/.exec(line)?.[1])
    .filter((x): x is string => x !== undefined);
}

describe('the architecture drawing', () => {
  it('lists the layers of the import check, top to bottom', () => {
    const patterns = layerPatterns();
    const drawn = drawnLayers().filter((d) => d !== 'shaders/' && d !== 'e2e/');
    // Each drawn layer (a folder, or the leaf files at the root of src/) matches its rule, in order.
    const sample = (d: string) => (d === 'leaves' ? 'src/errors.ts' : `src/${d}x.ts`);
    const layerOf = (d: string) => patterns.findIndex((p) => p.test(sample(d)));
    const order = drawn.map(layerOf);
    expect(
      order.every((i) => i >= 0),
      `drawn: ${drawn.join(' ')}`,
    ).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(new Set(order).size).toBe(patterns.length);
  });
});
