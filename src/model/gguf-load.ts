import { ConfigError, InputError, WeightsError } from '../errors.ts';
import { ggmlTensorBytes, ggmlTypeName, unsupportedTypeError } from '../quant/ggml-types.ts';
import { quantTypeByCode } from '../quant/registry.ts';
import { type ByteSource, bytesSource, syncReader } from './byte-source.ts';
import {
  ARCHITECTURES,
  type Architecture,
  archFeatures,
  type ModelConfig,
  ModelConfigSchema,
  type RopeScaling,
} from './config.ts';
import { type FileTensor, fileTensor } from './file-tensor.ts';
import {
  type GgufHeader,
  type GgufTensorInfo,
  GgufTruncatedError,
  type GgufValue,
  parseGgufHeader,
} from './gguf.ts';
import { MAX_SEQ_LEN_CAP } from './hf.ts';
import { TOKENIZER_GGUF_OPTIONS, type Tokenizer, tokenizerFromGguf } from './tokenizer/index.ts';
import { LM_HEAD, type ModelWeights, TensorStore, tensorSpecs } from './weights.ts';

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

/** The f32 values of a small float tensor (a norm, a bias, the RoPE factors): F32, F16 or BF16. */
function smallFloats(
  read: (offset: number, length: number) => Uint8Array,
  h: GgufHeader,
  t: GgufTensorInfo,
  what: string,
  source: string,
): Float32Array<ArrayBuffer> {
  if (t.type !== GGML.F32 && t.type !== GGML.F16 && t.type !== GGML.BF16) {
    throw new WeightsError(
      `${source}: tensor ${t.name} has type ${ggmlTypeName(t.type)}, but ${what} must be F32, F16 or BF16`,
    );
  }
  const count = t.dims.reduce((a, b) => a * b, 1);
  const bytes = read(h.dataOffset + t.offset, ggmlTensorBytes(t.type, t.dims, t.name));
  // fileTensor's decoder, over the tensor's bytes as one row of `count` values.
  return fileTensor(bytesSource(bytes, source), t.name, t.type, [count, 1], 0).f32Rows(0, 1);
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
  // A tensor's bytes follow from its shape and type; they must end before the next tensor's begin,
  // or the shape claims more than the file holds for it (llama.cpp's loader lays tensors out back to back).
  const sizes = new Map(h.tensors.map((t) => [t, ggmlTensorBytes(t.type, t.dims, t.name)]));
  const inOrder = [...h.tensors].sort((a, b) => a.offset - b.offset);
  for (let i = 0; i + 1 < inOrder.length; i++) {
    const [t, next] = [inOrder[i], inOrder[i + 1]];
    const end = t.offset + (sizes.get(t) ?? 0);
    if (end > next.offset) {
      throw new InputError(
        `${source}: tensor ${t.name} (${ggmlTypeName(t.type)} ${shapeText(t.dims)}) needs ${sizes.get(t)} bytes, but tensor ${next.name} begins ${next.offset - t.offset} bytes after it: its byte size disagrees with its shape`,
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

/**
 * The header of a file read through `read`, from its first MiB and doubling until the header fits
 * (a vocabulary of 150k tokens is a few MiB), tokenizer arrays kept whole.
 */
function readHeader(
  read: (offset: number, length: number) => Uint8Array,
  size: number,
  source: string,
): GgufHeader {
  for (let length = Math.min(size, 1 << 20); ; length = Math.min(size, length * 2)) {
    try {
      return parseGgufHeader(read(0, length), source, TOKENIZER_GGUF_OPTIONS);
    } catch (e) {
      if (!(e instanceof GgufTruncatedError)) throw e;
      if (length === size)
        throw new InputError(`${source}: the file ends inside its GGUF header (truncated?)`);
    }
  }
}

/**
 * Loads a GGUF file (llama, qwen2 or qwen3), given whole or as a ByteSource read in slices; `source`
 * names it in every error. It reads the header, the norms and biases; the linear weights and the
 * embedding stay in the file (ModelWeights.files), read a few rows at a time when uploaded and
 * when the CPU reference needs them. Needs a synchronous reader (in memory, or a File in a worker).
 */
export function loadGgufModel(
  input: Uint8Array | ByteSource,
  source = 'GGUF file',
  opts: GgufLoadOptions = {},
): LoadedGguf {
  const file = input instanceof Uint8Array ? bytesSource(input, source) : input;
  const read = syncReader(file);
  const h = readHeader(read, file.size, source);
  const warnings: string[] = [];
  const byName = checkTable(h, file.size, source);
  const freqsInfo = byName.get(ROPE_FREQS);
  const freqs = freqsInfo ? smallFloats(read, h, freqsInfo, ROPE_FREQS, source) : undefined;
  const config = configFromGguf(h, byName, freqs, source, opts);
  const tokenizer = tokenizerFromGguf(h, source);
  const wanted = wantedTensors(config, byName, source);

  const { neoxRope } = archFeatures(config);
  const eager = new Map<string, Float32Array>();
  const files = new Map<string, FileTensor>();
  for (const { hf, info: t, kind } of wanted) {
    if (kind === 'norm' || kind === 'bias') {
      eager.set(hf, smallFloats(read, h, t, kind === 'norm' ? 'a norm weight' : 'a bias', source));
      continue;
    }
    const permuted = !neoxRope && (hf.endsWith('.q_proj.weight') || hf.endsWith('.k_proj.weight'));
    const rowOf = permuted ? (r: number) => hfRowOfGgufRow(r, config.headDim) : undefined;
    const at = h.dataOffset + t.offset;
    const tensor = fileTensor(file, t.name, t.type, t.dims, at, rowOf, permuted ? config.headDim : 1);
    files.set(hf, tensor);
    // The lookup and a tied head read the same table (one copy on the GPU).
    if (kind === 'embedding' && config.tieWordEmbeddings) files.set(LM_HEAD, tensor);
  }
  const used = new Set([...wanted.map((s) => s.gguf), ROPE_FREQS]);
  const unused = h.tensors.filter((t) => !used.has(t.name));
  if (unused.length > 0) {
    const names = unused.slice(0, 4).map((t) => t.name);
    const more = unused.length > 4 ? ` and ${unused.length - 4} more` : '';
    warnings.push(`Ignored tensors the forward does not use: ${names.join(', ')}${more}`);
  }
  return { weights: { config, tensors: new TensorStore(eager, files), files }, tokenizer, warnings };
}

/** Whether bytes start with GGUF's magic. */
export function isGguf(bytes: Uint8Array): boolean {
  return (
    bytes.byteLength >= 4 && bytes[0] === 0x47 && bytes[1] === 0x47 && bytes[2] === 0x55 && bytes[3] === 0x46
  );
}
