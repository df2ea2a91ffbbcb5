import { describe, expect, it } from 'vitest';
import { builtCliOf } from './built-clis.ts';

describe('builtCliOf', () => {
  it('maps an engine CLI to its built file, and any other script to none', () => {
    expect(builtCliOf('bench/bench.ts')).toBe('dist-node/cli-bench.mjs');
    expect(builtCliOf('./bench/serve-api.ts')).toBe('dist-node/cli-serve-api.mjs');
    expect(builtCliOf('bench/capacity.ts')).toBeUndefined();
    expect(builtCliOf('bench/kit.ts')).toBeUndefined();
    expect(builtCliOf('src/bench.ts')).toBeUndefined();
  });
});
