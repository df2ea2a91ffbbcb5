/**
 * Element sizes, in bytes, of what the engine stores on the GPU. Every byte count in the cost
 * model, the memory plan, the KV cache and the buffers derives from these, so a new weight format
 * changes one table, not a dozen literal 4s.
 */
export const BYTES = {
  /** Weights, activations and the KV cache today. */
  f32: 4,
  /** Token ids, positions, KV slots and block tables. */
  u32: 4,
} as const;
