import { mulberry32 } from '../../src/random.ts';

/**
 * The inputs the quant tests feed both references and src/quant: seeded f32 rows that reach the
 * edges of ggml's quantizers, importance weights for their imatrix paths, and blocks of random
 * bytes that reach bit patterns no quantizer writes (odd scales, negative Q6_K scales, any qh).
 */

/** Elements per test row: two K-quant super-blocks, sixteen 32-weight blocks. */
export const ROW = 512;

function gaussian(next: () => number): () => number {
  return () => {
    const u = 1 - next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
}

/** Named rows, each ROW long. */
export function testRows(seed = 1): { names: string[]; rows: Float32Array<ArrayBuffer> } {
  const next = mulberry32(seed);
  const normal = gaussian(next);
  const fill = (f: (i: number) => number) => Float32Array.from({ length: ROW }, (_, i) => f(i));
  const cases: [string, Float32Array][] = [
    ['zeros', fill(() => 0)],
    ['one large outlier among zeros', fill((i) => (i === 37 ? 1e4 : 0))],
    ['one outlier in faint noise', fill((i) => (i === 300 ? 300 : 0.01 * normal()))],
    ['negative only', fill(() => -(0.1 + 1.9 * next()))],
    ['negative only, tiny', fill(() => -1e-6 * (1 + next()))],
    ['tiny (f16-subnormal scales)', fill(() => 1e-5 * normal())],
    ['tinier (scales that flush to zero)', fill(() => 1e-9 * normal())],
    ['normal × 1e-3', fill(() => 1e-3 * normal())],
    ['normal', fill(() => normal())],
    ['normal × 50', fill(() => 50 * normal())],
    ['normal × 2000', fill(() => 2000 * normal())],
    ['uniform positive', fill(() => next())],
    ['constant', fill(() => 0.7)],
    ['alternating ±1', fill((i) => (i % 7 === 3 ? 0 : i % 2 ? 1 : -1))],
    ['one nonzero per 32', fill((i) => (i % 32 === (i >> 5) % 32 ? 1 + normal() : 0))],
    ['heavy tails (cubed normal)', fill(() => normal() ** 3)],
    ['a different scale every 32', fill((i) => 10 ** (((i >> 5) % 7) - 3) * normal())],
    ['small integers', fill(() => Math.round(4 * normal()))],
    ['normal + 5', fill(() => normal() + 5)],
    ['normal − 5', fill(() => normal() - 5)],
  ];
  const rows = new Float32Array(cases.length * ROW);
  for (const [i, [, r]] of cases.entries()) rows.set(r, i * ROW);
  return { names: cases.map(([n]) => n), rows };
}

/** Importance weights (ggml's imatrix) for one row: positive, uneven, a few zero. */
export function importance(seed = 2): Float32Array<ArrayBuffer> {
  const next = mulberry32(seed);
  return Float32Array.from({ length: ROW }, (_, i) => (i % 61 === 0 ? 0 : 0.05 + 20 * next() ** 3));
}

/**
 * Byte offsets of the f16 fields of each block type, from ggml-common.h's block structs (written
 * here by hand so the tests do not read them from the modules under test).
 */
const HALF_FIELDS: Record<number, readonly number[]> = {
  2: [0], // Q4_0 d
  3: [0, 2], // Q4_1 d, m
  6: [0], // Q5_0 d
  7: [0, 2], // Q5_1 d, m
  8: [0], // Q8_0 d
  10: [80, 82], // Q2_K d, dmin
  11: [108], // Q3_K d
  12: [0, 2], // Q4_K d, dmin
  13: [0, 2], // Q5_K d, dmin
  14: [208], // Q6_K d
};

/**
 * `count` blocks of random bytes of the type with ggml code `type`, `blockBytes` each. Their f16
 * scales are kept finite: an infinite or NaN scale makes NaNs whose payload C and JavaScript need
 * not agree on; every other pattern (subnormal, ±0, 65504) stays.
 */
export function randomBlocks(
  type: number,
  blockBytes: number,
  count: number,
  seed = 3,
): Uint8Array<ArrayBuffer> {
  const next = mulberry32(seed * 1000 + type);
  const out = Uint8Array.from({ length: count * blockBytes }, () => Math.floor(next() * 256));
  const halves = HALF_FIELDS[type];
  if (!halves) throw new Error(`no f16 fields listed for ggml type ${type}`);
  for (let b = 0; b < count; b++) {
    for (const at of halves) {
      const hi = b * blockBytes + at + 1;
      // Exponent all ones (Inf/NaN): clear its top bit, a finite half of the same sign.
      if ((out[hi] & 0x7c) === 0x7c) out[hi] &= ~0x40;
    }
  }
  return out;
}
