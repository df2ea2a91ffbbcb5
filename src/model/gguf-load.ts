import { ConfigError, InputError, WeightsError } from '../errors.ts';
import { f16Values, type PackedTensor, packedLayout, unpackTensor } from '../weight-format.ts';
import { type ModelConfig, ModelConfigSchema } from './config.ts';
import {
  GGML_TYPES,
  type GgufHeader,
  type GgufTensorInfo,
  GgufTruncatedError,
  type GgufValue,
  ggufTensorBytes,
  parseGgufHeader,
} from './gguf.ts';
import { MAX_SEQ_LEN_CAP } from './hf.ts';
import { LM_HEAD, type ModelWeights, tensorSpecs } from './weights.ts';

/**
 * Loads a llama.cpp GGUF file (architecture `llama`) into ModelWeights with HF tensor names.
 *
 * - **Types.** F32 and BF16 become f32 (BF16 widened exactly); F16 linear weights become the packed
 *   'f16' format (the halves copied as they are); Q8_0 becomes int8 and Q4_0 int4 by a lossless
 *   repack (see formats.ts): the quants are copied (Q8_0) or their nibbles put in element order
 *   (Q4_0), the f16 block scale widened exactly to f32. Nothing is dequantized and re-quantized.
 *   Every packed tensor's entry in `tensors` is its exact dequantization (unpackTensor), which is
 *   what llama.cpp computes from the block: q · d (Q8_0), (q − 8) · d (Q4_0), with d widened to f32.
 *   Norms and the embedding used for the lookup are f32 whatever the file stores.
 * - **Q/K rows.** convert_hf_to_gguf.py reorders the rows of q_proj and k_proj inside each head so
 *   that llama.cpp's RoPE, which rotates adjacent pairs (2i, 2i + 1), computes what HF's rotate-half
 *   RoPE computes on pairs (i, i + headDim/2). We compute rotate-half, so the rows are put back.
 * - **Shapes.** GGUF lists dims innermost first: a linear W[N, K] is stored with ne = [K, N].
 */

/** ggml type codes this loader reads. */
export const GGML = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8, BF16: 30 } as const;

