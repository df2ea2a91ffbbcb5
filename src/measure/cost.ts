import {
  attentionDecodeDispatches,
  attentionDecodePartialBytes,
  attentionKvReadsPerRow,
} from '../kernels/limits.ts';
import { KERNEL_ROLES, type KernelRole } from '../kernels/roles.ts';
import type { AttentionVariant } from '../kernels/variants.ts';
import { type KvDtype, kvRowBytes } from '../kv/format.ts';
import { archFeatures, dims, type ModelConfig } from '../model/config.ts';
import { layerKinds } from '../model/fused.ts';
import { embeddingFormat, LM_HEAD } from '../model/weights.ts';
import { weightBytes } from '../quant/formats.ts';
import { BYTES, formatOf, type WeightFormat, type WeightFormats } from '../weight-format.ts';

/**
 * Analytic cost model: FLOPs and bytes moved by every kernel of a pass, from the config alone.
 *
 * `bytes` are compulsory traffic: each input read once and each output written once, as an ideal
 * kernel with perfect on-chip reuse would. That is the roofline convention, and what a point is
 * placed by; a kernel that re-reads shows up as less than 100% of the roof, which is the honest
 * place for it. `bytesAsImplemented` counts attention's K/V loads as the chosen kernel family
 * really makes them (attentionKvReadsPerRow: once per block of queries, once per pass over a group
 * of query heads); every other kernel reads its inputs once, so there the two agree. Activations,
 * norms and the KV cache are f32 (4 bytes); a linear weight counts the bytes of its format as
 * stored (weightBytes: f16 halves, int8/int4 quants plus their f32 scales and row padding).
 * A linear layer's FLOPs are 2·M·N·K whatever its format: dequantization work is not counted.
 *
 * FLOPs count a multiply-add as 2. Transcendentals (exp, rsqrt) count as 1, which is a convention,
 * not a claim about hardware cost; they are a rounding error next to the matmuls.
 */
const F32 = BYTES.f32;

export interface KernelCost {
  role: KernelRole;
  flops: number;
  bytes: number;
  /** Bytes the kernel as implemented moves (attention's K/V re-reads included). */
  bytesAsImplemented: number;
  /** Dispatches of this role in the pass. */
  dispatches: number;
}

export interface PassCost {
  flops: number;
  bytes: number;
  bytesAsImplemented: number;
  dispatches: number;
  kernels: KernelCost[];
}

/** y[M, N] = x[M, K] · W[N, K]ᵀ: weights read once (in their format), input once, output written once. */
export function linearCost(M: number, N: number, K: number, format: WeightFormat = 'f32'): Cost {
  return { flops: 2 * M * N * K, bytes: weightBytes(format, N, K) + (M * K + M * N) * F32 };
}

/** FLOPs and bytes of one dispatch. */
export interface Cost {
  flops: number;
  bytes: number;
}

/** RMSNorm over rows of width d: square-accumulate (2) and scale by inv·weight (2) per element; read x and weight, write out. */
export function rmsNormCost(rows: number, d: number): Cost {
  return { flops: 4 * rows * d, bytes: (2 * rows * d + d) * F32 };
}

/**
 * RoPE on rows × heads of headDim, one dispatch: 4 multiplies and 2 adds per rotated pair; reads
 * and writes x, reads the positions and a cos and a sin row per token.
 */
export function ropeCost(rows: number, heads: number, headDim: number): Cost {
  return {
    flops: 6 * rows * heads * (headDim / 2),
    bytes: 2 * rows * heads * headDim * F32 + (rows + 2 * rows * (headDim / 2)) * F32,
  };
}

/**
 * How the KV cache stores K and V (src/kv/format.ts) and the sliding window: what a cached row
 * costs in bytes, and how many keys a query reads. f32 and full attention by default.
 */
export interface KvStorage {
  dtype?: KvDtype;
  /** Tokens; null, 0 or absent: full attention. */
  window?: number | null;
}

/** Bytes of one cached row (headDim values, int8's scale included) in `kv`'s type. */
function rowBytes(headDim: number, kv: KvStorage): number {
  return kvRowBytes(headDim, kv.dtype ?? 'f32');
}

/** Keys a query at context length n reads under `kv`'s window. */
function visible(n: number, kv: KvStorage): number {
  return kv.window ? Math.min(n, kv.window) : n;
}

/**
 * Scatter of `rows` tokens' K and V (kvWidth f32 each) into the pool: read both, write both in the
 * pool's type, read the slots.
 */
