/** Seeded uniform test data in [-scale, scale), so a failing case reproduces exactly. */
export function randomArray(n: number, seed: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s >>> 8) / 16777216) * 2 * scale - scale;
  }
  return out;
}
