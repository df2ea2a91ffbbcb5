import { describe, expect, it } from 'vitest';
import { presetConfig } from '../model/config.ts';
import { SEARCH } from './autotune.ts';
import { type TuningKey, tuningKey, validCachedTuning } from './tuning-cache.ts';

const key: TuningKey = {
  adapter: {
    vendor: 'google',
    architecture: 'swiftshader',
    device: '',
    description: '',
    isFallbackAdapter: true,
  },
  browser: 'Chromium 150',
  toolVersion: '0.1.0',
  config: presetConfig('ci-tiny'),
  gemvBatches: [1],
  decodeContext: 0,
  weightFormat: 'f32',
  fused: true,
};

const entry = {
  variants: {
    matmul: { family: 'tile', tm: 8, tn: 16, ku: 1, wgX: 8, wgY: 8 },
    gemv: { family: 'cols8', wg: 16 },
    rmsnorm: { family: 'rowwise' },
    attentionPrefill: { family: 'direct4' },
    attentionDecode: { family: 'direct' },
    packedGemv: { family: 'reduce', lanes: 32 },
    packedMatmul: { family: 'register', rows: 4, cols: 4, wgX: 8, wgY: 8 },
  },
  choices: [
    {
      op: 'matmul',
      shape: 'L=256',
      chosen: 'tile(tm=8,tn=16,ku=1,wgX=8,wgY=8)',
      trials: [
        { variant: 'tile(tm=8,tn=16,ku=1,wgX=8,wgY=8)', valid: true, ms: 3, rung: 2 },
        { variant: 'tile(tm=16,tn=16,ku=2,wgX=16,wgY=4)', valid: false, ms: null, skipped: true },
      ],
      search: {
        method: 'successive-halving',
        eta: 3,
        reps0: 1,
        budgetMs: 15000,
        space: 42,
        tried: 20,
        rungs: 3,
        budgetSpent: true,
      },
    },
  ],
  searchMs: 21000,
};

describe('tuning cache', () => {
  it('keys on the search settings and the spaces as well as the device and the model', () => {
    const k = JSON.parse(tuningKey(key));
    expect(k.search).toEqual(JSON.parse(JSON.stringify(SEARCH)));
    expect(k.candidates.matmul).toContainEqual({ family: 'tile', tm: 16, tn: 16, ku: 2, wgX: 16, wgY: 4 });
    expect(tuningKey({ ...key, gemvBatches: [1, 4] })).not.toBe(tuningKey(key));
    expect(tuningKey({ ...key, weightFormat: 'int8' })).not.toBe(tuningKey(key));
  });

  it('reads back a cached search with its rungs and budget, and refuses a winner outside the space', () => {
    const read = validCachedTuning(JSON.parse(JSON.stringify(entry)));
    expect(read?.variants.matmul).toEqual(entry.variants.matmul);
    expect(read?.choices[0].trials[0].rung).toBe(2);
    expect(read?.choices[0].trials[1].skipped).toBe(true);
    expect(read?.choices[0].search?.budgetMs).toBe(15000);
    // A 32-wide tile is not in today's space (and register8 no longer exists).
    const stale = { ...entry, variants: { ...entry.variants, matmul: { ...entry.variants.matmul, tn: 32 } } };
    expect(validCachedTuning(stale)).toBeUndefined();
    const old = {
      ...entry,
      variants: { ...entry.variants, matmul: { family: 'register8', wgX: 8, wgY: 8 } },
    };
    expect(validCachedTuning(old)).toBeUndefined();
  });
});
