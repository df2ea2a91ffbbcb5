import { describe, expect, it } from 'vitest';
import { KernelError } from '../errors.ts';
import { composeShader, defineParams, packWords, WGSL_LIBRARY, type WgslLibraryName } from './wgsl.ts';

const PARAMS = defineParams({ batch: 'u32', heads: 'u32', scale: 'f32' });

describe('defineParams', () => {
  it('generates the WGSL struct in field order', () => {
    expect(PARAMS.wgsl).toBe('struct Params {\n  batch: u32,\n  heads: u32,\n  scale: f32,\n}');
  });

  it('packs named values in field order, 4 bytes each, padded to 16 bytes', () => {
    // Given out of order on purpose: the layout, not the object literal, decides the order.
    const data = PARAMS.pack('test', { scale: 0.125, heads: 9, batch: 4 });
    expect(data.byteLength).toBe(16);
    const view = new DataView(data);
    expect(view.getUint32(0, true)).toBe(4);
    expect(view.getUint32(4, true)).toBe(9);
    expect(view.getFloat32(8, true)).toBe(0.125);
    expect(view.getUint32(12, true)).toBe(0);
  });

  it('sizes five fields to 32 bytes', () => {
    const five = defineParams({ a: 'u32', b: 'u32', c: 'u32', d: 'u32', e: 'f32' });
    const data = five.pack('test', { a: 1, b: 2, c: 3, d: 4, e: -2.5 });
    expect(data.byteLength).toBe(32);
    expect(new DataView(data).getFloat32(16, true)).toBe(-2.5);
  });

  it('throws KernelError on a missing or an extra field, naming it', () => {
    const missing = { batch: 1, heads: 2 } as unknown as Parameters<typeof PARAMS.pack>[1];
    expect(() => PARAMS.pack('attention_decode', missing)).toThrow(KernelError);
    expect(() => PARAMS.pack('attention_decode', missing)).toThrow(/attention_decode params: missing scale/);
    const extra = { batch: 1, heads: 2, scale: 1, kvHeads: 3 };
    expect(() => PARAMS.pack('attention_decode', extra)).toThrow(/unknown kvHeads/);
  });

  it('throws KernelError on a u32 that is negative, fractional or too large', () => {
    for (const batch of [-1, 1.5, 2 ** 32]) {
      expect(() => PARAMS.pack('k', { batch, heads: 1, scale: 1 })).toThrow(KernelError);
    }
    const max = PARAMS.pack('k', { batch: 2 ** 32 - 1, heads: 1, scale: 1 });
    expect(new DataView(max).getUint32(0, true)).toBe(0xffffffff);
  });

  it('rejects field names that are not WGSL identifiers', () => {
    expect(() => defineParams({ '0': 'u32' })).toThrow(KernelError);
    expect(() => defineParams({ 'a-b': 'u32' })).toThrow(KernelError);
    expect(() => defineParams({})).toThrow(KernelError);
  });
});

describe('packWords', () => {
  it('packs positional words and pads an empty list to 16 bytes', () => {
    const data = packWords('probe', [
      { type: 'f32', value: 0.999 },
      { type: 'u32', value: 7 },
    ]);
    const view = new DataView(data);
    expect(view.getFloat32(0, true)).toBeCloseTo(0.999, 6);
    expect(view.getUint32(4, true)).toBe(7);
    expect(packWords('empty', []).byteLength).toBe(16);
  });
});

