import { dims, type ModelConfig } from '../model/config.ts';

/**
 * Analytic cost model: FLOPs and bytes moved by every kernel of a pass, from the config alone.
 *
 * Bytes are compulsory traffic: each input read once and each output written once, as an ideal
 * kernel with perfect on-chip reuse would. That is the roofline convention; a kernel that re-reads
 * (for example attention re-reading K/V per query block) shows up as less than 100% of the roof,
 * which is the honest place for it. All tensors are f32 (4 bytes).
 *
 * FLOPs count a multiply-add as 2. Transcendentals (exp, rsqrt) count as 1, which is a convention,
 * not a claim about hardware cost; they are a rounding error next to the matmuls.
 */
const F32 = 4;

/** Roles of the kernels in a forward pass, in pass order. Forward tags its calls with these names. */
export const KERNEL_ROLES = {
  embedding: 'embedding',
  norm: 'rmsnorm',
  qkv: 'qkv proj',
  rope: 'rope',
  kvWrite: 'kv write',
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

export interface KernelCost {
  role: KernelRole;
  flops: number;
  bytes: number;
  /** Dispatches of this role in the pass. */
  dispatches: number;
}

export interface PassCost {
  flops: number;
  bytes: number;
  dispatches: number;
  kernels: KernelCost[];
}

/** y[M, N] = x[M, K] · W[N, K]ᵀ: weights read once, input once, output written once. */
export function linearCost(M: number, N: number, K: number) {
  return { flops: 2 * M * N * K, bytes: (N * K + M * K + M * N) * F32 };
}

function add(list: KernelCost[], role: KernelRole, flops: number, bytes: number, dispatches = 1) {
  const existing = list.find((k) => k.role === role);
  if (existing) {
    existing.flops += flops;
    existing.bytes += bytes;
    existing.dispatches += dispatches;
  } else {
    list.push({ role, flops, bytes, dispatches });
  }
}

/**
 * The per-layer and head kernels for `rows` new tokens whose attention covers `contexts[r]` keys
 * for row r (causal prefill: start + r + 1; decode: each sequence's length).
 * `lmRows` is how many rows go through the LM head (1 per sequence: only the next token is needed).
 */
function forwardCost(
  c: ModelConfig,
  rows: number,
  contexts: number[],
  lmRows: number,
  kvTokensRead: number,
): PassCost {
  const { d, ffn, vocab, layers, heads, kvHeads, headDim, qWidth, kvWidth } = dims(c);
  const k: KernelCost[] = [];
  const pairs = contexts.reduce((a, b) => a + b, 0); // (query, key) pairs per head
  add(k, KERNEL_ROLES.embedding, 0, rows * F32 + 2 * rows * d * F32);
  for (let l = 0; l < layers; l++) {
    // rmsnorm: square-accumulate (2) and scale by inv·weight (2) per element; read x and weight, write out.
    const norm = () => add(k, KERNEL_ROLES.norm, 4 * rows * d, (2 * rows * d + d) * F32);
    norm();
    const q = linearCost(rows, qWidth, d);
    const kv = linearCost(rows, kvWidth, d);
    add(k, KERNEL_ROLES.qkv, q.flops + 2 * kv.flops, q.bytes + 2 * kv.bytes, 3);
    // rope, once on q and once on k: 4 multiplies and 2 adds per rotated pair; each dispatch reads
    // and writes its x and reads the positions and a cos and sin row per token.
    const ropeRows = rows * (heads + kvHeads);
    const ropeTables = 2 * (rows + 2 * rows * (headDim / 2)) * F32;
    add(k, KERNEL_ROLES.rope, 6 * ropeRows * (headDim / 2), 2 * ropeRows * headDim * F32 + ropeTables, 2);
    add(k, KERNEL_ROLES.kvWrite, 0, 4 * rows * kvWidth * F32 + rows * F32);
    // attention: q·k (2·headDim) and p·v (2·headDim) per pair and head, plus max, exp and sum (3).
    // Reads q, each sequence's K and V once per KV head, writes the output.
    add(
      k,
      KERNEL_ROLES.attention,
      heads * pairs * (4 * headDim + 3),
      (2 * rows * qWidth + 2 * kvTokensRead * kvWidth) * F32,
    );
    const o = linearCost(rows, d, qWidth);
    add(k, KERNEL_ROLES.oProj, o.flops, o.bytes);
    add(k, KERNEL_ROLES.residual, rows * d, 3 * rows * d * F32);
    norm();
    const gu = linearCost(rows, ffn, d);
    add(k, KERNEL_ROLES.gateUp, 2 * gu.flops, 2 * gu.bytes, 2);
    // silu(g)·u: negate, exp, add, divide, multiply.
    add(k, KERNEL_ROLES.swiglu, 5 * rows * ffn, 3 * rows * ffn * F32);
    const down = linearCost(rows, d, ffn);
    add(k, KERNEL_ROLES.down, down.flops, down.bytes);
    add(k, KERNEL_ROLES.residual, rows * d, 3 * rows * d * F32);
  }
  add(k, KERNEL_ROLES.norm, 4 * rows * d, (2 * rows * d + d) * F32);
  const head = linearCost(lmRows, vocab, d);
  add(k, KERNEL_ROLES.lmHead, head.flops, head.bytes);
  add(k, KERNEL_ROLES.argmax, lmRows * vocab, lmRows * vocab * F32 + lmRows * F32);
  return {
    flops: k.reduce((a, x) => a + x.flops, 0),
    bytes: k.reduce((a, x) => a + x.bytes, 0),
    dispatches: k.reduce((a, x) => a + x.dispatches, 0),
    kernels: k,
  };
}

/** Prefill of L new tokens after `start` cached ones, next-token logits only (as the benchmark runs it). */
export function prefillCost(c: ModelConfig, L: number, start = 0): PassCost {
  const contexts = Array.from({ length: L }, (_, i) => start + i + 1);
  return forwardCost(c, L, contexts, 1, start + L);
}

/** One decode step for a batch: sequence b already holds depths[b] tokens and appends one. */
export function decodeCost(c: ModelConfig, depths: readonly number[]): PassCost {
  const contexts = depths.map((d) => d + 1);
  const kvRead = contexts.reduce((a, b) => a + b, 0);
  return forwardCost(c, depths.length, contexts, depths.length, kvRead);
}