/** Per-layer GGUF tensor names (blk.N.<name>.weight) and their HF counterparts (model.layers.N.<hf>.weight). */
const LAYER_NAMES: Record<string, string> = {
  attn_norm: 'input_layernorm',
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
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

/** The GGUF name of an HF tensor name (llama.cpp's tensor naming for `llama`). */
export function ggufName(hf: string): string {
  for (const [g, h] of Object.entries(GLOBAL_NAMES)) if (h === hf) return g;
  const m = /^model\.layers\.(\d+)\.(.+)\.weight$/.exec(hf);
  const entry = m && Object.entries(LAYER_NAMES).find(([, h]) => h === m[2]);
  if (!m || !entry) throw new InputError(`${hf} has no GGUF name`);
  return `blk.${m[1]}.${entry[0]}.weight`;
}

/** The HF name of a GGUF tensor name, or undefined for a tensor the Llama forward does not use. */
export function hfName(gguf: string): string | undefined {
  if (Object.hasOwn(GLOBAL_NAMES, gguf)) return GLOBAL_NAMES[gguf];
  const m = /^blk\.(\d+)\.([a-z_]+)\.weight$/.exec(gguf);
  if (!m || !Object.hasOwn(LAYER_NAMES, m[2])) return undefined;
  return `model.layers.${m[1]}.${LAYER_NAMES[m[2]]}.weight`;
}

/**
 * The HF row of row `r` of a q_proj/k_proj as GGUF stores it. convert_hf_to_gguf.py's
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

/** Which GGUF key each config field comes from, so a bad value is reported by the name in the file. */
const CONFIG_KEYS: Record<keyof ModelConfig, string> = {
  vocabSize: 'llama.vocab_size (or the token_embd.weight shape)',
  hiddenSize: 'llama.embedding_length',
  intermediateSize: 'llama.feed_forward_length',
  numLayers: 'llama.block_count',
  numHeads: 'llama.attention.head_count',
  numKvHeads: 'llama.attention.head_count_kv',
  headDim: 'llama.attention.key_length (or embedding_length / head_count)',
  ropeTheta: 'llama.rope.freq_base',
  rmsNormEps: 'llama.attention.layer_norm_rms_epsilon',
  tieWordEmbeddings: 'output.weight (absent when tied)',
  maxSeqLen: 'llama.context_length',
};

/** ModelConfig from a llama GGUF header; `warnings` gets what is ignored (RoPE scaling). */
function configFromGguf(
  h: GgufHeader,
  byName: ReadonlyMap<string, GgufTensorInfo>,
  source: string,
  opts: GgufLoadOptions,
  warnings: string[],
): ModelConfig {
  const arch = h.metadata.get('general.architecture');
  if (arch !== 'llama') {
    throw new ConfigError(
      `Invalid ${source}: general.architecture is ${arch === undefined ? 'missing' : JSON.stringify(String(arch))}; only llama is supported`,
    );
  }
  const num = (key: string) => metaNumber(h, `llama.${key}`, source);
  const required = (key: string) => {
    const v = num(key);
    if (v === undefined) throw new ConfigError(`Invalid ${source}: llama.${key} is missing`);
    return v;
  };
  const experts = num('expert_count') ?? 0;
  if (experts > 0) {
    throw new ConfigError(
      `Invalid ${source}: llama.expert_count is ${experts}; mixture-of-experts models are not supported`,
    );
  }
  const hiddenSize = required('embedding_length');
  const numHeads = required('attention.head_count');
  const keyLength = num('attention.key_length');
  const valueLength = num('attention.value_length');
  const ropeDims = num('rope.dimension_count');
  // As llama.cpp reads it: the head width is embedding_length / head_count unless key_length says
  // otherwise, and rope.dimension_count (the rotated width) must then equal it for llama.
  const headDim = keyLength ?? hiddenSize / numHeads;
  if (valueLength !== undefined && valueLength !== headDim) {
    throw new ConfigError(
      `Invalid ${source}: llama.attention.value_length ${valueLength} differs from the key length ${headDim}, which is not supported`,
    );
  }
  if (ropeDims !== undefined && ropeDims !== headDim) {
    throw new ConfigError(
      `Invalid ${source}: llama.rope.dimension_count ${ropeDims} is not the head width ${headDim} (partial rotary embeddings are not supported)`,
    );
  }
  const embd = byName.get('token_embd.weight');
  if (!embd) throw new WeightsError(`${source}: missing tensor token_embd.weight`);
  const vocabSize = num('vocab_size') ?? embd.dims[1];
  const scaling = h.metadata.get('llama.rope.scaling.type');
  if (scaling !== undefined && scaling !== 'none') {
    warnings.push(
      `llama.rope.scaling.type ${JSON.stringify(String(scaling))} is ignored: plain RoPE is used, so rotary frequencies differ from the real model's`,
    );
  }
  if (byName.has('rope_freqs.weight')) {
    warnings.push(
      "rope_freqs.weight (Llama 3's RoPE frequency factors) is ignored: plain RoPE is used, so rotary frequencies differ from the real model's",
    );
  }
  const candidate: ModelConfig = {
    vocabSize,
    hiddenSize,
    intermediateSize: required('feed_forward_length'),
    numLayers: required('block_count'),
    numHeads,
    numKvHeads: num('attention.head_count_kv') ?? numHeads,
    headDim,
    // llama.cpp defaults a missing freq_base to 10000 and requires the epsilon; so do we.
    ropeTheta: num('rope.freq_base') ?? 10000,
    rmsNormEps: required('attention.layer_norm_rms_epsilon'),
    tieWordEmbeddings: !byName.has('output.weight'),
    maxSeqLen: opts.maxSeqLen ?? Math.min(required('context_length'), MAX_SEQ_LEN_CAP),
  };
  const parsed = ModelConfigSchema.safeParse(candidate);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const field = i.path[0] as keyof ModelConfig | undefined;
      const where = field ? `${CONFIG_KEYS[field] ?? field} (${String(field)})` : '(root)';
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

  private typeName(t: GgufTensorInfo) {
    return GGML_TYPES[t.type]?.name ?? `code ${t.type}`;
  }

  /** f32 values of a float tensor (F32, F16, BF16), in file order; quantized types are rejected. */
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
          `${this.source}: tensor ${t.name} has type ${this.typeName(t)}, but ${what} must be F32, F16 or BF16`,
        );
    }
  }

  /**
   * A linear weight W[N, K] (ne = [K, N]) with its rows placed by `rowOf` (GGUF row → HF row):
   * F16, Q8_0 and Q4_0 repacked without rounding, F32 and BF16 as f32.
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
    if (t.type === GGML.Q8_0 || t.type === GGML.Q4_0) {
      const int8 = t.type === GGML.Q8_0;
      const format = int8 ? 'int8' : 'int4';
      const blockBytes = int8 ? 34 : 18;
      const wpg = int8 ? 8 : 4;
      // K % 32 == 0 was checked with the tensor table, so each row is `groups` whole blocks.
      const layout = packedLayout(format, N, K);
      const groups = layout.groups;
      const words = new Uint32Array(layout.words);
      const scales = new Float32Array(layout.scales);
      const table = f16Values();
      for (let r = 0; r < N; r++) {
        const n = rowOf(r);
        for (let g = 0; g < groups; g++) {
          const s = at + (r * groups + g) * blockBytes;
          const w = (n * groups + g) * wpg;
          // The block's f16 scale d, widened exactly.
          scales[n * groups + g] = table[b[s] | (b[s + 1] << 8)];
          const qs = s + 2;
          if (int8) {
            // 32 int8 quants in element order: the bytes are copied as they are.
            for (let j = 0; j < 8; j++) {
              const q = qs + 4 * j;
              words[w + j] = (b[q] | (b[q + 1] << 8) | (b[q + 2] << 16) | (b[q + 3] << 24)) >>> 0;
            }
          } else {
            // ggml: byte j's low nibble is element j, its high nibble element j + 16. Here nibble
            // e of word w/8 is element e, so elements 0…15 come from low nibbles, 16…31 from high.
            for (let j = 0; j < 4; j++) {
              let word = 0;
              for (let e = 0; e < 8; e++) {
                const el = 8 * j + e;
                const nib = el < 16 ? b[qs + el] & 0xf : b[qs + el - 16] >>> 4;
                word |= nib << (4 * e);
              }
              words[w + j] = word >>> 0;
            }
          }
        }
      }
      return { packed: { format, N, K, words, scales } };
    }
    throw new WeightsError(
      `${this.source}: tensor ${t.name} has type ${this.typeName(t)}, which is not supported (F32, F16, BF16, Q8_0 and Q4_0 are)`,
    );
  }
}

/**
 * Checks the tensor table against the file: unique names, known types, rows of whole blocks,
 * offsets aligned to `general.alignment` and data inside the file.
 */
