import {
  argmaxRef,
  attentionRef,
  matmulRef,
  rmsNormRef,
  ropeRef,
  swigluRef,
  type Vec,
} from '../kernels/reference.ts';
import { type KvDtype, roundTripKv } from '../kv/format.ts';
import { archFeatures, dims, type ModelConfig } from './config.ts';
import { ropeTable } from './rope.ts';
import { EMBEDDING, get, lmHeadName, type ModelWeights, tensorRows } from './weights.ts';

/**
 * Plain-TS CPU forward pass, the source of truth for every GPU model test. It follows HF
 * `LlamaForCausalLM` op for op, built from the per-op references in kernels/reference.ts, so it
 * accumulates and keeps every intermediate in float64 and is more accurate than the f32 engine it checks.
 */

function addInPlace(x: Float64Array, y: Vec): void {
  for (let i = 0; i < x.length; i++) x[i] += y[i];
}

/** x[r, n] += b[n] for every row r: a projection's bias (qwen2). */
function addBias(x: Float64Array, b: Vec): Float64Array {
  for (let i = 0; i < x.length; i++) x[i] += b[i % b.length];
  return x;
}

/** How the engine's KV cache keeps K and V: its element type and sliding window (none: 0 or absent). */
export interface ReferenceKv {
  dtype?: KvDtype;
  window?: number;
}

/**
 * Full-model forward over `tokens` from position 0. Returns logits [L, vocab] in float64. With
 * `kv`, each K and V row is stored and read back as the cache's type stores it (src/kv/format.ts)
 * before attention, which sees only the window's last tokens: quantize, then attend in float64.
 */
export function referenceForward(
  w: ModelWeights,
  tokens: readonly number[],
  kv: ReferenceKv = {},
): Float64Array {
  const c: ModelConfig = w.config;
  const { d, ffn, heads, kvHeads, headDim, qWidth, kvWidth } = dims(c);
  const { qkvBias, qkNorm } = archFeatures(c);
  const L = tokens.length;
  const positions = tokens.map((_, i) => i);
  const table = ropeTable(c);
  const shape = { heads, kvHeads, headDim, window: kv.window };
  const stored = (rows: Float64Array) =>
    kv.dtype && kv.dtype !== 'f32' ? roundTripKv(kv.dtype, rows, headDim) : rows;

  // The rows looked up, one at a time: a file's table is never read whole.
  const x = new Float64Array(L * d); // [L, d]
  for (const [l, t] of tokens.entries()) x.set(tensorRows(w, EMBEDDING, d, t, t + 1), l * d);
  for (let layer = 0; layer < c.numLayers; layer++) {
    const p = `model.layers.${layer}`;
    const h = rmsNormRef(x, get(w, `${p}.input_layernorm.weight`), L, d, c.rmsNormEps); // [L, d]
    const project = (name: 'q' | 'k' | 'v', width: number) => {
      const y = matmulRef(h, get(w, `${p}.self_attn.${name}_proj.weight`), L, d, width);
      return qkvBias ? addBias(y, get(w, `${p}.self_attn.${name}_proj.bias`)) : y;
    };
    let q = project('q', qWidth); // [L, heads, headDim]
    let k = project('k', kvWidth); // [L, kvHeads, headDim]
    const v = project('v', kvWidth); // [L, kvHeads, headDim]
    if (qkNorm) {
      // Qwen3: each head's q and k RMS-normalized over headDim, before RoPE.
      q = rmsNormRef(q, get(w, `${p}.self_attn.q_norm.weight`), L * heads, headDim, c.rmsNormEps);
      k = rmsNormRef(k, get(w, `${p}.self_attn.k_norm.weight`), L * kvHeads, headDim, c.rmsNormEps);
    }
    ropeRef(q, positions, heads, headDim, table);
    ropeRef(k, positions, kvHeads, headDim, table);
    const attn = attentionRef(q, stored(k), stored(v), L, 0, shape); // [L, heads, headDim]
    addInPlace(x, matmulRef(attn, get(w, `${p}.self_attn.o_proj.weight`), L, qWidth, d));
    const h2 = rmsNormRef(x, get(w, `${p}.post_attention_layernorm.weight`), L, d, c.rmsNormEps); // [L, d]
    const gate = matmulRef(h2, get(w, `${p}.mlp.gate_proj.weight`), L, d, ffn); // [L, ffn]
    const up = matmulRef(h2, get(w, `${p}.mlp.up_proj.weight`), L, d, ffn); // [L, ffn]
    addInPlace(x, matmulRef(swigluRef(gate, up), get(w, `${p}.mlp.down_proj.weight`), L, ffn, d));
  }
  const final = rmsNormRef(x, get(w, 'model.norm.weight'), L, d, c.rmsNormEps); // [L, d]
  return lmHeadRef(w, final, L); // [L, vocab]
}

/** Rows of the LM head a chunk of the reference's head reads at once (a 128k vocabulary's table is never whole). */
const HEAD_CHUNK_ROWS = 4096;

/** logits [L, vocab] = x [L, d] · headᵀ, the head's rows read a chunk at a time. */
function lmHeadRef(w: ModelWeights, x: Float64Array, L: number): Float64Array {
  const { d, vocab } = dims(w.config);
  const name = lmHeadName(w);
  const out = new Float64Array(L * vocab);
  for (let r0 = 0; r0 < vocab; r0 += HEAD_CHUNK_ROWS) {
    const r1 = Math.min(vocab, r0 + HEAD_CHUNK_ROWS);
    const part = matmulRef(x, tensorRows(w, name, d, r0, r1), L, d, r1 - r0);
    for (let l = 0; l < L; l++) out.set(part.subarray(l * (r1 - r0), (l + 1) * (r1 - r0)), l * vocab + r0);
  }
  return out;
}

/** Greedy generation on the CPU by full recompute: the slow, obviously correct baseline. */
export function referenceGreedy(
  w: ModelWeights,
  prompt: readonly number[],
  steps: number,
  kv: ReferenceKv = {},
): number[] {
  const tokens = [...prompt];
  for (let s = 0; s < steps; s++) {
    const logits = referenceForward(w, tokens, kv);
    const last = logits.subarray((tokens.length - 1) * w.config.vocabSize);
    tokens.push(argmaxRef(last, 1, w.config.vocabSize)[0]);
  }
  return tokens.slice(prompt.length);
}
