/**
 * Roles of the kernels in a forward pass, in pass order. The forward pass tags each call with its
 * role, the cost model counts FLOPs and bytes per role, and the profiler names its spans by role,
 * so the three always agree. It lives here, below both `model/` and `measure/`, so neither has to
 * import the other.
 */
export const KERNEL_ROLES = {
  embedding: 'embedding',
  norm: 'rmsnorm',
  qkv: 'qkv proj',
  /** The unfused graph's q/k/v bias (qwen2) and per-head q/k RMSNorm (qwen3), in place (head_prep.wgsl). */
  qkvPrep: 'q/k/v prep',
  rope: 'rope',
  kvWrite: 'kv write',
  /** The fused graph's RoPE of q and k and KV write, one dispatch (rope_kv_write.wgsl). */
  ropeKvWrite: 'rope + kv write',
  attention: 'attention',
  oProj: 'o proj',
  residual: 'residual add',
  gateUp: 'gate/up proj',
  swiglu: 'swiglu',
  down: 'down proj',
  lmHead: 'lm head',
  argmax: 'argmax',
} as const;
export type KernelRole = (typeof KERNEL_ROLES)[keyof typeof KERNEL_ROLES];
