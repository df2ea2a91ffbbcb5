import { ReferenceMismatchError } from '../errors.ts';

/**
 * The per-op CPU references every kernel is checked against: plain TS, float64 accumulation and
 * intermediates, so each is more accurate than any f32 kernel it checks. The whole-model forward
 * (model/reference.ts) is built from these same ops, so a kernel test and a model test compare
 * against exactly the same arithmetic.
 */
export type Vec = ArrayLike<number>;

/** x[i] for i in tokens: [L, d]. */
export function embeddingRef(table: Vec, tokens: readonly number[], d: number): Float64Array {
  const out = new Float64Array(tokens.length * d);
  tokens.forEach((t, l) => {
    for (let i = 0; i < d; i++) out[l * d + i] = table[t * d + i];
  });
  return out;
}

/** HF LlamaRMSNorm: x * rsqrt(mean(x²) + eps) * w, per row of width d. */
export function rmsNormRef(x: Vec, weight: Vec, rows: number, d: number, eps: number): Float64Array {
  const out = new Float64Array(rows * d);
  for (let r = 0; r < rows; r++) {
    let ss = 0;
    for (let i = 0; i < d; i++) ss += x[r * d + i] ** 2;
    const inv = 1 / Math.sqrt(ss / d + eps);
    for (let i = 0; i < d; i++) out[r * d + i] = x[r * d + i] * inv * weight[i];
  }
  return out;
}

/** y[M, N] = x[M, K] · W[N, K]ᵀ, the nn.Linear convention (weights stored [out, in]). */
export function matmulRef(x: Vec, w: Vec, m: number, k: number, n: number): Float64Array {
  const out = new Float64Array(m * n);
  for (let r = 0; r < m; r++) {
    for (let c = 0; c < n; c++) {
      let acc = 0;
      for (let i = 0; i < k; i++) acc += x[r * k + i] * w[c * k + i];
      out[r * n + c] = acc;
    }
  }
  return out;
}

/**
 * Rotate-half RoPE applied to x[L, heads, headDim] in place, token l at position positions[l], by
 * the angles of a cos/sin table [positions, headDim/2]: the model's f32 table (see rope.ts) or,
 * for a kernel test independent of that table, one computed in float64.
 */
export function ropeRef(
  x: Float64Array,
  positions: readonly number[],
  heads: number,
  headDim: number,
  table: { cos: Vec; sin: Vec },
): void {
  const half = headDim / 2;
  positions.forEach((pos, l) => {
    for (let h = 0; h < heads; h++) {
      const base = (l * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const c = table.cos[pos * half + i];
        const s = table.sin[pos * half + i];
        const a = x[base + i];
        const b = x[base + i + half];
        x[base + i] = a * c - b * s;
        x[base + i + half] = b * c + a * s;
      }
    }
  });
}

export interface AttentionShape {
  heads: number;
  kvHeads: number;
  headDim: number;
  /** Sliding window in tokens: query at p sees max(0, p − window + 1) ..= p. Absent or 0: all of 0 ..= p. */
  window?: number;
}

/**
 * Causal grouped-query attention for L new queries that follow `start` cached tokens.
 * q: [L, heads, headDim]; k, v: [start + L, kvHeads, headDim] (the whole context, cached part first).
 * Query l sits at position start + l and sees keys 0 ..= start + l (from start + l − window + 1 with a
 * sliding window). Returns [L, heads, headDim].
 */
export function attentionRef(
  q: Vec,
  k: Vec,
  v: Vec,
  L: number,
  start: number,
  s: AttentionShape,
): Float64Array {
  const { heads, kvHeads, headDim } = s;
  const group = heads / kvHeads;
  const scale = 1 / Math.sqrt(headDim);
  const out = new Float64Array(L * heads * headDim);
  const scores = new Float64Array(start + L);
  const window = s.window ?? 0;
  for (let l = 0; l < L; l++) {
    const visible = start + l + 1;
    const first = window > 0 ? Math.max(0, visible - window) : 0;
    for (let h = 0; h < heads; h++) {
      const kvh = Math.floor(h / group);
      const qBase = (l * heads + h) * headDim;
      let max = Number.NEGATIVE_INFINITY;
      for (let t = first; t < visible; t++) {
        const kBase = (t * kvHeads + kvh) * headDim;
        let dot = 0;
        for (let i = 0; i < headDim; i++) dot += q[qBase + i] * k[kBase + i];
        scores[t] = dot * scale;
        max = Math.max(max, scores[t]);
      }
      let sum = 0;
      for (let t = first; t < visible; t++) {
        scores[t] = Math.exp(scores[t] - max);
        sum += scores[t];
      }
      for (let t = first; t < visible; t++) {
        const p = scores[t] / sum;
        const vBase = (t * kvHeads + kvh) * headDim;
        for (let i = 0; i < headDim; i++) out[qBase + i] += p * v[vBase + i];
      }
    }
  }
  return out;
}

/** SwiGLU: silu(gate) * up, elementwise. */
export function swigluRef(gate: Vec, up: Vec): Float64Array {
  const out = new Float64Array(gate.length);
  for (let i = 0; i < gate.length; i++) out[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
  return out;
}

/** Index of the largest value in each row; the lowest index wins a tie, as torch.argmax does. */
export function argmaxRef(x: Vec, rows: number, n: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < rows; r++) {
    let best = 0;
    for (let i = 1; i < n; i++) if (x[r * n + i] > x[r * n + best]) best = i;
    out.push(best);
  }
  return out;
}

export interface Comparison {
  maxAbsErr: number;
  /** max |a − b| / max |b| over the compared values: the error relative to the scale of the reference. */
  maxRelErr: number;
  /** First few positions where |a − b| > atol + rtol·|b|, for failure messages. */
  mismatches: { index: number; got: number; want: number }[];
  passed: boolean;
}

/**
 * Compares GPU output with a reference. Elementwise closeness is numpy's allclose rule
 * (|a − b| ≤ atol + rtol·|b|); the reported relative error is normwise, because an elementwise
 * ratio explodes on values near zero and says nothing about the result's quality.
 */
export function compare(got: Vec, want: Vec, tol: { atol: number; rtol: number }): Comparison {
  if (got.length !== want.length) {
    throw new ReferenceMismatchError(`Length mismatch: got ${got.length} values, want ${want.length}`);
  }
  let maxAbsErr = 0;
  let maxRef = 0;
  const mismatches: Comparison['mismatches'] = [];
  let bad = 0;
  for (let i = 0; i < got.length; i++) {
    const err = Math.abs(got[i] - want[i]);
    const ok = err <= tol.atol + tol.rtol * Math.abs(want[i]);
    if (!ok || Number.isNaN(got[i])) {
      bad++;
      if (mismatches.length < 8) mismatches.push({ index: i, got: got[i], want: want[i] });
    }
    if (!(err <= maxAbsErr)) maxAbsErr = Number.isNaN(err) ? Number.POSITIVE_INFINITY : err;
    maxRef = Math.max(maxRef, Math.abs(want[i]));
  }
  return { maxAbsErr, maxRelErr: maxRef > 0 ? maxAbsErr / maxRef : maxAbsErr, mismatches, passed: bad === 0 };
}
