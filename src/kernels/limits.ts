// Shape limits baked into the shaders, kept free of shader imports so Node-side code (the CLI's
// spec validation) can read them. The shaders get them through `//#const` lines (see wgsl.ts), so
// each number is written here once.

/** Shape limits of the GEMV shaders; the wrapper checks calls against them. */
export const GEMV_LIMITS = {
  /** Output columns per workgroup of gemv.wgsl (const ROWS). */
  rowsPerWorkgroup: 4,
  /** Largest batch M (const MAX_M); gemv_rowwise and gemv_subgroup unroll exactly this many rows. */
  maxBatch: 8,
  /** Invocations per workgroup; at least maxBatch * rowsPerWorkgroup so the final write covers every output. */
  workgroupSize: 64,
} as const;

/** Sizes baked into the attention shaders. */
export const ATTENTION_LIMITS = {
  /** Largest head dim (4 · const MAX_HD4 in every attention shader). */
  maxHeadDim: 256,
  /** Queries per prefill workgroup. */
  prefillQueries: 32,
  /** Most keys per prefill tile (const MAX_BK, the size of the private score array). */
  maxPrefillKeys: 64,
  /** Workgroup memory the prefill K and V tiles may take together, in bytes (the WebGPU default limit). */
  prefillTileBytes: 16384,
  /** Keys per prefill tile: two tiles of BK·headDim f32 must fit in prefillTileBytes. */
  prefillKeysFor(headDim: number) {
    const fit = Math.floor(ATTENTION_LIMITS.prefillTileBytes / (2 * 4 * headDim));
    return Math.max(1, Math.min(ATTENTION_LIMITS.maxPrefillKeys, fit));
  },
  /** Invocations (keys per tile) in a decode workgroup; must be ≥ headDim / 4. */
  decodeWorkgroup: 64,
  /** Invocations per workgroup of the direct (one invocation per query and head) kernels. */
  directWorkgroup: 32,
} as const;
