import activationLib from '../../shaders/lib/activation.wgsl?raw';
import decodeOnlineLib from '../../shaders/lib/decode_online.wgsl?raw';
import gridLib from '../../shaders/lib/grid.wgsl?raw';
import headNormNoneLib from '../../shaders/lib/head_norm_none.wgsl?raw';
import headNormRmsLib from '../../shaders/lib/head_norm_rms.wgsl?raw';
import kvF16Lib from '../../shaders/lib/kv_f16.wgsl?raw';
import kvF32Lib from '../../shaders/lib/kv_f32.wgsl?raw';
import kvInt8Lib from '../../shaders/lib/kv_int8.wgsl?raw';
import kvLayoutLib from '../../shaders/lib/kv_layout.wgsl?raw';
import linearEpilogueLib from '../../shaders/lib/linear_epilogue.wgsl?raw';
import linearNormLib from '../../shaders/lib/linear_norm.wgsl?raw';
import linearPlainLib from '../../shaders/lib/linear_plain.wgsl?raw';
import packedTileLib from '../../shaders/lib/packed_tile.wgsl?raw';
import qkvBiasAddLib from '../../shaders/lib/qkv_bias_add.wgsl?raw';
import qkvBiasNoneLib from '../../shaders/lib/qkv_bias_none.wgsl?raw';
import quantBytesLib from '../../shaders/lib/quant_bytes.wgsl?raw';
import quantKScalesLib from '../../shaders/lib/quant_k_scales.wgsl?raw';
import ropePairLib from '../../shaders/lib/rope_pair.wgsl?raw';
import softmaxLib from '../../shaders/lib/softmax.wgsl?raw';
import weightsF16Lib from '../../shaders/lib/weights_f16.wgsl?raw';
import weightsF16NativeLib from '../../shaders/lib/weights_f16_native.wgsl?raw';
import weightsInt4Lib from '../../shaders/lib/weights_int4.wgsl?raw';
import weightsInt8Lib from '../../shaders/lib/weights_int8.wgsl?raw';
import weightsQ2kLib from '../../shaders/lib/weights_q2_k.wgsl?raw';
import weightsQ3kLib from '../../shaders/lib/weights_q3_k.wgsl?raw';
import weightsQ40Lib from '../../shaders/lib/weights_q4_0.wgsl?raw';
import weightsQ41Lib from '../../shaders/lib/weights_q4_1.wgsl?raw';
import weightsQ4kLib from '../../shaders/lib/weights_q4_k.wgsl?raw';
import weightsQ50Lib from '../../shaders/lib/weights_q5_0.wgsl?raw';
import weightsQ51Lib from '../../shaders/lib/weights_q5_1.wgsl?raw';
import weightsQ5kLib from '../../shaders/lib/weights_q5_k.wgsl?raw';
import weightsQ6kLib from '../../shaders/lib/weights_q6_k.wgsl?raw';
import weightsQ80Lib from '../../shaders/lib/weights_q8_0.wgsl?raw';
import windowLib from '../../shaders/lib/window.wgsl?raw';
import { KernelError } from '../errors.ts';

/**
 * Composition of WGSL from one source of truth. WGSL has no includes, so a shader marks where shared
 * text goes with whole-line directives, and `composeShader` replaces each of them:
 *   //#include NAME   the snippet shaders/lib/NAME.wgsl (see WGSL_LIBRARY), or, where NAME is one of
 *                     the wrapper's `slots`, the snippet that slot names: one shader source, several
 *                     libraries behind one interface (the packed kernels' `weights`, per format)
 *   //#params         `struct Params {…}`, generated from the kernel's `defineParams` field list
 *   //#const NAME     `const NAME: u32 = …;`, the value taken from the TS constant the wrapper passes
 * A directive may end in a `// comment`, which a `//#const` keeps. A snippet's `enable` lines move to
 * the top of the composed module, because WGSL takes them only before every declaration.
 * Any other `//#` line, an unknown snippet, a missing or unused constant or slot, a slot named like a
 * snippet, a snippet included twice (directly or through a slot), or a params marker without a field
 * list (or the reverse) is a `KernelError` naming the shader: a typo fails at import, loudly, instead
 * of compiling a shader that silently disagrees with its wrapper.
 */

