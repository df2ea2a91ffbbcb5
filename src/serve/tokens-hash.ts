/**
 * A short fingerprint of a request's output tokens (FNV-1a over the ids, 32 bits, and the count), so
 * a run over HTTP can be checked token for token against the in-process run without every token id
 * stored in the result. Two different outputs share one only by a 1-in-4-billion accident.
 */
export function hashTokens(tokens: readonly number[]): string {
  let h = 0x811c9dc5;
  for (const t of tokens) {
    for (let k = 0; k < 4; k++) {
      h ^= (t >>> (8 * k)) & 0xff;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return `${tokens.length}:${h.toString(16).padStart(8, '0')}`;
}
