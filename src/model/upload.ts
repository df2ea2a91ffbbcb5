import { InputError } from '../errors.ts';
import type { BufferPool } from '../gpu/buffers.ts';
import { graphFuses, type KernelVariants } from '../kernels/variants.ts';
import { gpuLayout } from '../quant/formats.ts';
import { BYTES, type PackedFormat, type PackedTensor, type WeightFormat } from '../weight-format.ts';
import { archFeatures, dims } from './config.ts';
import type { FileTensor, RowChunk } from './file-tensor.ts';
import { interleaveRows, layerKinds, type RowTensor } from './fused.ts';
import { ropeTable } from './rope.ts';
import { EMBEDDING, get, LM_HEAD, type ModelWeights, tensorSpecs, weightFormatsOf } from './weights.ts';

/**
 * A linear weight W[N, K] on the GPU: f32 floats, or a packed format's words and, for int8 and
 * int4, its scales (src/model/formats.ts has the layout).
 */
export interface LinearWeight {
  format: WeightFormat;
  w: GPUBuffer;
  scales?: GPUBuffer;
}

/**
 * A layer's weights. The unfused graph holds each projection as loaded; the fused graph holds
 * [Wq; Wk; Wv] as one weight and gate/up interleaved (src/model/fused.ts), each in one format.
 */
export interface LayerBuffers {
  inputNorm: GPUBuffer; // [d]
  /** qwen2's q/k/v biases: each apart (unfused), or one [q; k; v] buffer (fused). */
  attn:
    | {
        kind: 'split';
        wq: LinearWeight; // [qWidth, d]
        wk: LinearWeight; // [kvWidth, d]
        wv: LinearWeight; // [kvWidth, d]
        bq?: GPUBuffer; // [qWidth]
        bk?: GPUBuffer; // [kvWidth]
        bv?: GPUBuffer; // [kvWidth]
      }
    | { kind: 'fused'; wqkv: LinearWeight; bqkv?: GPUBuffer }; // [qWidth + 2 kvWidth, d], [qWidth + 2 kvWidth]
  /** qwen3's per-head q and k norm weights, [2, headDim]: q's, then k's. */
  headNorm?: GPUBuffer;
  wo: LinearWeight; // [d, qWidth]
  postNorm: GPUBuffer; // [d]
  mlp:
    | { kind: 'split'; wGate: LinearWeight; wUp: LinearWeight } // [ffn, d]
    | { kind: 'fused'; wGateUp: LinearWeight }; // [2 ffn, d], gate row j at 2j, up row j at 2j + 1
  wDown: LinearWeight; // [d, ffn]
}

/** A model's weights on the GPU, laid out for the graph it runs, and the RoPE table. */
export interface GpuWeights {
  /** f32, or a GGUF file's token_embd in its own type (the lookup then dequantizes rows as it reads them). */
  embedding: LinearWeight; // [vocab, d]
  layers: LayerBuffers[];
  finalNorm: GPUBuffer; // [d]
  lmHead: LinearWeight; // [vocab, d]
  ropeCos: GPUBuffer; // [maxSeqLen, headDim/2]
  ropeSin: GPUBuffer; // [maxSeqLen, headDim/2]
}

