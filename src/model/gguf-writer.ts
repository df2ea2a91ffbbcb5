import { InputError, InternalError } from '../errors.ts';
import { quantTypeByName } from '../quant/registry.ts';
import { f32ToF16Bits } from '../weight-format.ts';
import { archFeatures } from './config.ts';
import type { GgufHeader, GgufTensorInfo } from './gguf.ts';
import { ggufName } from './gguf-load.ts';
import { llama3FreqFactors } from './rope.ts';
import { get, type ModelWeights, type TensorSpec, tensorSpecs } from './weights.ts';

/**
 * The project's one GGUF v3 (or v2) writer: builds a llama.cpp-style file from ModelWeights the
 * way convert_hf_to_gguf.py and ggml would (Q/K rows permuted for llama.cpp's RoPE, Q8_0, Q4_0 and
 * Q4_K quantized by ggml's reference rules in f32 arithmetic, f16 block scales). A run with a peer writes
 * its model with it, so llama.cpp and this engine load the same file; the tests use it so that the
 * loader in gguf-load.ts is tested against files it did not write itself. It is written from the
 * format's description, not from the loader's code: the permutation is numpy's reshape/swapaxes
 * spelled out, not the loader's inverse. It writes the three architectures the loader reads, as
 * the converter does: llama (Q/K permuted; Llama 3 scaling as rope_freqs.weight), qwen2 (q/k/v
 * biases) and qwen3 (q/k head norms), the last two unpermuted (llama.cpp's NEOX RoPE). Three levels: `writeGguf` (a model's whole file),
 * `encodeGguf` (a file from parts a test may edit first, to break it) and `encodeGgufHeader` (the
 * header alone, for the header reader in gguf.ts and the capacity estimator, which read no weights).
 */

export type GgufType = 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_K';

export const GGUF_TYPE_CODES: Record<GgufType, number> = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q8_0: 8,
  Q4_K: 12,
  BF16: 30,
};

/** A metadata value, tagged with its GGUF value type. */
export type MetaValue =
  | { u32: number }
  | { i32: number }
  | { f32: number }
  | { bool: boolean }
  | { str: string }
  | { u64: bigint }
  | { strs: string[] }
  | { f32s: number[] }
  | { i32s: number[] };

/** One metadata key and its value, in file order. */
export type MetaEntry = [key: string, value: MetaValue];

/** One tensor as it goes into the file; `offset` (from the data section) overrides the computed one. */
export interface RawTensor {
  name: string;
  /** Innermost first, as GGUF stores them. */
  dims: number[];
  type: number;
  data: Uint8Array;
  offset?: number;
}

/** What a GGUF header holds: everything before the data section, each tensor's offset given. */
export interface GgufHeaderParts {
  version: number;
  meta: MetaEntry[];
  tensors: GgufTensorInfo[];
}

/** Everything a GGUF file holds, before encoding; tests edit these to build broken files. */
export interface GgufParts {
  version: number;
  meta: MetaEntry[];
  tensors: RawTensor[];
  /** The data section's alignment the encoder lays tensors out on (general.alignment should say so). */
  alignment: number;
}