/** Snippets a shader may include, by name: shaders/lib/<name>.wgsl. */
export const WGSL_LIBRARY = {
  /** workgroupIndex(): the 1-D workgroup index of a grid split by `grid1d` (kernel.ts). */
  grid: gridLib,
  /** KvLayout and kvRow(): the paged-KV pool addressing of src/kv/layout.ts, on the GPU. */
  kv_layout: kvLayoutLib,
  /**
   * The KV element types of src/kv/format.ts, one interface (KvWord, KV_EXTRA, KV_QUANTIZED, kvVec,
   * kvScale, kvPack, kvScaleWord): what the `kv` slot of the attention and KV-write shaders holds.
   */
  kv_f32: kvF32Lib,
  kv_f16: kvF16Lib,
  kv_int8: kvInt8Lib,
  /** kvFirstVisible(): the first key a query sees under a sliding window. */
  window: windowLib,
  /** NEG_BIG, the stand-in for −∞ of the online softmax. */
  softmax: softmaxLib,
  /** rope_pair(): the rotate-half rotation of the RoPE kernel and the fused RoPE + KV write. */
  rope_pair: ropePairLib,
  /**
   * The q/k/v preparation's `qkv_bias` slot (QKV_BIAS, qkv_bias()): none (llama, qwen3) or the
   * projection's bias (qwen2); and its `head_norm` slot (HEAD_NORM, head_norm_weight()): none, or
   * qwen3's per-head RMSNorm of q and k. Shared by head_prep.wgsl and rope_kv_write.wgsl.
   */
  qkv_bias_none: qkvBiasNoneLib,
  qkv_bias_add: qkvBiasAddLib,
  head_norm_none: headNormNoneLib,
  head_norm_rms: headNormRmsLib,
  /** silu() and silu4(): SwiGLU's gate, shared by the SwiGLU kernel and the fused gate/up epilogue. */
  activation: activationLib,
  /**
   * A linear kernel's `prologue` slot (src/kernels/fuse.ts): linear_plain uses x as stored;
   * linear_norm applies RMSNorm on the fly (fuse_gamma, fuse_ss, fuse_rinv, fuse_row_rinv).
   */
  linear_plain: linearPlainLib,
  linear_norm: linearNormLib,
  /** epi_store1/epi_store4: a linear kernel's store, plain, added (residual) or SwiGLU pairs. */
  linear_epilogue: linearEpilogueLib,
  /** onlineBegin/onlineRows: the barrier-free decode attention's online softmax over GROUP query heads. */
  decode_online: decodeOnlineLib,
  /** tile_run/tile_store: a barrier-free tile of rows × packed weight columns (GEMV and matmul). */
  packed_tile: packedTileLib,
  /**
   * The packed weight formats of src/model/formats.ts, one interface (w_load, w_unpack, group_scale,
   * W_VECS_PER_GROUP, X_PER_W_VEC): what a packed kernel's `weights` slot is filled with.
   */
  weights_f16: weightsF16Lib,
  /** f16 read as vec4<f16> (needs `shader-f16`); converted to f32 before any arithmetic. */
  weights_f16_native: weightsF16NativeLib,
  weights_int8: weightsInt8Lib,
  weights_int4: weightsInt4Lib,
  /**
   * The GGUF block types (src/quant/), read as the file stores them: quant_bytes is what they share
   * (the byte decode and header helpers), quant_k_scales Q4_K's and Q5_K's six-bit scales and mins.
   */
  quant_bytes: quantBytesLib,
  quant_k_scales: quantKScalesLib,
  weights_q4_0: weightsQ40Lib,
  weights_q4_1: weightsQ41Lib,
  weights_q5_0: weightsQ50Lib,
  weights_q5_1: weightsQ51Lib,
  weights_q8_0: weightsQ80Lib,
  weights_q2_k: weightsQ2kLib,
  weights_q3_k: weightsQ3kLib,
  weights_q4_k: weightsQ4kLib,
  weights_q5_k: weightsQ5kLib,
  weights_q6_k: weightsQ6kLib,
} as const;

export type WgslLibraryName = keyof typeof WGSL_LIBRARY;

/** The scalar types a Params field may have; both are 4 bytes, so field i sits at byte 4·i. */
export type ParamType = 'u32' | 'f32';

export type ParamFields = Readonly<Record<string, ParamType>>;

/** One value per field, by name. */
export type ParamValues<F extends ParamFields> = { readonly [K in keyof F]: number };

/**
 * A kernel's uniform `Params` struct, defined once: the WGSL text and the packer both come from the
 * same ordered field list, so the byte order the shader reads cannot drift from the order TS writes.
 */