function checkTable(h: GgufHeader, fileBytes: number, source: string): Map<string, GgufTensorInfo> {
  const alignment = (h.metadata.get('general.alignment') as number | undefined) ?? 32;
  const byName = new Map<string, GgufTensorInfo>();
  for (const t of h.tensors) {
    if (byName.has(t.name)) throw new InputError(`${source}: tensor ${t.name} appears twice`);
    byName.set(t.name, t);
    const type = GGML_TYPES[t.type];
    if (!type) throw new WeightsError(`${source}: tensor ${t.name} has unknown ggml type ${t.type}`);
    if (type.blockElems > 1 && t.dims[0] % type.blockElems !== 0) {
      throw new InputError(
        `${source}: tensor ${t.name} has rows of ${t.dims[0]}, not whole ${type.name} blocks of ${type.blockElems}`,
      );
    }
    if (t.offset % alignment !== 0) {
      throw new InputError(
        `${source}: tensor ${t.name}'s data offset ${t.offset} is not a multiple of general.alignment ${alignment} (misaligned tensor data)`,
      );
    }
    const begin = h.dataOffset + t.offset;
    const end = begin + ggufTensorBytes(t, source);
    if (end > fileBytes) {
      throw new InputError(
        `${source}: tensor ${t.name}'s data (bytes ${begin}…${end}) runs past the end of the ${fileBytes}-byte file (truncated?)`,
      );
    }
  }
  return byName;
}