export function kvWriteCost(rows: number, kvWidth: number, headDim = kvWidth, kv: KvStorage = {}): Cost {
  const written = 2 * rows * (kvWidth / headDim) * rowBytes(headDim, kv);
  return { flops: 0, bytes: 2 * rows * kvWidth * F32 + written + rows * F32 };
}

/**
 * Attention over `pairs` (query, key) pairs per head: q·k and p·v (2·headDim each) plus max, exp
 * and sum (3). Compulsory: reads the queries, each cached K and V row once, writes the output. As
 * implemented: the same, with `kvRowLoads` K (and as many V) row loads instead of `kvTokensRead`.
 */
export function attentionCost(
  c: { heads: number; qWidth: number; kvWidth: number; headDim: number },
  queries: number,
  pairs: number,
  kvTokensRead: number,
  kvRowLoads = kvTokensRead,
  kv: KvStorage = {},
): Cost & { bytesAsImplemented: number } {
  const io = 2 * queries * c.qWidth * F32;
  // K and V rows of every KV head, as the pool stores them.
  const perToken = 2 * (c.kvWidth / c.headDim) * rowBytes(c.headDim, kv);
  return {
    flops: c.heads * pairs * (4 * c.headDim + 3),
    bytes: io + kvTokensRead * perToken,
    bytesAsImplemented: io + kvRowLoads * perToken,
  };
}

/**
 * What an architecture adds between the q/k/v projections and RoPE, over `rows` tokens: qwen2's
 * biases (an add per element of q, k and v, and the biases read) and qwen3's per-head RMSNorm of q
 * and k (4 per element, as rmsNormCost, and the two weight rows read). `inPlace`: the unfused graph
 * does it in its own dispatches (head_prep.wgsl), reading and writing each prepared projection; the
 * fused one inside its RoPE + KV write, at no extra activation traffic.
 */
export function qkvPrepCost(c: ModelConfig, rows: number, inPlace: boolean): Cost & { dispatches: number } {
  const { qWidth, kvWidth, headDim } = dims(c);
  const { qkvBias, qkNorm } = archFeatures(c);
  const qkWidth = qWidth + kvWidth;
  let flops = 0;
  let bytes = 0;
  let touched = 0;
  if (qkvBias) {
    flops += rows * (qkWidth + kvWidth);
    bytes += (qkWidth + kvWidth) * F32;
    touched = qkWidth + kvWidth;
  }
  if (qkNorm) {
    flops += 4 * rows * qkWidth;
    bytes += 2 * headDim * F32;
    touched = Math.max(touched, qkWidth);
  }
  if (inPlace) bytes += 2 * rows * touched * F32;
  const dispatches = inPlace ? (qkvBias || qkNorm ? 2 : 0) + (qkvBias ? 1 : 0) : 0;
  return { flops, bytes, dispatches };
}

/** x += y over n elements. */
export function residualCost(n: number): Cost {
  return { flops: n, bytes: 3 * n * F32 };
}

/** silu(g)·u over n elements: negate, exp, add, divide, multiply. */
export function swigluCost(n: number): Cost {
  return { flops: 5 * n, bytes: 3 * n * F32 };
}

/**
 * Gather of `rows` embedding rows of width d: the ids, the rows read (in the table's format: a GGUF
 * file's packed table is read as stored), the rows written.
 */
export function embeddingCost(rows: number, d: number, format: WeightFormat = 'f32'): Cost {
  return { flops: 0, bytes: rows * F32 + weightBytes(format, rows, d) + rows * d * F32 };
}

/** Argmax over rows of n logits. */
export function argmaxCost(rows: number, n: number): Cost {
  return { flops: rows * n, bytes: rows * n * F32 + rows * F32 };
}

function add(
  list: KernelCost[],
  role: KernelRole,
  cost: Cost & { bytesAsImplemented?: number },
  dispatches = 1,
) {
  const { flops, bytes } = cost;
  const bytesAsImplemented = cost.bytesAsImplemented ?? bytes;
  const existing = list.find((k) => k.role === role);
  if (existing) {
    existing.flops += flops;
    existing.bytes += bytes;
    existing.bytesAsImplemented += bytesAsImplemented;
    existing.dispatches += dispatches;
  } else {
    list.push({ role, flops, bytes, bytesAsImplemented, dispatches });
  }
}