export interface ParamsLayout<F extends ParamFields = ParamFields> {
  readonly fields: F;
  /** `struct Params { … }`, spliced in at `//#params`. */
  readonly wgsl: string;
  /** The uniform buffer image of `values`; `label` names the kernel in errors. */
  pack(label: string, values: ParamValues<F>): ArrayBuffer;
}

/** A field as the positional packer takes it. */
export interface ParamWord {
  readonly type: ParamType;
  readonly value: number;
}

/** Uniform buffers are sized in 16-byte steps (one vec4), at least one step. */
const UNIFORM_ALIGN_BYTES = 16;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Packs 4-byte scalars in order into a uniform buffer image padded to 16 bytes. A u32 must be an
 * integer in 0 … 2³²−1 (a float or negative shape would otherwise wrap silently on the GPU).
 */
export function packWords(label: string, words: readonly ParamWord[]): ArrayBuffer {
  const bytes = Math.max(1, Math.ceil((words.length * 4) / UNIFORM_ALIGN_BYTES)) * UNIFORM_ALIGN_BYTES;
  const data = new ArrayBuffer(bytes);
  const view = new DataView(data);
  words.forEach((w, i) => {
    if (w.type === 'u32') {
      if (!Number.isInteger(w.value) || w.value < 0 || w.value > 0xffffffff)
        throw new KernelError(`${label}: param ${i} = ${w.value} is not a u32`);
      view.setUint32(i * 4, w.value, true);
    } else {
      view.setFloat32(i * 4, w.value, true);
    }
  });
  return data;
}

/** Defines a Params struct from an ordered field list (JS keeps string keys in insertion order). */
export function defineParams<const F extends ParamFields>(fields: F): ParamsLayout<F> {
  const names = Object.keys(fields);
  if (names.length === 0) throw new KernelError('a Params struct needs at least one field');
  for (const name of names) {
    // Also rules out integer-like keys, which JS would reorder ahead of the others.
    if (!IDENTIFIER.test(name)) throw new KernelError(`Params field "${name}" is not a WGSL identifier`);
  }
  const wgsl = `struct Params {\n${names.map((n) => `  ${n}: ${fields[n]},\n`).join('')}}`;
  return {
    fields,
    wgsl,
    pack(label, values) {
      const given = Object.keys(values);
      const missing = names.filter((n) => !given.includes(n));
      const extra = given.filter((n) => !names.includes(n));
      if (missing.length > 0 || extra.length > 0) {
        const parts = [
          missing.length > 0 ? `missing ${missing.join(', ')}` : '',
          extra.length > 0 ? `unknown ${extra.join(', ')}` : '',
        ];
        throw new KernelError(`${label} params: ${parts.filter(Boolean).join('; ')}`);
      }
      return packWords(
        label,
        names.map((n) => ({ type: fields[n], value: values[n] })),
      );
    },
  };
}

/** A shader as written plus what composition splices into it. */
export interface ShaderSource<F extends ParamFields> {
  /** Names the shader in errors and labels its module (the file name without .wgsl). */
  readonly label: string;
  /** The `?raw` text of shaders/<label>.wgsl. */
  readonly code: string;
  readonly params: ParamsLayout<F>;
  /** Values of the shader's `//#const` lines, from the TS constants the wrapper sizes its dispatch with. */
  readonly constants?: Readonly<Record<string, number>>;
  /** The snippet each `//#include SLOT` line of the shader stands for, by slot name. */
  readonly slots?: Readonly<Record<string, WgslLibraryName>>;
}

/** A composed shader: the WGSL to compile and the Params layout its calls pack. */
export interface Shader<F extends ParamFields> {
  readonly label: string;
  readonly code: string;
  readonly params: ParamsLayout<F>;
}

/**
 * `compose` run once per key: a shader whose text depends on the variant (a slot's snippet, an
 * unrolled tile) is composed on first use and kept, so each combination is composed once.
 */
export function composedOnce<A extends unknown[], F extends ParamFields>(
  keyOf: (...args: A) => string,
  compose: (...args: A) => Shader<F>,
): (...args: A) => Shader<F> {
  const cache = new Map<string, Shader<F>>();
  return (...args) => {
    const key = keyOf(...args);
    let shader = cache.get(key);
    if (!shader) {
      shader = compose(...args);
      cache.set(key, shader);
    }
    return shader;
  };
}

/** `//#directive argument  // optional comment`, alone on its line. */
const DIRECTIVE = /^(\s*)\/\/#(\S+)(.*)$/;

/** A WGSL `enable` directive, alone on its line. */
const ENABLE = /^\s*enable\s[^;]*;\s*(\/\/.*)?$/;

