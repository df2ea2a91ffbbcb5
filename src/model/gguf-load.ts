import { ConfigError, InputError, WeightsError } from '../errors.ts';
import { formatOfQuantType } from '../quant/formats.ts';
import { ggmlTensorBytes, ggmlTypeName, unsupportedTypeError } from '../quant/ggml-types.ts';
import { quantTypeByCode } from '../quant/registry.ts';
import { dequantizeTensor, repackTensor } from '../quant/repack.ts';
import type { QuantType } from '../quant/types.ts';
import { f16Values, type PackedTensor, packedLayout, unpackTensor } from '../weight-format.ts';
import {
  ARCHITECTURES,
  type Architecture,
  archFeatures,
  type ModelConfig,
  ModelConfigSchema,
  type RopeScaling,
} from './config.ts';
import {
  type GgufHeader,
  type GgufTensorInfo,
  GgufTruncatedError,
  type GgufValue,
  parseGgufHeader,
} from './gguf.ts';
import { MAX_SEQ_LEN_CAP } from './hf.ts';
import { type Tokenizer, tokenizerFromGguf } from './tokenizer/index.ts';
import { LM_HEAD, type ModelWeights, tensorSpecs } from './weights.ts';

/**
 * Loads a llama.cpp GGUF file (architecture llama, qwen2 or qwen3) into ModelWeights with HF
 * tensor names, as llama.cpp's converter and llama-quantize write them.
 *
 * - **Types.** Each linear weight keeps its file's type: a GGUF block type (Q4_0 … Q6_K, the Q4_K_M
 *   mix included) goes to the GPU as the file stores it, its blocks only split into quant bytes and
 *   header words for alignment (src/quant/types.ts), never dequantized and re-quantized; F16 becomes
 *   the packed 'f16' format (the halves copied as they are); F32 and BF16 become f32 (BF16 widened
 *   exactly). A tensor in any other type (the IQ family, TQ, MXFP4 …) is refused by its type's name
 *   before anything is uploaded. Every packed tensor's entry in `tensors` is its exact
 *   dequantization, bit for bit ggml's, which is what the CPU reference computes with. A packed
 *   embedding stays packed too: the lookup dequantizes the rows it reads, and a tied head reads
 *   the same table. Norms and biases are f32 whatever the file stores.
 * - **Architectures.** What qwen2 (q/k/v biases) and qwen3 (per-head q/k norms) add to llama is in
 *   the config (archFeatures); Llama 3's RoPE frequency factors (`rope_freqs.weight`) and linear
 *   RoPE scaling (`rope.scaling.*`) become the config's ropeScaling. Anything else is refused by name.
 * - **Q/K rows.** For llama, convert_hf_to_gguf.py reorders the rows of q_proj and k_proj inside
 *   each head so that llama.cpp's RoPE, which rotates adjacent pairs (2i, 2i + 1), computes what
 *   HF's rotate-half RoPE computes on pairs (i, i + headDim/2). We compute rotate-half, so the rows
 *   are put back. qwen2 and qwen3 use llama.cpp's NEOX RoPE, which is rotate-half: no permutation.
 * - **Shapes.** GGUF lists dims innermost first: a linear W[N, K] is stored with ne = [K, N].
 * - **Tokenizer.** The file's own, when it has one (src/model/tokenizer/).
 */

/** ggml type codes of the float types this loader reads besides the block types. */
export const GGML = { F32: 0, F16: 1, BF16: 30 } as const;

/** Per-layer GGUF tensor names (blk.N.<name>.<suffix>) and their HF counterparts (model.layers.N.<hf>.<suffix>). */
const LAYER_NAMES: Record<string, string> = {
  attn_norm: 'input_layernorm',
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_q_norm: 'self_attn.q_norm',
  attn_k_norm: 'self_attn.k_norm',
  attn_output: 'self_attn.o_proj',
  ffn_norm: 'post_attention_layernorm',
  ffn_gate: 'mlp.gate_proj',
  ffn_up: 'mlp.up_proj',
  ffn_down: 'mlp.down_proj',
};
const GLOBAL_NAMES: Record<string, string> = {
  'token_embd.weight': 'model.embed_tokens.weight',
  'output_norm.weight': 'model.norm.weight',
  'output.weight': LM_HEAD,
};