/** A growable little-endian byte buffer. */
class Sink {
  private buf: Uint8Array<ArrayBuffer> = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private reserve(n: number) {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number) {
    this.reserve(1);
    this.buf[this.length++] = v;
  }
  u32(v: number) {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number) {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  f32(v: number) {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  u64(v: number | bigint) {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  str(s: string) {
    const b = new TextEncoder().encode(s);
    this.u64(b.length);
    this.bytes(b);
  }
  bytes(b: Uint8Array) {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  padTo(alignment: number) {
    while (this.length % alignment !== 0) this.u8(0);
  }
  result() {
    return this.buf.slice(0, this.length);
  }
}

/** "GGUF", version, counts, metadata, then the tensor table, ending where the table does. */
function putHeader(s: Sink, header: GgufHeaderParts) {
  s.bytes(new TextEncoder().encode('GGUF'));
  s.u32(header.version);
  s.u64(header.tensors.length);
  s.u64(header.meta.length);
  for (const [key, value] of header.meta) {
    s.str(key);
    putValue(s, value);
  }
  for (const t of header.tensors) {
    s.str(t.name);
    s.u32(t.dims.length);
    for (const d of t.dims) s.u64(d);
    s.u32(t.type);
    s.u64(t.offset);
  }
}

/** A metadata value: its GGUF value type code, then the value. */
function putValue(s: Sink, value: MetaValue) {
  if ('u32' in value) {
    s.u32(4);
    s.u32(value.u32);
  } else if ('i32' in value) {
    s.u32(5);
    s.i32(value.i32);
  } else if ('f32' in value) {
    s.u32(6);
    s.f32(value.f32);
  } else if ('bool' in value) {
    s.u32(7);
    s.u8(value.bool ? 1 : 0);
  } else if ('str' in value) {
    s.u32(8);
    s.str(value.str);
  } else if ('u64' in value) {
    s.u32(10);
    s.u64(value.u64);
  } else if ('strs' in value) {
    s.u32(9);
    s.u32(8);
    s.u64(value.strs.length);
    for (const x of value.strs) s.str(x);
  } else if ('f32s' in value) {
    s.u32(9);
    s.u32(6);
    s.u64(value.f32s.length);
    for (const x of value.f32s) s.f32(x);
  } else {
    s.u32(9);
    s.u32(5);
    s.u64(value.i32s.length);
    for (const x of value.i32s) s.i32(x);
  }
}

/**
 * The header's bytes and nothing after them: no padding to the alignment, no data section. The
 * offsets are written as given, so they may point past the end of the file: header readers
 * (gguf.ts, the capacity estimator) never look there.
 */
export function encodeGgufHeader(header: GgufHeaderParts): Uint8Array<ArrayBuffer> {
  const s = new Sink();
  putHeader(s, header);
  return s.result();
}

/**
 * The file's bytes: the header (see putHeader), then the data section at the next multiple of
 * `alignment`, each tensor at its offset (by default the next aligned one).
 */
export function encodeGguf(parts: GgufParts): Uint8Array<ArrayBuffer> {
  let next = 0;
  const offsets = parts.tensors.map((t) => {
    const at = t.offset ?? next;
    next = Math.ceil(Math.max(next, at + t.data.length) / parts.alignment) * parts.alignment;
    return at;
  });
  const s = new Sink();
  putHeader(s, {
    version: parts.version,
    meta: parts.meta,
    tensors: parts.tensors.map(({ name, dims, type }, i) => ({ name, dims, type, offset: offsets[i] })),
  });
  s.padTo(parts.alignment);
  const dataStart = s.length;
  // In offset order, so an overridden offset past the others leaves a gap (or nothing) as asked.
  const order = parts.tensors.map((t, i) => ({ t, at: offsets[i] })).sort((a, b) => a.at - b.at);
  const section = new Uint8Array(Math.max(0, ...order.map(({ t, at }) => at + t.data.length)));
  for (const { t, at } of order) section.set(t.data, at);
  s.bytes(section);
  if (s.length === dataStart) return s.result();
  s.padTo(parts.alignment);
  return s.result();
}

/**
 * convert_hf_to_gguf.py's `permute(weights, n_head)` on a row-major [rows, K] matrix:
 * `weights.reshape(n_head, 2, rows // n_head // 2, K).swapaxes(1, 2).reshape(rows, K)`. The
 * input index (h, s, i) becomes the output index (h, i, s).
 */
export function llamaCppPermute(w: Float32Array, rows: number, K: number, nHead: number): Float32Array {
  const half = rows / nHead / 2;
  const out = new Float32Array(w.length);
  for (let h = 0; h < nHead; h++)
    for (let s = 0; s < 2; s++)
      for (let i = 0; i < half; i++) {
        const from = (h * 2 + s) * half + i;
        const to = (h * half + i) * 2 + s;
        out.set(w.subarray(from * K, (from + 1) * K), to * K);
      }
  return out;
}

function putF16(out: Uint8Array, at: number, x: number) {
  const h = f32ToF16Bits(x);
  out[at] = h & 0xff;
  out[at + 1] = h >>> 8;
}

/**
 * The bytes of f32 values in `type`; a block type needs rows (`K`) of whole blocks (32 weights, 256
 * for Q4_K), quantized by ggml's reference rules (src/quant: checked byte for byte against ggml).
 */
export function encodeTensor(x: Float32Array, type: GgufType, K: number, name: string): Uint8Array {
  switch (type) {
    case 'F32': {
      const out = new Uint8Array(4 * x.length);
      const v = new DataView(out.buffer);
      for (let i = 0; i < x.length; i++) v.setFloat32(4 * i, x[i], true);
      return out;
    }
    case 'F16': {
      const out = new Uint8Array(2 * x.length);
      for (let i = 0; i < x.length; i++) putF16(out, 2 * i, x[i]);
      return out;
    }
    case 'BF16': {
      const out = new Uint8Array(2 * x.length);
      const bits = new Uint32Array(Float32Array.from(x).buffer);
      for (let i = 0; i < x.length; i++) {
        // Round to nearest even on the top 16 bits.
        const h = (bits[i] + 0x7fff + ((bits[i] >>> 16) & 1)) >>> 16;
        out[2 * i] = h & 0xff;
        out[2 * i + 1] = h >>> 8;
      }
      return out;
    }
    case 'Q8_0':
    case 'Q4_0':
    case 'Q4_K':
      return quantizeBlocks(x, type, K, name);
  }
}

function quantizeBlocks(
  x: Float32Array,
  name: 'Q8_0' | 'Q4_0' | 'Q4_K',
  K: number,
  tensor: string,
): Uint8Array {
  const type = quantTypeByName(name);
  if (!type?.quantize) throw new InternalError(`no quantizer is registered for ${name}`);
  if (K % type.blockElems !== 0) {
    throw new InputError(
      `${tensor}: ${name} stores rows as whole blocks of ${type.blockElems} weights, but the inner width ${K} is not a multiple of ${type.blockElems}`,
    );
  }
  const blocks = x.length / type.blockElems;
  const out = new Uint8Array(blocks * type.blockBytes);
  type.quantize(x, 0, blocks, out, 0);
  return out;
}

export interface GgufWriteOptions {
  /**
   * Each tensor's type. One type applies to the linear layers and the embedding, with norms kept
   * F32 as llama.cpp's quantizer keeps 1-D tensors; a function chooses per tensor. Default F32.
   */
  type?: GgufType | ((hfName: string, kind: TensorSpec['kind']) => GgufType);
  alignment?: number;
  version?: 2 | 3;
  name?: string;
  /**
   * Write the tokenizer block llama.cpp needs to load the file (see tokenizerMeta). true demands it
   * (and throws for a vocabulary too small to hold one); by default it is written where it fits, so
   * the loader's tests may still use vocabularies of a few tokens. A list of entries is a real
   * tokenizer block to write instead (tokenizerBlockOf: a vocab GGUF's own).
   */
  tokenizer?: boolean | MetaEntry[];
}

/** The types of the tokenizer keys llama.cpp reads (llama-vocab.cpp), for copying a block across files. */
const TOKENIZER_KEY_TYPES: Record<string, 'str' | 'strs' | 'f32s' | 'i32s' | 'u32' | 'bool'> = {
  'tokenizer.ggml.model': 'str',
  'tokenizer.ggml.pre': 'str',
  'tokenizer.ggml.tokens': 'strs',
  'tokenizer.ggml.token_type': 'i32s',
  'tokenizer.ggml.scores': 'f32s',
  'tokenizer.ggml.merges': 'strs',
  'tokenizer.ggml.bos_token_id': 'u32',
  'tokenizer.ggml.eos_token_id': 'u32',
  'tokenizer.ggml.eot_token_id': 'u32',
  'tokenizer.ggml.eom_token_id': 'u32',
  'tokenizer.ggml.unknown_token_id': 'u32',
  'tokenizer.ggml.seperator_token_id': 'u32',
  'tokenizer.ggml.padding_token_id': 'u32',
  'tokenizer.ggml.add_bos_token': 'bool',
  'tokenizer.ggml.add_eos_token': 'bool',
  'tokenizer.ggml.add_space_prefix': 'bool',
  'tokenizer.ggml.remove_extra_whitespaces': 'bool',
};

/**
 * The tokenizer block of a parsed GGUF header (read with its tokenizer arrays kept whole), as
 * metadata entries another file can carry: the vocabulary of a real model family, for a model of
 * that family's shape. Keys llama.cpp does not read (a chat template) are left out.
 */
export function tokenizerBlockOf(h: GgufHeader): MetaEntry[] {
  const out: MetaEntry[] = [];
  for (const [key, type] of Object.entries(TOKENIZER_KEY_TYPES)) {
    const v = h.metadata.get(key);
    if (v === undefined) continue;
    const list = typeof v === 'object' && v !== null && 'array' in v ? v.array : null;
    if (type === 'str' && typeof v === 'string') out.push([key, { str: v }]);
    else if (type === 'u32' && typeof v === 'number') out.push([key, { u32: v }]);
    else if (type === 'bool' && typeof v === 'boolean') out.push([key, { bool: v }]);
    else if (type === 'strs' && list) out.push([key, { strs: list.map(String) }]);
    else if (type === 'f32s' && list) out.push([key, { f32s: list.map(Number) }]);
    else if (type === 'i32s' && list) out.push([key, { i32s: list.map(Number) }]);
    else throw new InputError(`${key}: not the ${type} llama.cpp reads, or an array the header did not keep`);
  }
  return out;
}

/** GGUF token types, as llama.cpp's vocabulary reads them. */
const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

/** The special tokens' ids in the vocabulary tokenizerMeta writes; byte b (< 0x80) is FIRST_BYTE + b. */
export const VOCAB_IDS = { unk: 0, bos: 1, eos: 2, space: 3, firstByte: 4 } as const;

/** Byte tokens <0x00>…<0x7F>: ASCII only, so each one decodes to valid UTF-8 on its own. */
const ASCII_BYTES = 0x80;

/** The smallest vocabulary tokenizerMeta can describe: three specials, ▁ and the ASCII byte tokens. */
export const MIN_TOKENIZER_VOCAB = VOCAB_IDS.firstByte + ASCII_BYTES;

/**
 * A SentencePiece ("llama") tokenizer block for a model whose vocabulary the engine never reads
 * (it is fed token ids): what llama.cpp's loader requires (tokens, scores, types, bos/eos ids).
 * Its SPM tokenizer falls back to a byte token for any character the vocabulary lacks and aborts
 * the process if that byte token is missing (node-llama-cpp tokenizes text while it loads), so the
 * ASCII bytes are all there, and so is "▁" (the space SPM writes before a word, three bytes no ASCII
 * byte token spells); the line feed <0x0A> among them is also what the loader looks up.
 * Bytes ≥ 0x80 are left out on purpose: each alone is invalid UTF-8, and wllama's JSON layer fails
 * on a generated token that decodes to it. Every other token is plain text, "▁t<id>".
 */
export function tokenizerMeta(vocabSize: number): MetaEntry[] {
  if (vocabSize < MIN_TOKENIZER_VOCAB)
    throw new InputError(
      `a GGUF tokenizer block needs a vocabulary of at least ${MIN_TOKENIZER_VOCAB} tokens (3 specials, ▁ and the ${ASCII_BYTES} ASCII byte tokens); this model has ${vocabSize}`,
    );
  const hex = (b: number) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
  const tokens: string[] = [];
  const types: number[] = [];
  for (let i = 0; i < vocabSize; i++) {
    const b = i - VOCAB_IDS.firstByte;
    if (i === VOCAB_IDS.unk) tokens.push('<unk>');
    else if (i === VOCAB_IDS.bos) tokens.push('<s>');
    else if (i === VOCAB_IDS.eos) tokens.push('</s>');
    else if (i === VOCAB_IDS.space) tokens.push('▁');
    else if (b < ASCII_BYTES) tokens.push(hex(b));
    else tokens.push(`▁t${i}`);
    types.push(
      i === VOCAB_IDS.unk
        ? TOKEN_TYPE.unknown
        : i < VOCAB_IDS.space
          ? TOKEN_TYPE.control
          : i === VOCAB_IDS.space
            ? TOKEN_TYPE.normal
            : b < ASCII_BYTES
              ? TOKEN_TYPE.byte
              : TOKEN_TYPE.normal,
    );
  }
  return [
    ['tokenizer.ggml.model', { str: 'llama' }],
    ['tokenizer.ggml.tokens', { strs: tokens }],
    ['tokenizer.ggml.scores', { f32s: tokens.map((_, i) => (types[i] === TOKEN_TYPE.normal ? -i : 0)) }],
    ['tokenizer.ggml.token_type', { i32s: types }],
    ['tokenizer.ggml.unknown_token_id', { u32: VOCAB_IDS.unk }],
    ['tokenizer.ggml.bos_token_id', { u32: VOCAB_IDS.bos }],
    ['tokenizer.ggml.eos_token_id', { u32: VOCAB_IDS.eos }],
    ['tokenizer.ggml.add_bos_token', { bool: false }],
  ];
}

/** The parts of a llama GGUF holding `w` (f32 values of `w.tensors`), ready to edit or encode. */
export function ggufParts(w: ModelWeights, opts: GgufWriteOptions = {}): GgufParts {
  const c = w.config;
  const arch = c.arch ?? 'llama';
  const { neoxRope } = archFeatures(c);
  // Norms and biases stay F32, as llama.cpp's quantizer keeps 1-D tensors.
  const typeOf =
    typeof opts.type === 'function'
      ? opts.type
      : (_: string, kind: TensorSpec['kind']) =>
          kind === 'norm' || kind === 'bias' ? 'F32' : ((opts.type as GgufType) ?? 'F32');
  const alignment = opts.alignment ?? 32;
  const meta: MetaEntry[] = [
    ['general.architecture', { str: arch }],
    ['general.name', { str: opts.name ?? 'test model' }],
    [`${arch}.context_length`, { u32: c.maxSeqLen }],
    [`${arch}.embedding_length`, { u32: c.hiddenSize }],
    [`${arch}.block_count`, { u32: c.numLayers }],
    [`${arch}.feed_forward_length`, { u32: c.intermediateSize }],
    [`${arch}.attention.head_count`, { u32: c.numHeads }],
    [`${arch}.attention.head_count_kv`, { u32: c.numKvHeads }],
    [`${arch}.rope.freq_base`, { f32: c.ropeTheta }],
    [`${arch}.attention.layer_norm_rms_epsilon`, { f32: c.rmsNormEps }],
    [`${arch}.rope.dimension_count`, { u32: c.headDim }],
    [`${arch}.vocab_size`, { u32: c.vocabSize }],
  ];
  if (c.headDim * c.numHeads !== c.hiddenSize) {
    meta.push([`${arch}.attention.key_length`, { u32: c.headDim }]);
    meta.push([`${arch}.attention.value_length`, { u32: c.headDim }]);
  }
  if (c.ropeScaling?.type === 'linear') {
    meta.push(
      [`${arch}.rope.scaling.type`, { str: 'linear' }],
      [`${arch}.rope.scaling.factor`, { f32: c.ropeScaling.factor }],
    );
  }
  if (alignment !== 32) meta.push(['general.alignment', { u32: alignment }]);
  if (Array.isArray(opts.tokenizer)) meta.push(...opts.tokenizer);
  else if (opts.tokenizer ?? c.vocabSize >= MIN_TOKENIZER_VOCAB) meta.push(...tokenizerMeta(c.vocabSize));
  const tensors: RawTensor[] = tensorSpecs(c).map((spec) => {
    const name = ggufName(spec.name);
    let data = get(w, spec.name);
    const K = spec.shape[spec.shape.length - 1];
    if (!neoxRope && spec.name.endsWith('.q_proj.weight'))
      data = llamaCppPermute(data, spec.shape[0], K, c.numHeads);
    if (!neoxRope && spec.name.endsWith('.k_proj.weight'))
      data = llamaCppPermute(data, spec.shape[0], K, c.numKvHeads);
    const type = typeOf(spec.name, spec.kind);
    return {
      name,
      dims: [...spec.shape].reverse(),
      type: GGUF_TYPE_CODES[type],
      data: encodeTensor(data, type, K, name),
    };
  });
  // Llama 3's scaling goes in as the converter writes it: the frequency factors, one per pair.
  const s = c.ropeScaling;
  const factors = s?.type === 'llama3' ? llama3FreqFactors(c) : s?.type === 'factors' ? s.factors : undefined;
  if (factors) {
    const data = Float32Array.from(factors);
    tensors.push({
      name: 'rope_freqs.weight',
      dims: [factors.length],
      type: GGUF_TYPE_CODES.F32,
      data: encodeTensor(data, 'F32', factors.length, 'rope_freqs.weight'),
    });
  }
  return { version: opts.version ?? 3, meta, tensors, alignment };
}

/** A GGUF file of `w`, as llama.cpp's converter and quantizer would write it. */
export function writeGguf(w: ModelWeights, opts: GgufWriteOptions = {}): Uint8Array<ArrayBuffer> {
  return encodeGguf(ggufParts(w, opts));
}