function isLibraryName(name: string): name is WgslLibraryName {
  return Object.hasOwn(WGSL_LIBRARY, name);
}

/** Replaces every directive line of `source.code`; throws a KernelError naming the shader on any mismatch. */
export function composeShader<F extends ParamFields>(source: ShaderSource<F>): Shader<F> {
  const { label, params } = source;
  const constants = source.constants ?? {};
  const slots = source.slots ?? {};
  const fail = (what: string) => new KernelError(`shader ${label}: ${what}`);
  for (const slot of Object.keys(slots)) {
    if (isLibraryName(slot)) throw fail(`slot "${slot}" has the name of a snippet`);
  }
  const included = new Set<string>();
  const filled = new Set<string>();
  const enables: string[] = [];
  const defined = new Set<string>();
  let paramsSpliced = false;
  /**
   * The text of snippet `name`, its own `//#include`s of other snippets spliced in (a snippet may
   * build on another, as each GGUF type's weights snippet on quant_bytes; never on a slot), each
   * snippet still at most once in the whole shader.
   */
  const snippet = (name: WgslLibraryName, where: string): string => {
    if (included.has(name)) throw fail(`${where}: "${name}" is included twice`);
    included.add(name);
    const text = WGSL_LIBRARY[name].trimEnd().split('\n');
    enables.push(...text.filter((l) => ENABLE.test(l)).map((l) => l.trim()));
    return text
      .filter((l) => !ENABLE.test(l))
      .map((l, j) => {
        const m = DIRECTIVE.exec(l);
        if (!m) return l;
        const inner = `${where} (snippet ${name} line ${j + 1})`;
        const arg = m[3].split('//')[0].trim();
        if (m[2] !== 'include' || !isLibraryName(arg))
          throw fail(`${inner}: a snippet may only //#include another snippet, got "${l.trim()}"`);
        return snippet(arg, inner);
      })
      .join('\n');
  };
  const lines = source.code.split('\n').map((line, i) => {
    const m = DIRECTIVE.exec(line);
    if (!m) return line;
    const [, indent, directive, rest] = m;
    const commentAt = rest.indexOf('//');
    const arg = (commentAt < 0 ? rest : rest.slice(0, commentAt)).trim();
    const comment = commentAt < 0 ? '' : rest.slice(commentAt).trim();
    const where = `line ${i + 1}`;
    if (directive === 'include') {
      let name: string = arg;
      if (Object.hasOwn(slots, arg)) {
        if (filled.has(arg)) throw fail(`${where}: slot "${arg}" is included twice`);
        filled.add(arg);
        name = slots[arg];
      }
      if (!isLibraryName(name)) {
        const what = name === arg ? `include "${arg}"` : `snippet "${name}" for slot "${arg}"`;
        throw fail(`${where}: unknown ${what} (known: ${Object.keys(WGSL_LIBRARY).join(', ')})`);
      }
      return snippet(name, where);
    }
    if (directive === 'params') {
      if (arg !== '') throw fail(`${where}: //#params takes no argument`);
      if (paramsSpliced) throw fail(`${where}: a second //#params`);
      paramsSpliced = true;
      return params.wgsl;
    }
    if (directive === 'const') {
      if (!IDENTIFIER.test(arg)) throw fail(`${where}: //#const needs a name, got "${arg}"`);
      if (defined.has(arg)) throw fail(`${where}: constant ${arg} is declared twice`);
      if (!Object.hasOwn(constants, arg)) throw fail(`${where}: no value given for constant ${arg}`);
      const value = constants[arg];
      if (!Number.isInteger(value) || value < 0 || value > 0xffffffff)
        throw fail(`${where}: constant ${arg} = ${value} is not a u32`);
      defined.add(arg);
      return `${indent}const ${arg}: u32 = ${value}u;${comment ? `  ${comment}` : ''}`;
    }
    throw fail(`${where}: unknown directive //#${directive}`);
  });
  if (!paramsSpliced) throw fail('has no //#params line for its Params struct');
  const unused = Object.keys(constants).filter((name) => !defined.has(name));
  if (unused.length > 0) throw fail(`constants ${unused.join(', ')} are given but have no //#const line`);
  const unfilled = Object.keys(slots).filter((slot) => !filled.has(slot));
  if (unfilled.length > 0) throw fail(`slots ${unfilled.join(', ')} are given but have no //#include line`);
  const head = [...new Set(enables)];
  return { label, code: [...head, ...lines].join('\n'), params };
}
