/**
 * ci-tiny's dispatches per pass, counted by hand from the forward pass (2 layers): unfused, the
 * embedding, 16 calls a layer, the final norm, the LM head and argmax; fused, 6 a layer and the
 * final norm inside the LM head.
 */
export const CI_TINY_DISPATCHES = { unfused: 1 + 2 * 16 + 1 + 2, fused: 1 + 2 * 6 + 2 } as const;
/** Where the autotuner chose split-K decode attention: its merge, a second dispatch in each of the 2 layers. */
export const SPLIT_MERGES = 2;
