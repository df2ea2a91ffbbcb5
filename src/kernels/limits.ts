// Shape limits baked into the shaders, kept free of shader imports so Node-side code (the CLI's
// spec validation) can read them.

/** Shape limits baked into gemv.wgsl; the wrapper checks calls against them. */
export const GEMV_LIMITS = {
  /** Output columns per workgroup (const ROWS in the shader). */
  rowsPerWorkgroup: 4,
  /** Largest batch M (const MAX_M in the shader). */
  maxBatch: 8,
  /** Invocations per workgroup; at least maxBatch * rowsPerWorkgroup so the final write covers every output. */
  workgroupSize: 64,
} as const;