/** Llama 3's RoPE frequency factors: a tensor of headDim/2 f32 that no HF tensor matches. */
const ROPE_FREQS = 'rope_freqs.weight';

/** The GGUF name of an HF tensor name (llama.cpp's tensor naming for llama, qwen2 and qwen3). */
export function ggufName(hf: string): string {
  for (const [g, h] of Object.entries(GLOBAL_NAMES)) if (h === hf) return g;
  const m = /^model\.layers\.(\d+)\.(.+)\.(weight|bias)$/.exec(hf);
  const entry = m && Object.entries(LAYER_NAMES).find(([, h]) => h === m[2]);
  if (!m || !entry) throw new InputError(`${hf} has no GGUF name`);
  return `blk.${m[1]}.${entry[0]}.${m[3]}`;
}

/** The HF name of a GGUF tensor name, or undefined for a tensor the forward does not use. */
export function hfName(gguf: string): string | undefined {
  if (Object.hasOwn(GLOBAL_NAMES, gguf)) return GLOBAL_NAMES[gguf];
  const m = /^blk\.(\d+)\.([a-z_]+)\.(weight|bias)$/.exec(gguf);
  if (!m || !Object.hasOwn(LAYER_NAMES, m[2])) return undefined;
  return `model.layers.${m[1]}.${LAYER_NAMES[m[2]]}.${m[3]}`;
}

/**
 * The HF row of row `r` of a q_proj/k_proj as a llama GGUF stores it. convert_hf_to_gguf.py's
 * `permute` reshapes the rows as (heads, 2, headDim/2) and swaps the last two axes, so GGUF row
 * h·headDim + 2i + s holds HF row h·headDim + s·headDim/2 + i (s ∈ {0, 1}): the rotate-half pair
 * (i, i + headDim/2) becomes the adjacent pair (2i, 2i + 1). Only headDim matters, so the same map
 * serves q (numHeads heads) and k (numKvHeads heads).
 */
export function hfRowOfGgufRow(r: number, headDim: number): number {
  const head = Math.floor(r / headDim);
  const j = r % headDim;
  return head * headDim + (j & 1) * (headDim / 2) + (j >> 1);
}

export interface GgufLoadOptions {
  /** KV-cache length; default the file's context length capped as for HF models. */
  maxSeqLen?: number;
}

function shapeText(dims: readonly number[]): string {
  return `[${dims.join(', ')}]`;
}

/** A metadata number (u32, i32, u64, f32, …) or undefined; anything else is a ConfigError naming the key. */
function metaNumber(h: GgufHeader, key: string, source: string): number | undefined {
  const v: GgufValue | undefined = h.metadata.get(key);
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER))
    return Number(v);
  throw new ConfigError(`Invalid ${source}: ${key} must be a number, got ${String(v)}`);
}

/** Which GGUF key each config field comes from (ARCH. stands for the architecture's prefix). */
const CONFIG_KEYS: Record<keyof ModelConfig, string> = {
  arch: 'general.architecture',
  vocabSize: 'ARCH.vocab_size (or the token_embd.weight shape)',
  hiddenSize: 'ARCH.embedding_length',
  intermediateSize: 'ARCH.feed_forward_length',
  numLayers: 'ARCH.block_count',
  numHeads: 'ARCH.attention.head_count',
  numKvHeads: 'ARCH.attention.head_count_kv',
  headDim: 'ARCH.attention.key_length (or embedding_length / head_count)',
  ropeTheta: 'ARCH.rope.freq_base',
  ropeScaling: 'rope_freqs.weight or ARCH.rope.scaling.*',
  rmsNormEps: 'ARCH.attention.layer_norm_rms_epsilon',
  tieWordEmbeddings: 'output.weight (absent when tied)',
  maxSeqLen: 'ARCH.context_length',
};

/** The file's architecture: one of ARCHITECTURES, or a ConfigError naming what it is. */
function architectureOf(h: GgufHeader, source: string): Architecture {
  const arch = h.metadata.get('general.architecture');
  if (arch === undefined)
    throw new ConfigError(
      `Invalid ${source}: general.architecture is missing (it names the model's architecture)`,
    );
  if (typeof arch !== 'string' || !(ARCHITECTURES as readonly string[]).includes(arch)) {
    throw new ConfigError(
      `Invalid ${source}: general.architecture is ${JSON.stringify(String(arch))}; supported: ${ARCHITECTURES.join(', ')}`,
    );
  }
  return arch as Architecture;
}