describe('composeShader', () => {
  const code = [
    'override WG: u32;',
    '//#const MAX_M  // largest batch',
    '//#include grid',
    '//#params',
    '@group(0) @binding(0) var<uniform> p: Params;',
  ].join('\n');

  it('splices the struct, the constant with its comment and the snippet in place', () => {
    const shader = composeShader({ label: 'demo', code, params: PARAMS, constants: { MAX_M: 8 } });
    const lines = shader.code.split('\n');
    expect(lines[0]).toBe('override WG: u32;');
    expect(lines[1]).toBe('const MAX_M: u32 = 8u;  // largest batch');
    expect(shader.code).toContain(`${WGSL_LIBRARY.grid.trimEnd()}\nstruct Params {\n  batch: u32,`);
    expect(shader.code).toContain('fn workgroupIndex(wid: vec3u, nwg: vec3u) -> u32');
    expect(shader.code).not.toContain('//#');
    expect(shader.params).toBe(PARAMS);
  });

  it('throws KernelError naming the shader on an unknown include', () => {
    const bad = code.replace('//#include grid', '//#include kv_layuot');
    expect(() =>
      composeShader({ label: 'demo', code: bad, params: PARAMS, constants: { MAX_M: 8 } }),
    ).toThrow(/shader demo: line 3: unknown include "kv_layuot"/);
  });

  it('throws on an unknown directive, a missing constant, an unused one, or no //#params', () => {
    const compose = (c: string, constants: Record<string, number>) => () =>
      composeShader({ label: 'demo', code: c, params: PARAMS, constants });
    expect(compose(`${code}\n//#inlcude grid`, { MAX_M: 8 })).toThrow(/unknown directive \/\/#inlcude/);
    expect(compose(code, {})).toThrow(/no value given for constant MAX_M/);
    expect(compose(code, { MAX_M: 8, ROWS: 4 })).toThrow(/ROWS are given but have no \/\/#const line/);
    expect(compose(code, { MAX_M: 8.5 })).toThrow(/MAX_M = 8.5 is not a u32/);
    expect(compose(code.replace('//#params', ''), { MAX_M: 8 })).toThrow(/no \/\/#params/);
    expect(compose(`${code}\n//#include grid`, { MAX_M: 8 })).toThrow(KernelError);
  });

  it('composes every model kernel shader at import (a bad directive would throw here)', async () => {
    await expect(
      Promise.all([
        import('./attention.ts'),
        import('./elementwise.ts'),
        import('./gemv.ts'),
        import('./kv-write.ts'),
        import('./matmul.ts'),
        import('./packed.ts'),
        import('./rowwise.ts'),
      ]),
    ).resolves.toHaveLength(7);
  });
});

describe('composeShader slots', () => {
  const code = ['//#include grid', '//#include weights', '//#params', 'fn main() {}'].join('\n');
  const compose = (c: string, slots?: Record<string, string>) => () =>
    composeShader({
      label: 'packed',
      code: c,
      params: PARAMS,
      slots: slots as Record<string, WgslLibraryName> | undefined,
    });

  it('fills a slot with the snippet the wrapper names, so one source serves every format', () => {
    const int4 = compose(code, { weights: 'weights_int4' })();
    const int8 = compose(code, { weights: 'weights_int8' })();
    expect(int4.code).toContain(WGSL_LIBRARY.weights_int4.trim().split('\n').at(-1));
    expect(int4.code).toContain('const W_VECS_PER_GROUP: u32 = 1u;');
    expect(int8.code).toContain('const W_VECS_PER_GROUP: u32 = 2u;');
    expect(int4.code).not.toContain('//#');
  });

  it("hoists a snippet's enable directive to the top of the module, where WGSL requires it", () => {
    const shader = compose(code, { weights: 'weights_f16_native' })();
    const lines = shader.code.split('\n');
    expect(lines[0]).toBe('enable f16;');
    expect(lines.filter((l) => l.trim().startsWith('enable '))).toEqual(['enable f16;']);
    expect(shader.code).toContain('alias WElem = vec4<f16>;');
  });

  it('rejects an unfilled slot, an unused one, a bad snippet, and a slot named like a snippet', () => {
    expect(compose(code)).toThrow(/shader packed: line 2: unknown include "weights"/);
    expect(compose(code, { weights: 'weights_int4', scales: 'grid' })).toThrow(
      /slots scales are given but have no \/\/#include line/,
    );
    expect(compose(code, { weights: 'weights_int3' })).toThrow(
      /unknown snippet "weights_int3" for slot "weights"/,
    );
    expect(compose(code.replace('weights', 'grid2'), { grid: 'kv_layout' })).toThrow(
      /slot "grid" has the name of a snippet/,
    );
  });

  it('rejects a slot included twice, and a snippet reached both directly and through a slot', () => {
    const twice = `${code}\n//#include weights`;
    expect(compose(twice, { weights: 'weights_int4' })).toThrow(/line 5: slot "weights" is included twice/);
    const both = code.replace('//#include grid', '//#include weights_int8');
    expect(compose(both, { weights: 'weights_int8' })).toThrow(/"weights_int8" is included twice/);
  });
});
