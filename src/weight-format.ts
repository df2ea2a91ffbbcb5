import { InputError } from './errors.ts';

/**
 * Element sizes, in bytes, of what the engine stores on the GPU. Every byte count in the cost
 * model, the memory plan, the KV cache and the buffers derives from these, so a new weight format
 * changes one table, not a dozen literal 4s.
 */
export const BYTES = {
  /** Activations, norms, the KV cache, and weights in the f32 format. */
  f32: 4,
  /** Token ids, positions, KV slots and block tables. */
  u32: 4,
} as const;

/**
 * Weight formats of the linear layers, the embedding table and the LM head (norms stay f32).
 *
 * Layout on the GPU, one weight matrix W[N, K] (N outputs, K inputs, K contiguous as in HF):
 * - **f32**: N·K floats.
 * - **packed formats** (f16, int8, int4): each row is cut into groups of GROUP = 32 weights along K;
 *   a row holds ceil(K / 32) groups, the last one padded with zeros (so K needs only be a multiple
 *   of 4, the activation's vec4). Group g of row n is WORDS_PER_GROUP[format] consecutive u32 words
 *   at word (n·groups + g)·WORDS_PER_GROUP, which kernels read as vec4<u32>:
 *   - f16: 16 words, word j = halves of k = 2j (low 16 bits) and 2j + 1 (high), IEEE binary16;
 *   - int8: 8 words, byte b of word j = q at k = 4j + b, two's complement, q in −127…127;
 *   - int4: 4 words, nibble b (bits 4b…4b+3) of word j = q at k = 8j + b, unsigned, q in 0…15.
 * - **scales** (int8, int4): one f32 per group in a second buffer, [N, groups] row-major:
 *   int8 w ≈ q · scale; int4 w ≈ (q − 8) · scale.
 *
 * Against llama.cpp: Q8_0 is the same int8 group (32 along K, symmetric) with an f16 scale stored
 * inline before its 32 bytes; Q4_0 is the same int4 group with an f16 scale inline, but packs byte
 * j's low nibble as element j and its high nibble as element j + 16. Here scales are f32 and apart
 * from the quants (so every quant word is 16-byte aligned for vec4 loads), and the nibbles are in
 * element order (one u32 = 8 consecutive weights = two x vec4s). Importing Q8_0/Q4_0 is therefore a
 * lossless repack: the quants are copied or their nibbles permuted, the f16 scale widened exactly.
 * MLC's q4f32 layout is the closest relative: also u32-packed nibbles with separate f32 scales.
 */
export const OWN_FORMATS = ['f32', 'f16', 'int8', 'int4'] as const;

/**
 * The GGUF block types a run can also quantize to on load, as llama-quantize would make them:
 * ggml's reference quantizers (quantize_row_*_ref, what llama-quantize runs without an importance
 * matrix), written in src/quant and checked there byte for byte against ggml's own machine code.
 * A row must be a whole number of blocks: 32 weights, 256 for Q4_K.
 */
export const QUANTIZABLE_FORMATS = ['q8_0', 'q4_0', 'q4_k'] as const;
export type QuantizableFormat = (typeof QUANTIZABLE_FORMATS)[number];

/** The formats a run can put its weights in (`--weights`): the project's own and the quantizable GGUF types. */
export const WEIGHT_FORMATS = [...OWN_FORMATS, ...QUANTIZABLE_FORMATS] as const;
/** A format a run can put its weights in (`--weights`), quantized on load. */
export type RunWeightFormat = (typeof WEIGHT_FORMATS)[number];

/**
 * The GGUF block types the engine reads as a file stores them (src/quant/: one module per type,
 * registered in src/quant/registry.ts, whose test checks that it lists exactly these), named as
 * llama.cpp names them, lower case. A tensor has one because its file does, or because the run
 * quantized it to one of QUANTIZABLE_FORMATS.
 */
export const QUANT_FORMATS = [
  'q4_0',
  'q4_1',
  'q5_0',
  'q5_1',
  'q8_0',
  'q2_k',
  'q3_k',
  'q4_k',
  'q5_k',
  'q6_k',
] as const;
export type QuantFormat = (typeof QUANT_FORMATS)[number];

/** Every format a weight tensor can be in. */
export const TENSOR_FORMATS = [...OWN_FORMATS, ...QUANT_FORMATS] as const;
export type WeightFormat = (typeof TENSOR_FORMATS)[number];
export type PackedFormat = Exclude<WeightFormat, 'f32'>;

export function isQuantFormat(f: string): f is QuantFormat {
  return (QUANT_FORMATS as readonly string[]).includes(f);
}