/** RoPE scaling from the file: Llama 3's frequency factors, or linear scaling; others are refused. */
function ropeScalingOf(
  h: GgufHeader,
  arch: Architecture,
  freqs: Float32Array | undefined,
  source: string,
): RopeScaling | undefined {
  const type = h.metadata.get(`${arch}.rope.scaling.type`);
  if (type !== undefined && type !== 'none') {
    if (type !== 'linear') {
      throw new ConfigError(
        `Invalid ${source}: ${arch}.rope.scaling.type ${JSON.stringify(String(type))} is not supported (linear and Llama 3's rope_freqs.weight are)`,
      );
    }
    if (freqs) throw new ConfigError(`Invalid ${source}: both ${ROPE_FREQS} and linear RoPE scaling are set`);
    const factor = metaNumber(h, `${arch}.rope.scaling.factor`, source);
    if (factor === undefined || !(factor > 0))
      throw new ConfigError(`Invalid ${source}: ${arch}.rope.scaling.factor must be a positive number`);
    return { type: 'linear', factor };
  }
  return freqs ? { type: 'factors', factors: Array.from(freqs) } : undefined;
}

/** ModelConfig from a GGUF header; `freqs` is rope_freqs.weight's values when the file has it. */
function configFromGguf(
  h: GgufHeader,
  byName: ReadonlyMap<string, GgufTensorInfo>,
  freqs: Float32Array | undefined,
  source: string,
  opts: GgufLoadOptions,
): ModelConfig {
  const arch = architectureOf(h, source);
  const num = (key: string) => metaNumber(h, `${arch}.${key}`, source);
  const required = (key: string) => {
    const v = num(key);
    if (v === undefined) throw new ConfigError(`Invalid ${source}: ${arch}.${key} is missing`);
    return v;
  };
  const experts = num('expert_count') ?? 0;
  if (experts > 0) {
    throw new ConfigError(
      `Invalid ${source}: ${arch}.expert_count is ${experts}; mixture-of-experts models are not supported`,
    );
  }
  const hiddenSize = required('embedding_length');
  const numHeads = required('attention.head_count');
  const keyLength = num('attention.key_length');
  const valueLength = num('attention.value_length');
  const ropeDims = num('rope.dimension_count');
  // As llama.cpp reads it: the head width is embedding_length / head_count unless key_length says
  // otherwise, and rope.dimension_count (the rotated width) must then equal it.
  const headDim = keyLength ?? hiddenSize / numHeads;
  if (valueLength !== undefined && valueLength !== headDim) {
    throw new ConfigError(
      `Invalid ${source}: ${arch}.attention.value_length ${valueLength} differs from the key length ${headDim}, which is not supported`,
    );
  }
  if (ropeDims !== undefined && ropeDims !== headDim) {
    throw new ConfigError(
      `Invalid ${source}: ${arch}.rope.dimension_count ${ropeDims} is not the head width ${headDim} (partial rotary embeddings are not supported)`,
    );
  }
  const embd = byName.get('token_embd.weight');
  if (!embd) throw new WeightsError(`${source}: missing tensor token_embd.weight`);
  const ropeScaling = ropeScalingOf(h, arch, freqs, source);
  const candidate: ModelConfig = {
    ...(arch === 'llama' ? {} : { arch }),
    vocabSize: num('vocab_size') ?? embd.dims[1],
    hiddenSize,
    intermediateSize: required('feed_forward_length'),
    numLayers: required('block_count'),
    numHeads,
    numKvHeads: num('attention.head_count_kv') ?? numHeads,
    headDim,
    // llama.cpp defaults a missing freq_base to 10000 and requires the epsilon; so do we.
    ropeTheta: num('rope.freq_base') ?? 10000,
    ...(ropeScaling ? { ropeScaling } : {}),
    rmsNormEps: required('attention.layer_norm_rms_epsilon'),
    tieWordEmbeddings: !byName.has('output.weight'),
    maxSeqLen: opts.maxSeqLen ?? Math.min(required('context_length'), MAX_SEQ_LEN_CAP),
  };
  const parsed = ModelConfigSchema.safeParse(candidate);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const field = i.path[0] as keyof ModelConfig | undefined;
      const key = field ? (CONFIG_KEYS[field] ?? field).replaceAll('ARCH.', `${arch}.`) : '';
      const where = field ? `${key} (${String(field)})` : '(root)';
      return `${where}: ${i.message}`;
    });
    throw new ConfigError(`Invalid ${source}: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** Reads the bytes of one tensor, by its type, into what the model holds. */
class TensorDecoder {
  constructor(
    private readonly bytes: Uint8Array,
    private readonly dataOffset: number,
    private readonly source: string,
  ) {}

  private start(t: GgufTensorInfo) {
    return this.dataOffset + t.offset;
  }

  /** f32 values of a float tensor (F32, F16, BF16), in file order; any other type is rejected. */
  floats(t: GgufTensorInfo, what: string): Float32Array<ArrayBuffer> {
    const count = t.dims.reduce((a, b) => a * b, 1);
    const b = this.bytes;
    const at = this.start(t);
    const out = new Float32Array(count);
    // Bytes assembled little-endian by hand: correct on any host, and file offsets need no alignment.
    const bits = new Uint32Array(out.buffer);
    switch (t.type) {
      case GGML.F32:
        for (let i = 0, j = at; i < count; i++, j += 4)
          bits[i] = b[j] | (b[j + 1] << 8) | (b[j + 2] << 16) | (b[j + 3] << 24);
        return out;
      case GGML.F16: {
        const table = f16Values();
        for (let i = 0, j = at; i < count; i++, j += 2) out[i] = table[b[j] | (b[j + 1] << 8)];
        return out;
      }
      case GGML.BF16:
        // bf16 is the top half of an f32: widening is a shift.
        for (let i = 0, j = at; i < count; i++, j += 2) bits[i] = (b[j] << 16) | (b[j + 1] << 24);
        return out;
      default:
        throw new WeightsError(
          `${this.source}: tensor ${t.name} has type ${ggmlTypeName(t.type)}, but ${what} must be F32, F16 or BF16`,
        );
    }
  }

  /**
   * A linear weight W[N, K] (ne = [K, N]) with its rows placed by `rowOf` (file row → HF row):
   * a block type repacked as the file stores it, F16 as the packed 'f16' format, F32 and BF16 as f32.
   */
  linear(t: GgufTensorInfo, rowOf: (r: number) => number): { f32: Float32Array } | { packed: PackedTensor } {
    const [K, N] = t.dims;
    const b = this.bytes;
    const at = this.start(t);
    if (t.type === GGML.F32 || t.type === GGML.BF16) {
      const rows = this.floats(t, 'a linear weight');
      const out = new Float32Array(N * K);
      for (let r = 0; r < N; r++) out.set(rows.subarray(r * K, (r + 1) * K), rowOf(r) * K);
      return { f32: out };
    }
    if (t.type === GGML.F16) {
      // Word j of a row holds halves k = 2j (low) and 2j + 1 (high); K is a multiple of 4, so a
      // pair never straddles K, and words past K stay zero (the last group's padding).
      const layout = packedLayout('f16', N, K);
      const rowWords = layout.groups * 16;
      const words = new Uint32Array(layout.words);
      for (let r = 0; r < N; r++) {
        const dst = rowOf(r) * rowWords;
        for (let j = 0, s = at + 2 * r * K; j < K / 2; j++, s += 4)
          words[dst + j] = (b[s] | (b[s + 1] << 8) | (b[s + 2] << 16) | (b[s + 3] << 24)) >>> 0;
      }
      return { packed: { format: 'f16', N, K, words, scales: new Float32Array(0) } };
    }
    const type = quantTypeByCode(t.type);
    if (!type) throw unsupportedTypeError(t.name, t.type);
    const { quants, headers } = repackTensor(type, b, at, N, K, t.name);
    const format = formatOfQuantType(type);
    return {
      packed: { format, N, K, words: moveRows(quants, N, rowOf), scales: moveRows(headers, N, rowOf) },
    };
  }

  /** The exact dequantization of a block-type tensor, in file row order (ggml's, bit for bit). */
  dequantized(t: GgufTensorInfo, type: QuantType): Float32Array<ArrayBuffer> {
    const [K, N] = t.dims;
    return dequantizeTensor(type, this.bytes, this.start(t), N, K, t.name);
  }
}

/** `words` as N equal rows, row r moved to rowOf(r) (the identity returns `words` itself). */
function moveRows(
  words: Uint32Array<ArrayBuffer>,
  N: number,
  rowOf: (r: number) => number,
): Uint32Array<ArrayBuffer> {
  let identity = true;
  for (let r = 0; r < N && identity; r++) identity = rowOf(r) === r;
  if (identity) return words;
  const per = words.length / N;
  const out = new Uint32Array(words.length);
  for (let r = 0; r < N; r++) out.set(words.subarray(r * per, (r + 1) * per), rowOf(r) * per);
  return out;
}

/** f32 rows [N, K] with row r moved to rowOf(r). */
function moveFloatRows(
  values: Float32Array<ArrayBuffer>,
  N: number,
  rowOf: (r: number) => number,
): Float32Array<ArrayBuffer> {
  const per = values.length / N;
  const out = new Float32Array(values.length);
  for (let r = 0; r < N; r++) out.set(values.subarray(r * per, (r + 1) * per), rowOf(r) * per);
  return out;
}

/**
 * Checks the tensor table against the file: unique names, types ggml defines, rows of whole
 * blocks, offsets aligned to `general.alignment` and data inside the file.
 */
function checkTable(h: GgufHeader, fileBytes: number, source: string): Map<string, GgufTensorInfo> {
  const alignment = (h.metadata.get('general.alignment') as number | undefined) ?? 32;
  const byName = new Map<string, GgufTensorInfo>();
  for (const t of h.tensors) {
    if (byName.has(t.name)) throw new InputError(`${source}: tensor ${t.name} appears twice`);
    byName.set(t.name, t);
    let bytes: number;
    try {
      bytes = ggmlTensorBytes(t.type, t.dims, t.name);
    } catch (e) {
      if (e instanceof InputError) throw new InputError(`${source}: ${e.message}`);
      throw e;
    }
    if (t.offset % alignment !== 0) {
      throw new InputError(
        `${source}: tensor ${t.name}'s data offset ${t.offset} is not a multiple of general.alignment ${alignment} (misaligned tensor data)`,
      );
    }
    const begin = h.dataOffset + t.offset;
    const end = begin + bytes;
    if (end > fileBytes) {
      throw new InputError(
        `${source}: tensor ${t.name}'s data (bytes ${begin}…${end}) runs past the end of the ${fileBytes}-byte file (truncated, or its byte size disagrees with its shape)`,
      );
    }
  }
  return byName;
}