/**
 * The per-layer and head kernels for `rows` new tokens whose attention covers `contexts[r]` keys
 * for row r (causal prefill: start + r + 1; decode: each sequence's length).
 * `lmRows` is how many rows go through the LM head (1 per sequence: only the next token is needed).
 */
/**
 * Which graph a pass runs (src/model/graph.ts): the unfused one, 16 dispatches per layer, or the
 * fused one, 6 per layer (src/kernels/fuse.ts), whose fused kernels never write or read back the
 * normed rows, the projections before the residual adds, or gate/up before SwiGLU.
 */
export type Graph = 'fused' | 'unfused';

/** The graph a model runs. */
export function graphOf(model: { fused: boolean }): Graph {
  return model.fused ? 'fused' : 'unfused';
}

function forwardCost(
  c: ModelConfig,
  rows: number,
  contexts: number[],
  lmRows: number,
  kvTokensRead: number,
  kvRowLoads: number,
  formats: WeightFormats = 'f32',
  graph: Graph = 'unfused',
  /**
   * Decode attention as the family runs it, per layer: its dispatches (the split family's slices
   * and merge: 2) and the bytes its partials add to what it moves as implemented.
   */
  attention: { dispatches: number; partialBytes: number } = { dispatches: 1, partialBytes: 0 },
  kv: KvStorage = {},
): PassCost {
  const dm = dims(c);
  const { d, ffn, vocab, layers, heads, kvHeads, headDim, qWidth, kvWidth } = dm;
  const k: KernelCost[] = [];
  const pairs = contexts.reduce((a, b) => a + b, 0); // (query, key) pairs per head
  const both = (a: Cost, b: Cost): Cost => ({ flops: a.flops + b.flops, bytes: a.bytes + b.bytes });
  add(k, KERNEL_ROLES.embedding, embeddingCost(rows, d, embeddingFormat(formats)));
  const fused = graph === 'fused';
  for (let l = 0; l < layers; l++) {
    const f = (proj: string) => formatOf(formats, `model.layers.${l}.${proj}.weight`);
    const kinds = layerKinds(formats, fused, l);
    if (kinds.attn === 'fused') fusedAttentionInput(k, c, rows, f, kv);
    else {
      add(k, KERNEL_ROLES.norm, rmsNormCost(rows, d));
      const qkv = both(
        linearCost(rows, qWidth, d, f('self_attn.q_proj')),
        both(
          linearCost(rows, kvWidth, d, f('self_attn.k_proj')),
          linearCost(rows, kvWidth, d, f('self_attn.v_proj')),
        ),
      );
      add(k, KERNEL_ROLES.qkv, qkv, 3);
      const prep = qkvPrepCost(c, rows, true);
      if (prep.dispatches > 0) add(k, KERNEL_ROLES.qkvPrep, prep, prep.dispatches);
      add(k, KERNEL_ROLES.rope, both(ropeCost(rows, heads, headDim), ropeCost(rows, kvHeads, headDim)), 2);
      add(k, KERNEL_ROLES.kvWrite, kvWriteCost(rows, kvWidth, headDim, kv));
    }
    const att = attentionCost(dm, rows, pairs, kvTokensRead, kvRowLoads, kv);
    att.bytesAsImplemented += attention.partialBytes;
    add(k, KERNEL_ROLES.attention, att, attention.dispatches);
    // The o and down projections, with the residual add fused (fused graph) or after them.
    const project = (role: KernelRole, N: number, K: number, format: WeightFormat) => {
      if (fused) add(k, role, plusResidual(linearCost(rows, N, K, format), rows, d));
      else {
        add(k, role, linearCost(rows, N, K, format));
        add(k, KERNEL_ROLES.residual, residualCost(rows * d));
      }
    };
    project(KERNEL_ROLES.oProj, d, qWidth, f('self_attn.o_proj'));
    if (kinds.mlp === 'fused') fusedMlp(k, rows, d, ffn, f);
    else {
      add(k, KERNEL_ROLES.norm, rmsNormCost(rows, d));
      const gu = both(
        linearCost(rows, ffn, d, f('mlp.gate_proj')),
        linearCost(rows, ffn, d, f('mlp.up_proj')),
      );
      add(k, KERNEL_ROLES.gateUp, gu, 2);
      add(k, KERNEL_ROLES.swiglu, swigluCost(rows * ffn));
    }
    project(KERNEL_ROLES.down, d, ffn, f('mlp.down_proj'));
  }
  if (fused) {
    // The final RMSNorm runs inside the LM head, on its rows only.
    add(k, KERNEL_ROLES.lmHead, normed(linearCost(lmRows, vocab, d, formatOf(formats, LM_HEAD)), lmRows, d));
  } else {
    add(k, KERNEL_ROLES.norm, rmsNormCost(rows, d));
    add(k, KERNEL_ROLES.lmHead, linearCost(lmRows, vocab, d, formatOf(formats, LM_HEAD)));
  }
  add(k, KERNEL_ROLES.argmax, argmaxCost(lmRows, vocab));
  return total(k);
}

