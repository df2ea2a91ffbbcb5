import { InputError } from '../errors.ts';
import type { BufferPool } from '../gpu/buffers.ts';
import { graphFuses, type KernelVariants } from '../kernels/variants.ts';
import type { PackedFormat, WeightFormat } from '../weight-format.ts';
import { archFeatures, dims } from './config.ts';
import { concatRows, interleaveRows, layerKinds, type RowTensor } from './fused.ts';
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
interface LayerBuffers {
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
  return new Set([...(weights.packed?.values() ?? [])].map((p) => p.format));
}

/**
 * Whether the model runs the fused graph (src/kernels/fuse.ts): unless `fuse` is false, when its
 * families take the fusions. Each layer then fuses what its formats allow (layerKinds).
 */
export function runsFused(weights: ModelWeights, variants: KernelVariants, fuse: boolean): boolean {
  return fuse && graphFuses(variants, packedFormatsOf(weights).size > 0);
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
  // A linear weight goes up in its format: the packed words and scales when it has them.
  const uploadRows = async (label: string, t: RowTensor): Promise<LinearWeight> => {
    if ('f32' in t) return { format: 'f32', w: await buffers.upload(label, t.f32) };
    const p = t.packed;
    return {
      format: p.format,
      w: await buffers.upload(`${label} (${p.format})`, p.words),
      scales: p.scales.length > 0 ? await buffers.upload(`${label} scales`, p.scales) : undefined,
    };
  };
  const rowsOf = (tensor: string): RowTensor => {
    const p = weights.packed?.get(tensor);
    if (p) return { N: p.N, K: p.K, packed: p };
    const spec = tensorSpecs(config).find((t) => t.name === tensor);
    const [N, K] = spec?.shape ?? [0, 0];
    return { N, K, f32: get(weights, tensor) };
  };
  const linear = (tensor: string) => uploadRows(tensor, rowsOf(tensor));
  for (const spec of tensorSpecs(config)) {
    if (spec.shape.length === 2 && spec.shape[1] % 4 !== 0) {
      throw new InputError(`${spec.name}: inner width ${spec.shape[1]} is not a multiple of 4`);
    }
  }
  const embedding = weights.packed?.has(EMBEDDING)
    ? await linear(EMBEDDING)
    : ({ format: 'f32', w: await upload(EMBEDDING) } as const);
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
              wqkv: await uploadRows(`${p} qkv`, concatRows(`${p} q/k/v`, [q, k, v].map(rowsOf))),
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
              wGateUp: await uploadRows(
                `${p} gate/up`,
                interleaveRows(`${p} gate/up`, rowsOf(gate), rowsOf(up)),
              ),
            }
          : { kind: 'split', wGate: await linear(gate), wUp: await linear(up) },
      wDown: await linear(`${p}.mlp.down_proj.weight`),
    });
  }
  const finalNorm = await upload('model.norm.weight');
  // A tied head is the embedding's buffers themselves (f32, or a file's packed table); only a head
  // the run packed from an f32 embedding (--weights) is a copy of its own.
  const ownCopy = weights.packed?.has(LM_HEAD) && weights.packed.get(LM_HEAD) !== weights.packed.get(EMBEDDING);
  const lmHead: LinearWeight = config.tieWordEmbeddings && !ownCopy ? embedding : await linear(LM_HEAD);
  const table = ropeTable(config);
  const ropeCos = await buffers.upload('rope cos', table.cos);
  const ropeSin = await buffers.upload('rope sin', table.sin);
  return { embedding, layers: layerBuffers, finalNorm, lmHead, ropeCos, ropeSin };
}