/** What the forward reads of a file: each wanted tensor with its HF name and expected GGUF dims. */
interface WantedTensor {
  hf: string;
  gguf: string;
  info: GgufTensorInfo;
  kind: 'linear' | 'norm' | 'bias' | 'embedding';
}

/**
 * Every tensor the config's forward reads, found in the table with the shape it needs and a type
 * this engine reads (checked for all of them before any is decoded, so an unsupported type is
 * refused by the first tensor that has it, before anything is uploaded).
 */
function wantedTensors(
  config: ModelConfig,
  byName: ReadonlyMap<string, GgufTensorInfo>,
  source: string,
): WantedTensor[] {
  const wanted: WantedTensor[] = [];
  for (const spec of tensorSpecs(config)) {
    const gguf = ggufName(spec.name);
    const t = byName.get(gguf);
    // GGUF dims are innermost first: the reverse of the HF shape.
    const expected = [...spec.shape].reverse();
    if (!t) {
      throw new WeightsError(
        `${source}: missing tensor ${gguf} (${spec.name}) with GGUF dims ${shapeText(expected)}`,
      );
    }
    if (t.dims.length !== expected.length || t.dims.some((d, i) => d !== expected[i])) {
      throw new WeightsError(
        `${source}: tensor ${gguf} has GGUF dims ${shapeText(t.dims)}, but the config needs ${shapeText(expected)} (${spec.name} ${shapeText(spec.shape)})`,
      );
    }
    const float = t.type === GGML.F32 || t.type === GGML.F16 || t.type === GGML.BF16;
    if (!float && !quantTypeByCode(t.type))
      throw new InputError(`${source}: ${unsupportedTypeError(gguf, t.type).message}`);
    wanted.push({ hf: spec.name, gguf, info: t, kind: spec.kind });
  }
  return wanted;
}

