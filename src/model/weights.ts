import { WeightsError } from '../errors.ts';
import { dequantizePacked, quantizeTensor } from '../quant/formats.ts';
import type {
  PackedFormat,
  PackedTensor,
  RunWeightFormat,
  WeightFormat,
  WeightFormats,
} from '../weight-format.ts';
import { archFeatures, dims, type ModelConfig } from './config.ts';
import type { FileTensor } from './file-tensor.ts';

/** One weight tensor, named and shaped as Hugging Face's `LlamaForCausalLM` names it. Linear weights are [out, in]. */
export interface TensorSpec {
  readonly name: string;
  readonly shape: readonly number[];
  /** Uniform init half-width, chosen so activations stay O(1) through the stack. Norm weights use 1 ± this. */
  readonly initScale: number;
  readonly kind: 'linear' | 'norm' | 'bias' | 'embedding';
}

/**
 * Every tensor of the model in the order HF writes them. The LM head exists only when embeddings are
 * untied; q/k/v biases only for qwen2, the per-head q/k norms only for qwen3 (archFeatures).
 */
export function tensorSpecs(config: ModelConfig): TensorSpec[] {
  const { d, ffn, vocab, layers, qWidth, kvWidth, headDim } = dims(config);
  const { qkvBias, qkNorm } = archFeatures(config);
  // Uniform(-a, a) has variance a²/3; a = sqrt(3 / fanIn) gives unit-variance outputs for unit-variance inputs.
  const linear = (name: string, out: number, inp: number): TensorSpec => ({
    name,
    shape: [out, inp],
    initScale: Math.sqrt(3 / inp),
    kind: 'linear',
  });
  const norm = (name: string, width = d): TensorSpec => ({
    name,
    shape: [width],
    initScale: 0.1,
    kind: 'norm',
  });
  // Biases of ±0.5 beside the projections' unit-variance outputs: large enough that a kernel that
  // dropped them would fail the reference check, small enough to keep attention O(1).
  const bias = (name: string, width: number): TensorSpec => ({
    name,
    shape: [width],
    initScale: 0.5,
    kind: 'bias',
  });
  const specs: TensorSpec[] = [
    // Embeddings get std 1/sqrt(d), small beside the layers' O(1) outputs, as in trained models. With
    // unit-variance tied embeddings the input token's own logit (d·σ²) would dwarf every other and
    // greedy decoding would only ever repeat its input.
    { name: 'model.embed_tokens.weight', shape: [vocab, d], initScale: Math.sqrt(3 / d), kind: 'embedding' },
  ];
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}`;
    specs.push(
      norm(`${p}.input_layernorm.weight`),
      linear(`${p}.self_attn.q_proj.weight`, qWidth, d),
      ...(qkvBias ? [bias(`${p}.self_attn.q_proj.bias`, qWidth)] : []),
      linear(`${p}.self_attn.k_proj.weight`, kvWidth, d),
      ...(qkvBias ? [bias(`${p}.self_attn.k_proj.bias`, kvWidth)] : []),
      linear(`${p}.self_attn.v_proj.weight`, kvWidth, d),
      ...(qkvBias ? [bias(`${p}.self_attn.v_proj.bias`, kvWidth)] : []),
      linear(`${p}.self_attn.o_proj.weight`, d, qWidth),
      ...(qkNorm
        ? [norm(`${p}.self_attn.q_norm.weight`, headDim), norm(`${p}.self_attn.k_norm.weight`, headDim)]
        : []),
      norm(`${p}.post_attention_layernorm.weight`),
      linear(`${p}.mlp.gate_proj.weight`, ffn, d),
      linear(`${p}.mlp.up_proj.weight`, ffn, d),
      linear(`${p}.mlp.down_proj.weight`, d, ffn),
    );
  }
  specs.push(norm('model.norm.weight'));
  if (!config.tieWordEmbeddings) specs.push(linear('lm_head.weight', vocab, d));
  return specs;
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Parameter count as HF reports it (tied embeddings counted once). */
export function parameterCount(config: ModelConfig): number {
  return tensorSpecs(config).reduce((n, s) => n + elementCount(s.shape), 0);
}

/**
 * Weights keyed by HF tensor name. `tensors` holds f32 values: what the GPU uploads for f32 tensors
 * and what the CPU reference computes with for all of them. A linear weight (or the LM head) in a
 * packed format (f16, int8, int4) is also in `packed`, which the GPU uploads instead; its entry in
 * `tensors` is then the exact dequantization of the packed form, so the reference and the kernels
 * use the same weights and differ only by f32 rounding. The embedding table is packed with them
 * (--weights packs it as llama.cpp's quantizer does); with tied embeddings the head is that packed
 * table under both names, and its f32 values are the table's ("lm_head.weight" has none of its own).
 */
export interface ModelWeights {
  readonly config: ModelConfig;
  readonly tensors: ReadonlyMap<string, Float32Array>;
  readonly packed?: ReadonlyMap<string, PackedTensor>;
  /**
   * Weights left in a model file (a GGUF's linear layers and embedding), read a few rows at a time:
   * the upload reads them as the GPU holds them, and `tensors` (a TensorStore) answers each with its
   * dequantization, read anew on every request, for the CPU reference. A tied head is the
   * embedding's entry under both names.
   */
  readonly files?: ReadonlyMap<string, FileTensor>;
}

/**
 * f32 tensors by name where some live in a file: the eager ones as given, each file tensor
 * dequantized from the file on every `get` and never kept, so the CPU reference of a model bigger
 * than memory holds one tensor at a time. Iterating reads every file tensor: the weights' own
 * operations below edit a store by its parts (withTensors) instead.
 */
export class TensorStore implements ReadonlyMap<string, Float32Array> {
  constructor(
    readonly eager: ReadonlyMap<string, Float32Array>,
    readonly files: ReadonlyMap<string, FileTensor>,
  ) {}
  get(name: string): Float32Array | undefined {
    const eager = this.eager.get(name);
    if (eager) return eager;
    const f = this.files.get(name);
    return f ? f.f32Rows(0, f.N) : undefined;
  }
  has(name: string): boolean {
    return this.eager.has(name) || this.files.has(name);
  }
  get size(): number {
    return [...this.keys()].length;
  }
  *keys(): MapIterator<string> {
    yield* this.eager.keys();
    for (const name of this.files.keys()) if (!this.eager.has(name)) yield name;
  }
  *values(): MapIterator<Float32Array> {
    for (const name of this.keys()) yield this.get(name) as Float32Array;
  }
  *entries(): MapIterator<[string, Float32Array]> {
    for (const name of this.keys()) yield [name, this.get(name) as Float32Array];
  }
  [Symbol.iterator](): MapIterator<[string, Float32Array]> {
    return this.entries();
  }
  forEach(
    callback: (value: Float32Array, key: string, map: ReadonlyMap<string, Float32Array>) => void,
  ): void {
    for (const [k, v] of this.entries()) callback(v, k, this);
  }
}

/**
 * `tensors` with `set` added and `drop` removed, without reading a file tensor: a TensorStore
 * stays one (its file tensors kept unless dropped), a plain map is copied.
 */
function withTensors(
  tensors: ReadonlyMap<string, Float32Array>,
  set: ReadonlyMap<string, Float32Array>,
  drop: (name: string) => boolean = () => false,
): ReadonlyMap<string, Float32Array> {
  const base = tensors instanceof TensorStore ? tensors.eager : tensors;
  const eager = new Map<string, Float32Array>();
  for (const [name, t] of base) if (!drop(name)) eager.set(name, t);
  for (const [name, t] of set) eager.set(name, t);
  if (!(tensors instanceof TensorStore)) return eager;
  const files = new Map([...tensors.files].filter(([name]) => !drop(name) && !set.has(name)));
  return new TensorStore(eager, files);
}

/**
 * Rows [r0, r1) of tensor `name` [N, K] in f32: a slice of an eager tensor, or just those rows read
 * from the file (an embedding lookup, a chunk of the LM head, without the whole table).
 */
export function tensorRows(w: ModelWeights, name: string, K: number, r0: number, r1: number): Float32Array {
  const f =
    w.tensors instanceof TensorStore && !w.tensors.eager.has(name) ? w.tensors.files.get(name) : undefined;
  if (f) return f.f32Rows(r0, r1);
  return get(w, name).subarray(r0 * K, r1 * K);
}

export const LM_HEAD = 'lm_head.weight';

/** The embedding table's name: f32 for the lookup, or a packed table (a GGUF file's, or a run's --weights; then in `packed` too). */
export const EMBEDDING = 'model.embed_tokens.weight';

/**
 * The embedding table's format: a run's one format (--weights) packs the table with the linear
 * layers, as llama.cpp's quantizer does; a per-tensor lookup (a loaded file's) says what it holds.
 */
export function embeddingFormat(formats: WeightFormats): WeightFormat {
  return typeof formats === 'string' ? formats : formats(EMBEDDING);
}

/** The name the LM head's f32 values are under: its own, or the embedding's when tied and not packed apart. */
export function lmHeadName(w: ModelWeights): string {
  if (w.tensors.has(LM_HEAD)) return LM_HEAD;
  return w.config.tieWordEmbeddings ? EMBEDDING : LM_HEAD;
}

/** The LM head matrix [vocab, d]: the embedding itself when tied (its dequantized packed form when packed). */
export function lmHeadWeight(w: ModelWeights): Float32Array {
  return get(w, lmHeadName(w));
}

/** Names of the matrices a weight format applies to: every linear layer and the LM head. */
export function linearNames(config: ModelConfig): string[] {
  const names = tensorSpecs(config)
    .filter((s) => s.kind === 'linear')
    .map((s) => s.name);
  return config.tieWordEmbeddings ? [...names, LM_HEAD] : names;
}

/** [N, K] of a linear weight by name (the LM head included, tied or not), or of the embedding table. */
export function linearShape(config: ModelConfig, name: string): [number, number] {
  if (name === LM_HEAD) return [config.vocabSize, config.hiddenSize];
  const spec = tensorSpecs(config).find((s) => s.name === name);
  if (spec?.kind !== 'linear' && spec?.kind !== 'embedding')
    throw new WeightsError(`"${name}" is not a linear weight or the embedding table`);
  return [spec.shape[0], spec.shape[1]];
}

/** Each linear weight's format, by tensor name: its packed format, or f32 (the cost model's and the memory plan's lookup). */
export function weightFormatsOf(w: ModelWeights): (tensor: string) => WeightFormat {
  return (tensor) => w.packed?.get(tensor)?.format ?? w.files?.get(tensor)?.format ?? 'f32';
}

/** The model's weight format: that of its linear layers, or "mixed" (a GGUF file may mix types). */
export function weightFormatOf(w: ModelWeights): WeightFormat | 'mixed' {
  const formats = new Set(linearNames(w.config).map(weightFormatsOf(w)));
  return formats.size === 1 ? [...formats][0] : 'mixed';
}

/**
 * The same model with its linear layers, LM head and embedding table in `format`, as llama.cpp's
 * quantizer makes a file (`llama-quantize --pure` quantizes token_embd with the rest): packed (f16
 * rounding, int8/int4 quantization per group of 32, or a GGUF type's blocks by ggml's reference
 * quantizer), with `tensors` replaced by the dequantized values. A tied head is the packed table
 * itself, under both names. `f32` changes nothing: a run's weights are then as loaded. A tensor
 * already quantized (a Q8_0/Q4_0 GGUF's int8 or int4) is kept as it is, never re-quantized; an f16
 * one (an F16 GGUF) is packed into a narrower format from its exact f32 value. `onProgress` gets
 * the fraction done after each tensor.
 */
export function quantizeWeights(
  w: ModelWeights,
  format: RunWeightFormat,
  onProgress?: (done: number, name: string) => void,
): ModelWeights {
  if (format === 'f32') return w;
  const packed = new Map(w.packed ?? []);
  const files = new Map(w.files ?? []);
  const dequantized = new Map<string, Float32Array>();
  const tied = w.config.tieWordEmbeddings;
  // The table first: a tied head is then the same packed tensor, not a second quantization.
  const names = [EMBEDDING, ...linearNames(w.config).filter((n) => !(tied && n === LM_HEAD))];
  for (const [i, name] of names.entries()) {
    const existing = packed.get(name)?.format ?? files.get(name)?.format;
    // Only f32 and f16 are packed narrower: a quantized tensor (int8, int4, or a GGUF block type) is
    // kept as it is, never re-quantized.
    if (existing !== format && (existing === undefined || existing === 'f32' || existing === 'f16')) {
      const [N, K] = linearShape(w.config, name);
      const p = quantizeTensor(format, get(w, name), N, K, name);
      const values = dequantizePacked(p);
      packed.set(name, p);
      files.delete(name);
      dequantized.set(name, values);
    }
    onProgress?.((i + 1) / names.length, name);
  }
  // A tied head reads the packed table (one buffer under both names); a table kept in its file is
  // already the head's entry there too.
  const table = packed.get(EMBEDDING);
  if (tied && table) {
    packed.set(LM_HEAD, table);
    files.delete(LM_HEAD);
  }
  return {
    config: w.config,
    tensors: withTensors(w.tensors, dequantized, (name) => tied && name === LM_HEAD),
    packed,
    files,
  };
}

/**
 * The same model with every linear weight in f32: the packed tensors' exact dequantized values (a
 * format sweep's f32 reference, whatever format a loaded file came in). A tied head goes back to
 * being the embedding itself.
 */
export function widenWeights(w: ModelWeights): ModelWeights {
  if ((!w.packed || w.packed.size === 0) && (!w.files || w.files.size === 0)) return w;
  const tied = w.config.tieWordEmbeddings;
  // File tensors stay in `tensors` (their f32 values, read on demand); nothing is packed.
  return { config: w.config, tensors: withTensors(w.tensors, new Map(), (name) => tied && name === LM_HEAD) };
}

export function get(w: ModelWeights, name: string): Float32Array {
  const t = w.tensors.get(name);
  if (!t) throw new WeightsError(`Missing weight tensor "${name}"`);
  return t;
}

/**
 * The first `layers` layers of a model with its own embedding, final norm and LM head: a draft
 * model that needs no second download (speculative decoding's `truncated:N`). The tensors are the
 * same arrays, not copies.
 */
export function truncatedWeights(w: ModelWeights, layers: number): ModelWeights {
  const dropped = (name: string) => {
    const m = /^model\.layers\.(\d+)\./.exec(name);
    return m !== null && Number(m[1]) >= layers;
  };
  const kept = <T>(map: ReadonlyMap<string, T> | undefined) =>
    new Map([...(map ?? [])].filter(([name]) => !dropped(name)));
  return {
    config: { ...w.config, numLayers: layers },
    tensors: withTensors(w.tensors, new Map(), dropped),
    packed: kept(w.packed),
    files: kept(w.files),
  };
}

/** 32-bit FNV-1a of a string, used to derive an independent stream per tensor from one seed. */
function hashName(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Fills `out` with uniform values in [-scale, scale) from a mulberry32 stream. */
function fillUniform(out: Float32Array, seed: number, scale: number, offset: number): void {
  let s = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = offset + (2 * u - 1) * scale;
  }
}

/** One tensor of seeded random weights: its own stream, the seed mixed with its name. */
function seededTensor(spec: TensorSpec, seed: number): Float32Array {
  const data = new Float32Array(elementCount(spec.shape));
  const streamSeed = (hashName(spec.name) ^ Math.imul(seed >>> 0, 0x9e3779b1)) >>> 0;
  fillUniform(data, streamSeed, spec.initScale, spec.kind === 'norm' ? 1 : 0);
  return data;
}

/**
 * Seeded random weights. Each tensor has its own stream (seed mixed with its name), so a
 * tensor's values do not depend on the others, and Node and the browser produce identical bytes.
 */
export function randomWeights(config: ModelConfig, seed: number): ModelWeights {
  const tensors = new Map<string, Float32Array>();
  for (const spec of tensorSpecs(config)) tensors.set(spec.name, seededTensor(spec, seed));
  return { config, tensors };
}

/**
 * The same model with `kvHeads` KV heads (the KV-shrinking matrix's MHA, GQA and MQA variants):
 * the hidden size, the q, o and FFN weights, the norms and the embedding are the model's own; the
 * K and V projections, the only tensors whose shape depends on kvHeads, are seeded random ones of
 * the new shape (f32, so a packed model's are packed again by quantizeWeights). kvHeads equal to
 * the model's gives the model itself.
 */
export function withKvHeads(w: ModelWeights, kvHeads: number, seed: number): ModelWeights {
  if (kvHeads === w.config.numKvHeads) return w;
  const config = { ...w.config, numKvHeads: kvHeads };
  const seeded = new Map<string, Float32Array>();
  for (const spec of tensorSpecs(config)) {
    if (/\.self_attn\.[kv]_proj\.weight$/.test(spec.name)) seeded.set(spec.name, seededTensor(spec, seed));
  }
  const without = <T>(map: ReadonlyMap<string, T> | undefined) =>
    new Map([...(map ?? [])].filter(([name]) => !seeded.has(name)));
  return {
    config,
    tensors: withTensors(w.tensors, seeded),
    packed: without(w.packed),
    files: without(w.files),
  };
}

/** FNV-1a over every tensor's bytes in spec order: lets two processes check they hold the same weights. */
export function weightsChecksum(w: ModelWeights): string {
  let h = 0x811c9dc5;
  for (const spec of tensorSpecs(w.config)) {
    // One read per tensor: a file tensor is dequantized anew on every get.
    const t = get(w, spec.name);
    const bytes = new Uint8Array(t.buffer, t.byteOffset, t.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      h ^= bytes[i];
      h = Math.imul(h, 0x01000193);
    }
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * What the packed kernels are tuned for: the packed format holding the most of the linear weights
 * (a Q4_K_M file of SmolLM2's shape is mostly Q5_0, its rows too narrow for Q4_K), and its largest
 * tensor's [N, K]; undefined when every linear weight is f32.
 */
export function packedTuneTarget(
  w: ModelWeights,
): { format: PackedFormat; N: number; K: number } | undefined {
  const formats = weightFormatsOf(w);
  const byFormat = new Map<PackedFormat, { params: number; N: number; K: number }>();
  for (const name of linearNames(w.config)) {
    const format = formats(name);
    if (format === 'f32') continue;
    const [N, K] = linearShape(w.config, name);
    const t = byFormat.get(format) ?? { params: 0, N, K };
    if (N * K > t.N * t.K) Object.assign(t, { N, K });
    t.params += N * K;
    byFormat.set(format, t);
  }
  const best = [...byFormat].sort((a, b) => b[1].params - a[1].params)[0];
  return best && { format: best[0], N: best[1].N, K: best[1].K };
}