/** Loads a whole GGUF file (architecture llama) as ModelWeights; `source` names it in every error. */
export function loadGgufModel(
  bytes: Uint8Array,
  source = 'GGUF file',
  opts: GgufLoadOptions = {},
): { weights: ModelWeights; warnings: string[] } {
  let h: GgufHeader;
  try {
    h = parseGgufHeader(bytes, source);
  } catch (e) {
    if (e instanceof GgufTruncatedError)
      throw new InputError(`${source}: the file ends inside its GGUF header (truncated?)`);
    throw e;
  }
  const warnings: string[] = [];
  const byName = checkTable(h, bytes.byteLength, source);
  const config = configFromGguf(h, byName, source, opts, warnings);
  const decoder = new TensorDecoder(bytes, h.dataOffset, source);

  const tensors = new Map<string, Float32Array>();
  const packed = new Map<string, PackedTensor>();
  const specs = tensorSpecs(config);
  // The tied LM head is the embedding, so output.weight is expected only when untied.
  const wanted = specs.map((s) => ({ ...s, gguf: ggufName(s.name) }));
  for (const spec of wanted) {
    const t = byName.get(spec.gguf);
    // GGUF dims are innermost first: the reverse of the HF shape.
    const expected = [...spec.shape].reverse();
    if (!t) {
      throw new WeightsError(
        `${source}: missing tensor ${spec.gguf} (${spec.name}) with GGUF dims ${shapeText(expected)}`,
      );
    }
    if (t.dims.length !== expected.length || t.dims.some((d, i) => d !== expected[i])) {
      throw new WeightsError(
        `${source}: tensor ${spec.gguf} has GGUF dims ${shapeText(t.dims)}, but the config needs ${shapeText(expected)} (${spec.name} ${shapeText(spec.shape)})`,
      );
    }
    if (spec.kind === 'norm') {
      tensors.set(spec.name, decoder.floats(t, 'a norm weight'));
      continue;
    }
    const isQ = spec.name.endsWith('.q_proj.weight');
    const isK = spec.name.endsWith('.k_proj.weight');
    const rowOf = isQ || isK ? (r: number) => hfRowOfGgufRow(r, config.headDim) : (r: number) => r;
    const value = decoder.linear(t, rowOf);
    if ('f32' in value) {
      tensors.set(spec.name, value.f32);
      continue;
    }
    const dequantized = unpackTensor(value.packed);
    tensors.set(spec.name, dequantized);
    if (spec.kind === 'linear') {
      packed.set(spec.name, value.packed);
    } else if (config.tieWordEmbeddings) {
      // The tied head reads the packed embedding; the lookup reads its exact dequantization,
      // which is the head's dequantization too, so one array serves both names.
      packed.set(LM_HEAD, value.packed);
      tensors.set(LM_HEAD, dequantized);
    }
  }
  const used = new Set(wanted.map((s) => s.gguf));
  const unused = h.tensors.filter((t) => !used.has(t.name) && t.name !== 'rope_freqs.weight');
  if (unused.length > 0) {
    const names = unused.slice(0, 4).map((t) => t.name);
    const more = unused.length > 4 ? ` and ${unused.length - 4} more` : '';
    warnings.push(`Ignored tensors the Llama forward does not use: ${names.join(', ')}${more}`);
  }
  return { weights: { config, tensors, packed }, warnings };
}

/** Whether bytes start with GGUF's magic. */
export function isGguf(bytes: Uint8Array): boolean {
  return (
    bytes.byteLength >= 4 && bytes[0] === 0x47 && bytes[1] === 0x47 && bytes[2] === 0x55 && bytes[3] === 0x46
  );
}
