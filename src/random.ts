/**
 * mulberry32: a small, fast, well-mixed 32-bit generator, uniform in [0, 1). Everything seeded in
 * the project (test streams, the capacity probe's sequence lengths) draws from it, so the same seed
 * gives the same numbers in Node and in the browser.
 */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
