import { describe, expect, it } from 'vitest';
import { unrollTile } from './unroll.ts';

describe('unrollTile', () => {
  it('repeats a line over the axes it mentions, $u outermost, then $i, then $j', () => {
    const code = ['head', '  let a$u_$i = x[$i + $u];', '  acc[$ij] += a$i * b$j;', 'tail'].join('\n');
    expect(unrollTile(code, { rows: 2, cols: 3, unroll: 2 }).split('\n')).toEqual([
      'head',
      '  let a0_0 = x[0 + 0];',
      '  let a0_1 = x[1 + 0];',
      '  let a1_0 = x[0 + 1];',
      '  let a1_1 = x[1 + 1];',
      // $ij is row-major over cols = 3: (1, 2) is 5.
      '  acc[0] += a0 * b0;',
      '  acc[1] += a0 * b1;',
      '  acc[2] += a0 * b2;',
      '  acc[3] += a1 * b0;',
      '  acc[4] += a1 * b1;',
      '  acc[5] += a1 * b2;',
      'tail',
    ]);
  });

  it('keeps lines without markers, and a 1 × 1 × 1 tile is one copy of each', () => {
    const code = 'let r$i = $i;\nlet c$j = $j;\nfn f() {}';
    expect(unrollTile(code, { rows: 1, cols: 1, unroll: 1 })).toBe('let r0 = 0;\nlet c0 = 0;\nfn f() {}');
  });

  it('refuses an unknown marker and an empty extent', () => {
    expect(() => unrollTile('let x = $k;', { rows: 1, cols: 1, unroll: 1 })).toThrow(/unknown \$ marker/);
    expect(() => unrollTile('let x = 1;', { rows: 0, cols: 1, unroll: 1 })).toThrow(/rows = 0/);
  });
});
