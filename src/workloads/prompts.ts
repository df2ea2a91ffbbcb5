/**
 * Deterministic prompt tokens, different per salt, so no two prompts of a run share a prefix by
 * accident (a shared prefix would let a prefix cache or a warm page flatter a point).
 */
export function promptTokens(n: number, vocab: number, salt: number): number[] {
  return Array.from({ length: n }, (_, i) => (i * 7919 + salt * 104729 + 13) % vocab);
}