function total(k: KernelCost[]): PassCost {
  return {
    flops: k.reduce((a, x) => a + x.flops, 0),
    bytes: k.reduce((a, x) => a + x.bytes, 0),
    bytesAsImplemented: k.reduce((a, x) => a + x.bytesAsImplemented, 0),
    dispatches: k.reduce((a, x) => a + x.dispatches, 0),
    kernels: k,
  };
}

/**
 * A product with the RMSNorm fused before it: the norm's arithmetic (4 per element, as
 * rmsNormCost) and its gamma; the product's input is the raw residual stream, read once, as the
 * unfused product reads the normed rows — so the normed rows' write and read are gone.
 */
function normed(linear: Cost, rows: number, d: number): Cost {
  return { flops: linear.flops + 4 * rows * d, bytes: linear.bytes + d * F32 };
}

/**
 * A product with the residual add fused after it: one add per element, and the stream read back
 * (y += v) and written, instead of the projection's output being written, read and added.
 */
function plusResidual(linear: Cost, rows: number, d: number): Cost {
  return { flops: linear.flops + rows * d, bytes: linear.bytes + rows * d * F32 };
}

/**
 * A fused layer's attention input (src/model/graph.ts, fuse.ts):
 * - norm → [Wq; Wk; Wv]: the three weights, x read once, q/k/v written side by side;
 * - RoPE + KV write: q/k/v read, q written, K and V written into the pool, positions and the
 *   angles of the rotated heads read, with the architecture's biases and head norms (qkvPrepCost).
 */
function fusedAttentionInput(
  k: KernelCost[],
  c: ModelConfig,
  rows: number,
  f: (proj: string) => WeightFormat,
  kv: KvStorage,
) {
  const { d, heads, kvHeads, headDim, qWidth, kvWidth } = dims(c);
  const half = headDim / 2;
  const qkvWidth = qWidth + 2 * kvWidth;
  add(
    k,
    KERNEL_ROLES.qkv,
    normed(
      {
        flops: 2 * rows * qkvWidth * d,
        bytes:
          weightBytes(f('self_attn.q_proj'), qWidth, d) +
          weightBytes(f('self_attn.k_proj'), kvWidth, d) +
          weightBytes(f('self_attn.v_proj'), kvWidth, d) +
          (rows * d + rows * qkvWidth) * F32,
      },
      rows,
      d,
    ),
  );
  const prep = qkvPrepCost(c, rows, false);
  add(k, KERNEL_ROLES.ropeKvWrite, {
    flops: 6 * rows * (heads + kvHeads) * half + prep.flops,
    bytes:
      (rows * qkvWidth + rows * qWidth + 2 * rows + 2 * rows * half) * F32 +
      2 * rows * kvHeads * rowBytes(headDim, kv) +
      prep.bytes,
  });
}

/** A fused layer's norm → gate/up → SwiGLU: both weights, x read once, only the activation written [rows, ffn]. */
function fusedMlp(k: KernelCost[], rows: number, d: number, ffn: number, f: (proj: string) => WeightFormat) {
  add(
    k,
    KERNEL_ROLES.gateUp,
    normed(
      {
        flops: 2 * 2 * rows * ffn * d + 5 * rows * ffn,
        bytes:
          weightBytes(f('mlp.gate_proj'), ffn, d) +
          weightBytes(f('mlp.up_proj'), ffn, d) +
          (rows * d + rows * ffn) * F32,
      },
      rows,
      d,
    ),
  );
}

/**
 * Prefill of L new tokens after `start` cached ones, next-token logits only (as the benchmark runs
 * it). With `attention`, the prefill attention family that runs, K/V loads as implemented: each
 * cached row is loaded attentionKvReadsPerRow(L) times, new row r attentionKvReadsPerRow(L, r).
 */
