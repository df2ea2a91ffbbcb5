import { InputError } from '../errors.ts';
import { formatOf, type PackedTensor, type WeightFormats } from '../weight-format.ts';

/**
 * Weight layouts of the fused graph (src/kernels/fuse.ts), built at load from the model's own
 * tensors by moving whole rows, so every weight keeps its exact value and format:
 * - [Wq; Wk; Wv]: the three projections' rows one after another, so q, k and v of a token come out
 *   of one product, side by side ([heads + 2·kvHeads, headDim] per token; rope_kv_write.wgsl): the
 *   upload writes each part's rows at its offset (upload.ts uploadWeight);
 * - gate/up interleaved: gate row j at row 2j and up row j at 2j + 1, so each pair of neighbouring
 *   output columns is (gate_j, up_j) and the SwiGLU epilogue finds both in one invocation.
 * A row of a packed tensor is its words and its scales (formats.ts), so the same row moves apply.
 */

/** One weight as loaded: f32 rows [N, K], or a packed tensor. */
export type RowTensor =
  | { N: number; K: number; f32: Float32Array }
  | { N: number; K: number; packed: PackedTensor };

/** Row i of the output is row `order[i][1]` of source `order[i][0]`. */
type RowOrder = readonly (readonly [number, number])[];

function gather<T extends Float32Array | Uint32Array>(
  sources: readonly T[],
  rowLength: number,
  order: RowOrder,
  make: (n: number) => T,
): T {
  const out = make(order.length * rowLength);
  order.forEach(([s, r], i) => {
    out.set(sources[s].subarray(r * rowLength, (r + 1) * rowLength), i * rowLength);
  });
  return out;
}

function moveRows(what: string, tensors: readonly RowTensor[], order: RowOrder): RowTensor {
  const [first] = tensors;
  const K = first.K;
  if (tensors.some((t) => t.K !== K))
    throw new InputError(
      `${what}: the tensors have different inner widths (${tensors.map((t) => t.K).join(', ')})`,
    );
  const N = order.length;
  if (tensors.every((t) => 'f32' in t)) {
    const f32 = gather(
      tensors.map((t) => (t as { f32: Float32Array }).f32),
      K,
      order,
      (n) => new Float32Array(n),
    );
    return { N, K, f32 };
  }
  const packed = tensors.map((t) => ('packed' in t ? t.packed : undefined));
  const format = packed[0]?.format;
  if (!format || packed.some((p) => p?.format !== format))
    throw new InputError(`${what}: the tensors are not all in one format, so they cannot share a kernel`);
  const ps = packed as PackedTensor[];
  const wordsPerRow = ps[0].words.length / ps[0].N;
  const scalesPerRow = ps[0].scales.length / ps[0].N;
  const words = gather(
    ps.map((p) => p.words),
    wordsPerRow,
    order,
    (n) => new Uint32Array(n),
  );
  // The scales are f32 (the project's formats) or a GGUF type's header words: one format for all
  // (checked above), so one element type, and rows move alike.
  const head = ps[0];
  if (head.format === 'f16' || head.format === 'int8' || head.format === 'int4') {
    const scales = gather(
      ps.map((p) => p.scales as Float32Array<ArrayBuffer>),
      scalesPerRow,
      order,
      (n) => new Float32Array(n),
    );
    return { N, K, packed: { format: head.format, N, K, words, scales } };
  }
  const headers = gather(
    ps.map((p) => p.scales as Uint32Array<ArrayBuffer>),
    scalesPerRow,
    order,
    (n) => new Uint32Array(n),
  );
  return { N, K, packed: { format: head.format, N, K, words, scales: headers } };
}

/** Gate and up interleaved: row 2j = gate row j, row 2j + 1 = up row j. */
export function interleaveRows(what: string, gate: RowTensor, up: RowTensor): RowTensor {
  if (gate.N !== up.N) throw new InputError(`${what}: gate has ${gate.N} rows and up ${up.N}`);
  const order: [number, number][] = [];
  for (let j = 0; j < gate.N; j++) order.push([0, j], [1, j]);
  return moveRows(what, [gate, up], order);
}

/** How one layer of the fused graph runs its attention input and its MLP: fused, or split as unfused. */
export interface LayerKinds {
  /** [norm → Wq; Wk; Wv] in one product and RoPE + KV write in one dispatch, or each apart. */
  attn: 'fused' | 'split';
  /** [norm → gate/up → SwiGLU] in one product, or each apart. */
  mlp: 'fused' | 'split';
}

/**
 * Layer `layer`'s kinds in the fused graph (`fused`), or split in the unfused one: a part fuses when
 * its weights share one format, since they become one weight read by one kernel. A GGUF file may
 * mix them (Q4_K_M keeps some layers' v, or down, in Q6_K), and then only that part runs split.
 * The upload, the graph and the cost model all ask this.
 */
export function layerKinds(formats: WeightFormats, fused: boolean, layer: number): LayerKinds {
  if (!fused) return { attn: 'split', mlp: 'split' };
  const p = `model.layers.${layer}`;
  const same = (names: string[]) =>
    new Set(names.map((n) => formatOf(formats, `${p}.${n}.weight`))).size === 1;
  return {
    attn: same(['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj']) ? 'fused' : 'split',
    mlp: same(['mlp.gate_proj', 'mlp.up_proj']) ? 'fused' : 'split',
  };
}
