import { describe, expect, it } from 'vitest';
import {
  DEFAULT_VARIANTS,
  defaultVariants,
  GEMV_FAMILIES,
  gemvSpace,
  gemvSpace as gemvs,
  graphFuses,
  MATMUL_FAMILIES,
  MATMUL_SPACE,
  type MatmulVariant,
  matmulSpace,
  matmulTestSet,
  SOFTWARE_DEFAULT_VARIANTS,
  spaceByDistance,
  variantName,
} from './variants.ts';

describe('tuning spaces', () => {
  it('orders points by distance from the centre, families interleaved at each distance', () => {
    const f1 = [
      { point: 'a1', distance: 1 },
      { point: 'a0', distance: 0 },
      { point: 'a2', distance: 2 },
    ];
    const f2 = [
      { point: 'b1', distance: 1 },
      { point: 'b0', distance: 0 },
    ];
    expect(spaceByDistance([f1, f2])).toEqual(['a0', 'b0', 'a1', 'b1', 'a2']);
  });

  it('the matmul space is the whole product, each point once, the family centres first', () => {
    const space = matmulSpace();
    // 3 tm × 3 tn × 2 ku × 2 workgroups, and 3 workgroups × 2 tileK.
    expect(space).toHaveLength(3 * 3 * 2 * 2 + 3 * 2);
    expect(new Set(space.map(variantName)).size).toBe(space.length);
    expect(space.slice(0, MATMUL_FAMILIES)).toEqual([
      { family: 'tile', tm: 8, tn: 8, ku: 1, wgX: 8, wgY: 8 },
      { family: 'tiled', wgX: 16, wgY: 16, tileK: 16 },
    ]);
    // Distance 1 next: the tile's shape changes before its K unroll and workgroup.
    expect(space.slice(2, 8).map(variantName)).toEqual([
      'tile(tm=4,tn=8,ku=1,wgX=8,wgY=8)',
      'tile(tm=16,tn=8,ku=1,wgX=8,wgY=8)',
      'tile(tm=8,tn=4,ku=1,wgX=8,wgY=8)',
      'tile(tm=8,tn=16,ku=1,wgX=8,wgY=8)',
      'tile(tm=8,tn=8,ku=2,wgX=8,wgY=8)',
      'tile(tm=8,tn=8,ku=1,wgX=16,wgY=4)',
    ]);
    expect(space.at(-1)).toEqual({ family: 'tile', tm: 16, tn: 16, ku: 2, wgX: 16, wgY: 4 });
  });

  it('the test set covers every value of every parameter with the centres and their neighbours', () => {
    const set = matmulTestSet();
    // 1 centre + 2 tm + 2 tn + 1 ku + 1 wg for the tile; 1 + 2 wg + 1 tileK for the tiled family.
    expect(set).toHaveLength(7 + 4);
    const tiles = set.filter((v): v is Extract<MatmulVariant, { family: 'tile' }> => v.family === 'tile');
    const tileds = set.filter((v): v is Extract<MatmulVariant, { family: 'tiled' }> => v.family === 'tiled');
    expect(new Set(tiles.map((v) => v.tm))).toEqual(new Set(MATMUL_SPACE.tile.tm));
    expect(new Set(tiles.map((v) => v.tn))).toEqual(new Set(MATMUL_SPACE.tile.tn));
    expect(new Set(tiles.map((v) => v.ku))).toEqual(new Set(MATMUL_SPACE.tile.ku));
    expect(new Set(tiles.map((v) => `${v.wgX}x${v.wgY}`))).toEqual(new Set(['8x8', '16x4']));
    expect(new Set(tileds.map((v) => `${v.wgX}x${v.wgY}`))).toEqual(new Set(['16x16', '8x8', '16x8']));
    expect(new Set(tileds.map((v) => v.tileK))).toEqual(new Set([16, 32]));
  });

  it('the GEMV space is its families × their workgroup sizes, each family centre first', () => {
    const space = gemvSpace().map(variantName);
    expect(space).toHaveLength(1 + 4 + 4 + 4 + 3);
    expect(space.slice(0, GEMV_FAMILIES)).toEqual([
      'reduce',
      'rowwise(wg=64)',
      'cols4(wg=32)',
      'cols8(wg=16)',
      'subgroup(wg=64)',
    ]);
  });
});

describe('the defaults without the autotuner', () => {
  it('are the GPU ones on a GPU and the barrier-free ones on a software adapter, both fusing', () => {
    expect(defaultVariants(false)).toBe(DEFAULT_VARIANTS);
    expect(defaultVariants(true)).toBe(SOFTWARE_DEFAULT_VARIANTS);
    for (const v of [DEFAULT_VARIANTS, SOFTWARE_DEFAULT_VARIANTS]) expect(graphFuses(v, false)).toBe(true);
    expect(graphFuses(SOFTWARE_DEFAULT_VARIANTS, true)).toBe(true);
    // The software defaults lie inside the spaces the autotuner searches.
    expect(matmulSpace().map(variantName)).toContain(variantName(SOFTWARE_DEFAULT_VARIANTS.matmul));
    expect(gemvs().map(variantName)).toContain(variantName(SOFTWARE_DEFAULT_VARIANTS.gemv));
  });
});