export function prefillCost(
  c: ModelConfig,
  L: number,
  start = 0,
  attention?: AttentionVariant,
  formats: WeightFormats = 'f32',
  graph: Graph = 'unfused',
  kv: KvStorage = {},
): PassCost {
  const contexts = Array.from({ length: L }, (_, i) => visible(start + i + 1, kv));
  // Cached rows the first query's window still shows (all of them without a window).
  const cached = kv.window ? Math.min(start, kv.window - 1) : start;
  let loads = cached + L;
  if (attention) {
    const shape = { heads: c.numHeads, kvHeads: c.numKvHeads, headDim: c.headDim, L };
    loads = cached * attentionKvReadsPerRow('prefill', attention, shape);
    for (let row = 0; row < L; row++)
      loads += attentionKvReadsPerRow('prefill', attention, { ...shape, row });
  }
  return forwardCost(c, L, contexts, 1, cached + L, loads, formats, graph, undefined, kv);
}

/**
 * One decode step for a batch: sequence b already holds depths[b] tokens and appends one. With
 * `attention`, the decode family that runs, each context row is loaded as that family loads it.
 */
export function decodeCost(
  c: ModelConfig,
  depths: readonly number[],
  attention?: AttentionVariant,
  formats: WeightFormats = 'f32',
  graph: Graph = 'unfused',
  kv: KvStorage = {},
): PassCost {
  const contexts = depths.map((d) => visible(d + 1, kv));
  const kvRead = contexts.reduce((a, b) => a + b, 0);
  const perRow = attention
    ? attentionKvReadsPerRow('decode', attention, {
        heads: c.numHeads,
        kvHeads: c.numKvHeads,
        headDim: c.headDim,
      })
    : 1;
  const split = attention ? decodeAttention(c, attention, contexts) : undefined;
  return forwardCost(
    c,
    depths.length,
    contexts,
    depths.length,
    kvRead,
    kvRead * perRow,
    formats,
    graph,
    split,
    kv,
  );
}

/**
 * A decode attention family's dispatches per layer and the bytes of its partials for sequences of
 * these context lengths; a model's plan sizes the split family's slices for maxSeqLen.
 */
function decodeAttention(c: ModelConfig, attention: AttentionVariant, contexts: readonly number[]) {
  const shape = { heads: c.numHeads, headDim: c.headDim, maxContext: c.maxSeqLen };
  return {
    dispatches: attentionDecodeDispatches(attention),
    partialBytes: attentionDecodePartialBytes(attention, shape, contexts),
  };
}

/**
 * Speculative decoding's verify pass: `rows` tokens after `start` cached ones, every row's logits
 * (the LM head runs on all rows), on the decode kernels in chunks of `chunk` rows. Row i attends to
 * start + i + 1 keys. FLOPs and compulsory bytes are the pass's (weights once, each K/V row once);
 * as implemented, each chunk is its own pass over the layers, so it reads the weights again and
 * records its own dispatches, and each row loads its whole context as the decode family does.
 */
export function verifyCost(
  c: ModelConfig,
  start: number,
  rows: number,
  chunk: number,
  attention?: AttentionVariant,
  formats: WeightFormats = 'f32',
  graph: Graph = 'unfused',
): PassCost {
  const contexts = Array.from({ length: rows }, (_, i) => start + i + 1);
  const perRow = attention
    ? attentionKvReadsPerRow('decode', attention, {
        heads: c.numHeads,
        kvHeads: c.numKvHeads,
        headDim: c.headDim,
      })
    : 1;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const whole = forwardCost(c, rows, contexts, rows, start + rows, sum(contexts) * perRow, formats, graph);
  const parts: PassCost[] = [];
  for (let i = 0; i < rows; i += chunk) {
    const part = contexts.slice(i, i + chunk);
    const split = attention ? decodeAttention(c, attention, part) : undefined;
    parts.push(
      forwardCost(
        c,
        part.length,
        part,
        part.length,
        start + i + part.length,
        sum(part) * perRow,
        formats,
        graph,
        split,
      ),
    );
  }
  return {
    flops: whole.flops,
    bytes: whole.bytes,
    bytesAsImplemented: sum(parts.map((p) => p.bytesAsImplemented)),
    dispatches: sum(parts.map((p) => p.dispatches)),
    kernels: whole.kernels.map((k, j) => ({
      ...k,
      bytesAsImplemented: sum(parts.map((p) => p.kernels[j].bytesAsImplemented)),
      dispatches: sum(parts.map((p) => p.kernels[j].dispatches)),
    })),
  };
}