/** Weights per group along K (a scale per group for int8 and int4). */
export const GROUP = 32;

/** The project's own packed formats (quantized on load), as opposed to the GGUF block types. */
export type OwnPackedFormat = Exclude<(typeof OWN_FORMATS)[number], 'f32'>;

/** u32 words per group of 32 weights. */
export const WORDS_PER_GROUP: Record<OwnPackedFormat, number> = { f16: 16, int8: 8, int4: 4 };

/**
 * The format of each linear weight, by HF tensor name ("lm_head.weight" for the head, tied or not):
 * one format for all, or a lookup for a model that mixes them (a GGUF file may).
 */
export type WeightFormats = WeightFormat | ((tensor: string) => WeightFormat);

export function formatOf(formats: WeightFormats, tensor: string): WeightFormat {
  return typeof formats === 'string' ? formats : formats(tensor);
}

export function isWeightFormat(s: string): s is RunWeightFormat {
  return (WEIGHT_FORMATS as readonly string[]).includes(s);
}

/**
 * A weight matrix W[N, K] in a packed format, as it is uploaded: one of the project's own formats
 * (f16, int8, int4), or a GGUF block type as its file stores it (src/quant/types.ts has that layout).
 */
export type PackedTensor = OwnPackedTensor | QuantTensor;

export interface OwnPackedTensor {
  readonly format: OwnPackedFormat;
  readonly N: number;
  readonly K: number;
  /** [N, groups, WORDS_PER_GROUP] u32 words. */
  readonly words: Uint32Array<ArrayBuffer>;
  /** [N, groups] f32 scales; empty for f16. */
  readonly scales: Float32Array<ArrayBuffer>;
}

export interface QuantTensor {
  readonly format: QuantFormat;
  readonly N: number;
  readonly K: number;
  /** Each block's quant bytes, [N, blocksPerRow, quant bytes per block] as u32 words. */
  readonly words: Uint32Array<ArrayBuffer>;
  /** Each block's other bytes (scales, mins, high bits), [N, blocksPerRow, header words]. */
  readonly scales: Uint32Array<ArrayBuffer>;
}

export interface PackedLayout {
  groups: number;
  words: number;
  scales: number;
  /** Bytes on the GPU: the words plus the scales (row padding included). */
  bytes: number;
}

export function packedLayout(format: OwnPackedFormat, N: number, K: number): PackedLayout {
  const groups = Math.ceil(K / GROUP);
  const words = N * groups * WORDS_PER_GROUP[format];
  const scales = format === 'f16' ? 0 : N * groups;
  return { groups, words, scales, bytes: 4 * (words + scales) };
}

/** Rejects a shape the format cannot hold, naming the tensor. */
export function checkPackable(format: RunWeightFormat, name: string, N: number, K: number): void {
  if (!Number.isInteger(N) || !Number.isInteger(K) || N < 1 || K < 1)
    throw new InputError(`${name}: [${N}, ${K}] is not a matrix shape`);
  if (K % 4 !== 0)
    throw new InputError(`${name}: inner width ${K} is not a multiple of 4, which every format needs`);
  if (format === 'int4' && K % 8 !== 0)
    throw new InputError(
      `${name}: inner width ${K} is not a multiple of 8, which int4 needs (eight 4-bit weights per u32)`,
    );
}