/** Float arrays end to end, in one new array. */
function concatFloats(parts: readonly Float32Array[]): Float32Array<ArrayBuffer> {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The packed formats a model's weights hold. */
export function packedFormatsOf(weights: ModelWeights): Set<PackedFormat> {
  const formats = new Set<PackedFormat>();
  for (const p of weights.packed?.values() ?? []) formats.add(p.format);
  for (const f of weights.files?.values() ?? []) if (f.format !== 'f32') formats.add(f.format);
  return formats;
}

/** The formats of the linear weights a model holds on the GPU (the layers' projections and the head). */
export function linearFormatsOf(w: GpuWeights): Set<WeightFormat> {
  const formats = new Set<WeightFormat>([w.lmHead.format]);
  for (const l of w.layers) {
    const linear = [
      ...(l.attn.kind === 'fused' ? [l.attn.wqkv] : [l.attn.wq, l.attn.wk, l.attn.wv]),
      l.wo,
      ...(l.mlp.kind === 'fused' ? [l.mlp.wGateUp] : [l.mlp.wGate, l.mlp.wUp]),
      l.wDown,
    ];
    for (const x of linear) formats.add(x.format);
  }
  return formats;
}

/**
 * Whether the model runs the fused graph (src/kernels/fuse.ts): unless `fuse` is false, when its
 * families take the fusions. Each layer then fuses what its formats allow (layerKinds).
 */
export function runsFused(weights: ModelWeights, variants: KernelVariants, fuse: boolean): boolean {
  return fuse && graphFuses(variants, packedFormatsOf(weights).size > 0);
}

/** A weight's rows, read a chunk at a time: a FileTensor, or one in memory (memoryRows). */
type RowSource = Pick<FileTensor, 'format' | 'N' | 'K' | 'rowStep' | 'rows'>;

/** A weight already in memory as a RowSource: its chunks are views of its arrays. */
function memoryRows(t: RowTensor): RowSource {
  if ('f32' in t)
    return {
      format: 'f32',
      N: t.N,
      K: t.K,
      rowStep: 1,
      rows: async (r0, r1) => ({ f32: t.f32.subarray(r0 * t.K, r1 * t.K) as Float32Array<ArrayBuffer> }),
    };
  const p = t.packed;
  const wordsPerRow = p.words.length / p.N;
  const scalesPerRow = p.scales.length / p.N;
  return {
    format: p.format,
    N: p.N,
    K: p.K,
    rowStep: 1,
    rows: async (r0, r1) => ({
      words: p.words.subarray(r0 * wordsPerRow, r1 * wordsPerRow),
      scales: p.scales.subarray(r0 * scalesPerRow, r1 * scalesPerRow),
    }),
  };
}

/** GPU bytes a chunk aims at: a file's weight goes up this much at a time, never whole in memory. */
const CHUNK_BYTES = 8 << 20;

/**
 * Uploads weights `parts` (one format, one inner width) as one weight: rows stacked part after part
 * ([Wq; Wk; Wv], or a single weight) or two parts interleaved (gate/up: row 2j gate's j, 2j + 1
 * up's j; src/model/fused.ts), a few MiB of rows at a time into buffers sized for the whole.
 */
async function uploadWeight(
  buffers: BufferPool,
  label: string,
  parts: readonly RowSource[],
  layout: 'stack' | 'interleave',
): Promise<LinearWeight> {
  const [{ format, K }] = parts;
  if (parts.some((p) => p.format !== format || p.K !== K))
    throw new InputError(
      `${label}: its parts are not all in one format and width, so they cannot share a kernel`,
    );
  const rows = parts.reduce((n, p) => n + p.N, 0);
  const one = format === 'f32' ? { words: K, scales: 0 } : gpuLayout(format, 1, K, label);
  const w = await buffers.allocate(
    format === 'f32' ? label : `${label} (${format})`,
    rows * one.words * BYTES.u32,
  );
  const scales =
    one.scales > 0 ? await buffers.allocate(`${label} scales`, rows * one.scales * BYTES.u32) : undefined;
  const write = async (row: number, chunk: RowChunk) => {
    if ('f32' in chunk) return buffers.write(w, row * one.words * BYTES.u32, chunk.f32);
    await buffers.write(w, row * one.words * BYTES.u32, chunk.words);
    if (scales) await buffers.write(scales, row * one.scales * BYTES.u32, chunk.scales);
  };
  const step = Math.max(...parts.map((p) => p.rowStep));
  const chunkRows = Math.max(
    step,
    Math.floor(CHUNK_BYTES / ((one.words + one.scales) * BYTES.u32) / step) * step,
  );
  if (layout === 'stack') {
    let base = 0;
    for (const part of parts) {
      for (let r0 = 0; r0 < part.N; r0 += chunkRows)
        await write(base + r0, await part.rows(r0, Math.min(part.N, r0 + chunkRows)));
      base += part.N;
    }
  } else {
    const [gate, up] = parts;
    if (parts.length !== 2 || gate.N !== up.N)
      throw new InputError(`${label}: interleaving needs two weights of as many rows`);
    for (let r0 = 0; r0 < gate.N; r0 += chunkRows) {
      const r1 = Math.min(gate.N, r0 + chunkRows);
      const both = [await gate.rows(r0, r1), await up.rows(r0, r1)].map((c) =>
        rowTensor(format, r1 - r0, K, c),
      );
      const mixed = interleaveRows(label, both[0], both[1]);
      await write(2 * r0, 'f32' in mixed ? { f32: mixed.f32 as Float32Array<ArrayBuffer> } : mixed.packed);
    }
  }
  return { format, w, scales };
}

/** A chunk of `rows` rows as the in-memory row moves of fused.ts take it. */
function rowTensor(format: WeightFormat, rows: number, K: number, c: RowChunk): RowTensor {
  if ('f32' in c) return { N: rows, K, f32: c.f32 };
  return { N: rows, K, packed: { format, N: rows, K, words: c.words, scales: c.scales } as PackedTensor };
}

/**
 * Uploads every weight into `buffers`, laid out for the fused graph when `fused` (q/k/v as one
 * weight, gate/up interleaved) and as loaded otherwise, then the RoPE table.
 */
export async function uploadWeights(
  buffers: BufferPool,
  weights: ModelWeights,
  fused: boolean,
): Promise<GpuWeights> {
  const config = weights.config;
  const { layers } = dims(config);
  const { qkvBias, qkNorm } = archFeatures(config);
  const formats = weightFormatsOf(weights);
  const upload = (tensor: string) => buffers.upload(tensor, get(weights, tensor));
  const sourceOf = (tensor: string): RowSource => {
    const file = weights.files?.get(tensor);
    if (file) return file;
    const p = weights.packed?.get(tensor);
    if (p) return memoryRows({ N: p.N, K: p.K, packed: p });
    const spec = tensorSpecs(config).find((t) => t.name === tensor);
    const [N, K] = spec?.shape ?? [0, 0];
    return memoryRows({ N, K, f32: get(weights, tensor) });
  };
  const linear = (tensor: string) => uploadWeight(buffers, tensor, [sourceOf(tensor)], 'stack');
  for (const spec of tensorSpecs(config)) {
    if (spec.shape.length === 2 && spec.shape[1] % 4 !== 0) {
      throw new InputError(`${spec.name}: inner width ${spec.shape[1]} is not a multiple of 4`);
    }
  }
  const embedding = await linear(EMBEDDING);
  const layerBuffers: LayerBuffers[] = [];
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}`;
    const [q, k, v] = ['q', 'k', 'v'].map((n) => `${p}.self_attn.${n}_proj.weight`);
    const [gate, up] = ['gate', 'up'].map((n) => `${p}.mlp.${n}_proj.weight`);
    const [bq, bk, bv] = ['q', 'k', 'v'].map((n) => `${p}.self_attn.${n}_proj.bias`);
    const biases = qkvBias ? [bq, bk, bv].map((name) => get(weights, name)) : undefined;
    const kinds = layerKinds(formats, fused, l);
    layerBuffers.push({
      inputNorm: await upload(`${p}.input_layernorm.weight`),
      attn:
        kinds.attn === 'fused'
          ? {
              kind: 'fused',
              wqkv: await uploadWeight(buffers, `${p} qkv`, [q, k, v].map(sourceOf), 'stack'),
              ...(biases ? { bqkv: await buffers.upload(`${p} qkv bias`, concatFloats(biases)) } : {}),
            }
          : {
              kind: 'split',
              wq: await linear(q),
              wk: await linear(k),
              wv: await linear(v),
              ...(biases ? { bq: await upload(bq), bk: await upload(bk), bv: await upload(bv) } : {}),
            },
      ...(qkNorm
        ? {
            headNorm: await buffers.upload(
              `${p} q/k head norm`,
              concatFloats([
                get(weights, `${p}.self_attn.q_norm.weight`),
                get(weights, `${p}.self_attn.k_norm.weight`),
              ]),
            ),
          }
        : {}),
      wo: await linear(`${p}.self_attn.o_proj.weight`),
      postNorm: await upload(`${p}.post_attention_layernorm.weight`),
      mlp:
        kinds.mlp === 'fused'
          ? {
              kind: 'fused',
              wGateUp: await uploadWeight(buffers, `${p} gate/up`, [gate, up].map(sourceOf), 'interleave'),
            }
          : { kind: 'split', wGate: await linear(gate), wUp: await linear(up) },
      wDown: await linear(`${p}.mlp.down_proj.weight`),
    });
  }
  const finalNorm = await upload('model.norm.weight');
  // A tied head is the embedding's buffers themselves (f32, or a packed table: a file's, or the
  // run's --weights); only a head packed apart from its table is a copy of its own.
  const ownCopy =
    weights.packed?.has(LM_HEAD) === true && weights.packed.get(LM_HEAD) !== weights.packed.get(EMBEDDING);
  const lmHead: LinearWeight = config.tieWordEmbeddings && !ownCopy ? embedding : await linear(LM_HEAD);
  const table = ropeTable(config);
  const ropeCos = await buffers.upload('rope cos', table.cos);
  const ropeSin = await buffers.upload('rope sin', table.sin);
  return { embedding, layers: layerBuffers, finalNorm, lmHead, ropeCos, ropeSin };
}