/** A loaded GGUF: its weights, its tokenizer when it has one, and what the loader ignored. */
export interface LoadedGguf {
  weights: ModelWeights;
  tokenizer: Tokenizer | undefined;
  warnings: string[];
}

/** Loads a whole GGUF file (llama, qwen2 or qwen3) as ModelWeights; `source` names it in every error. */
export function loadGgufModel(
  bytes: Uint8Array,
  source = 'GGUF file',
  opts: GgufLoadOptions = {},
): LoadedGguf {
  let h: GgufHeader;
  try {
    h = parseGgufHeader(bytes, source, { keepArray: (key) => key.startsWith('tokenizer.') });
  } catch (e) {
    if (e instanceof GgufTruncatedError)
      throw new InputError(`${source}: the file ends inside its GGUF header (truncated?)`);
    throw e;
  }
  const warnings: string[] = [];
  const byName = checkTable(h, bytes.byteLength, source);
  const decoder = new TensorDecoder(bytes, h.dataOffset, source);
  const freqsInfo = byName.get(ROPE_FREQS);
  const freqs = freqsInfo ? decoder.floats(freqsInfo, ROPE_FREQS) : undefined;
  const config = configFromGguf(h, byName, freqs, source, opts);
  const tokenizer = tokenizerFromGguf(h, source);
  const wanted = wantedTensors(config, byName, source);

  const { neoxRope } = archFeatures(config);
  const tensors = new Map<string, Float32Array>();
  const packed = new Map<string, PackedTensor>();
  for (const { hf, info: t, kind } of wanted) {
    if (kind === 'norm') {
      tensors.set(hf, decoder.floats(t, 'a norm weight'));
      continue;
    }
    if (kind === 'bias') {
      tensors.set(hf, decoder.floats(t, 'a bias'));
      continue;
    }
    const permuted = !neoxRope && (hf.endsWith('.q_proj.weight') || hf.endsWith('.k_proj.weight'));
    const rowOf = permuted ? (r: number) => hfRowOfGgufRow(r, config.headDim) : (r: number) => r;
    const value = decoder.linear(t, rowOf);
    if ('f32' in value) {
      tensors.set(hf, value.f32);
      continue;
    }
    const type = quantTypeByCode(t.type);
    // The reference's weights: the file's own dequantization, bit for bit ggml's.
    const dequantized = type
      ? moveFloatRows(decoder.dequantized(t, type), t.dims[1], rowOf)
      : unpackTensor(value.packed as Parameters<typeof unpackTensor>[0]);
    tensors.set(hf, dequantized);
    packed.set(hf, value.packed);
    if (kind === 'embedding' && config.tieWordEmbeddings) {
      // The lookup and the tied head read the same packed table (one copy on the GPU); the
      // reference's head is its exact dequantization, one array for both names.
      packed.set(LM_HEAD, value.packed);
      tensors.set(LM_HEAD, dequantized);
    }
  }
  const used = new Set([...wanted.map((s) => s.gguf), ROPE_FREQS]);
  const unused = h.tensors.filter((t) => !used.has(t.name));
  if (unused.length > 0) {
    const names = unused.slice(0, 4).map((t) => t.name);
    const more = unused.length > 4 ? ` and ${unused.length - 4} more` : '';
    warnings.push(`Ignored tensors the forward does not use: ${names.join(', ')}${more}`);
  }
  return { weights: { config, tensors, packed }, tokenizer, warnings };
}

/** Whether bytes start with GGUF's magic. */
export function isGguf(bytes: Uint8Array): boolean {
  return (
    bytes.byteLength >= 4 && bytes[0] === 0x47 && bytes[1] === 0x47 && bytes[2] === 0x55 && bytes[3] === 0x46
  );
}