// --- f16 conversion (round to nearest even), exact for every finite f32 -------------------------

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE binary16 bits of `x`, rounded to nearest even; overflow gives ±Inf, NaN stays NaN. */
export function f32ToF16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  // Unbiased exponent re-biased for f16 (bias 15).
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal in f16 (or zero): shift the mantissa with its implicit 1 into place, rounding.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = mant & ((1 << shift) - 1);
    let m = mant >>> shift;
    if (rest > half || (rest === half && m & 1)) m++;
    return sign | m;
  }
  const rest = mant & 0x1fff;
  let m = mant >>> 13;
  if (rest > 0x1000 || (rest === 0x1000 && m & 1)) {
    m++;
    if (m === 0x400) {
      m = 0;
      e++;
      if (e >= 0x1f) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | m;
}

/** The value of IEEE binary16 bits. */
export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// --- quantization on load, and the dequantization every reference uses ---------------------------

/**
 * The quants and scale of one group of (up to) 32 weights. int8: scale = max|w| / 127 and
 * q = round(w / scale). int4 follows ggml's Q4_0 rule: the weight of largest magnitude, signed,
 * maps to q = 0 (scale = it / −8), so the grid spans −8…7 steps with no code wasted; q = trunc(w /
 * scale + 8.5) clamped to 15. Scales are rounded to f32 and the quants computed with that scale.
 */
function quantizeGroup(format: 'int8' | 'int4', w: Float32Array, q: Int32Array): number {
  if (format === 'int8') {
    let amax = 0;
    for (const v of w) amax = Math.max(amax, Math.abs(v));
    const scale = Math.fround(amax / 127);
    for (let i = 0; i < w.length; i++)
      q[i] = scale === 0 ? 0 : Math.max(-127, Math.min(127, Math.round(w[i] / scale)));
    return scale;
  }
  let max = 0;
  for (const v of w) if (Math.abs(v) > Math.abs(max)) max = v;
  const scale = Math.fround(max / -8);
  for (let i = 0; i < w.length; i++)
    q[i] = scale === 0 ? 8 : Math.max(0, Math.min(15, Math.trunc(w[i] / scale + 8.5)));
  return scale;
}

/** Packs row-major W[N, K] (f32) into `format`: f16 rounds each weight, int8/int4 quantize per group. */
export function packTensor(format: OwnPackedFormat, w: Float32Array, N: number, K: number, name = 'tensor') {
  checkPackable(format, name, N, K);
  if (w.length !== N * K) throw new InputError(`${name}: ${w.length} values for a [${N}, ${K}] matrix`);
  const layout = packedLayout(format, N, K);
  const words = new Uint32Array(layout.words);
  const scales = new Float32Array(layout.scales);
  const wpg = WORDS_PER_GROUP[format];
  const group = new Float32Array(GROUP);
  const q = new Int32Array(GROUP);
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < layout.groups; g++) {
      const k0 = g * GROUP;
      const len = Math.min(GROUP, K - k0);
      group.fill(0);
      group.set(w.subarray(n * K + k0, n * K + k0 + len));
      const base = (n * layout.groups + g) * wpg;
      if (format === 'f16') {
        for (let j = 0; j < wpg; j++)
          words[base + j] = (f32ToF16Bits(group[2 * j]) | (f32ToF16Bits(group[2 * j + 1]) << 16)) >>> 0;
        continue;
      }
      scales[n * layout.groups + g] = quantizeGroup(format, group.subarray(0, len), q);
      // Padding past K holds the format's zero: q = 0 (int8) or 8 (int4).
      for (let i = len; i < GROUP; i++) q[i] = format === 'int4' ? 8 : 0;
      for (let j = 0; j < wpg; j++) {
        let word = 0;
        if (format === 'int8') {
          for (let b = 0; b < 4; b++) word |= (q[4 * j + b] & 0xff) << (8 * b);
        } else {
          for (let b = 0; b < 8; b++) word |= (q[8 * j + b] & 0xf) << (4 * b);
        }
        words[base + j] = word >>> 0;
      }
    }
  }
  return { format, N, K, words, scales } satisfies OwnPackedTensor;
}

/** Every binary16 value, by its bits: dequantizing f16 is one lookup per weight. */
let f16Table: Float32Array | undefined;
export function f16Values(): Float32Array {
  if (!f16Table) {
    f16Table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) f16Table[h] = f16BitsToF32(h);
  }
  return f16Table;
}

/** W[N, K] as the kernels see it: each packed weight dequantized exactly (f16 widened, q · scale in f32). */
export function unpackTensor(p: OwnPackedTensor): Float32Array<ArrayBuffer> {
  const { N, K, format } = p;
  const { groups } = packedLayout(format, N, K);
  const wpg = WORDS_PER_GROUP[format];
  const out = new Float32Array(N * K);
  const halves = format === 'f16' ? f16Values() : undefined;
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < groups; g++) {
      const base = (n * groups + g) * wpg;
      const scale = format === 'f16' ? 1 : p.scales[n * groups + g];
      const k0 = g * GROUP;
      const len = Math.min(GROUP, K - k0);
      const o = n * K + k0;
      // The stores round q · scale to f32, as the kernels' multiply does.
      for (let i = 0; i < len; i++) {
        if (halves) {
          const word = p.words[base + (i >> 1)];
          out[o + i] = halves[i & 1 ? word >>> 16 : word & 0xffff];
        } else if (format === 'int8') {
          const byte = (p.words[base + (i >> 2)] >>> (8 * (i & 3))) & 0xff;
          out[o + i] = ((byte << 24) >> 24) * scale;
        } else {
          out[o + i] = (((p.words[base + (i >> 3)] >>> (4 * (i & 7))) & 0xf) - 8) * scale;
        }
      }
    }
  }
  return out;
}
