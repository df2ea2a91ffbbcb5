import { DeviceLimitError } from '../errors.ts';
import { type KvCacheOptions, kvGeometry } from '../kv/cache.ts';
import { bitsPerWeight, gpuLayout } from '../quant/formats.ts';
import { BYTES, formatOf, type WeightFormats } from '../weight-format.ts';
import { dims, type ModelConfig } from './config.ts';
import { EMBEDDING, elementCount, embeddingFormat, LM_HEAD, tensorSpecs } from './weights.ts';

/** One GPU buffer the engine will create, with its size, known before anything is allocated. */
export interface PlannedBuffer {
  name: string;
  bytes: number;
  kind: 'weight' | 'kv' | 'activation';
}

export interface MemoryPlan {
  buffers: PlannedBuffer[];
  weightBytes: number;
  kvBytes: number;
  activationBytes: number;
  totalBytes: number;
}

/**
 * Every buffer a model needs at its largest: weights, the per-layer KV pools, and the prefill
 * activations for a prompt of maxPrefill tokens. Pure arithmetic, so a model that cannot fit is
 * refused before the first allocation.
 */
export function planMemory(
  config: ModelConfig,
  kv: KvCacheOptions,
  maxPrefill: number,
  formats: WeightFormats = 'f32',
): MemoryPlan {
  const { d, ffn, vocab, layers, qWidth, kvWidth, kvHeads, headDim } = dims(config);
  const buffers = weightBuffers(config, formats);
  const geometry = kvGeometry({ layers, kvHeads, headDim, maxSeqLen: config.maxSeqLen }, kv);
  for (let l = 0; l < layers; l++) {
    buffers.push({ name: `kv pool layer ${l}`, bytes: geometry.layerPoolBytes, kind: 'kv' });
  }
  const L = maxPrefill;
  const act = (name: string, floats: number) =>
    buffers.push({ name, bytes: floats * BYTES.f32, kind: 'activation' });
  act(`residual stream x [${L}, ${d}]`, L * d);
  act(`normed x [${L}, ${d}]`, L * d);
  act(`projection out [${L}, ${d}]`, L * d);
  act(`q [${L}, ${qWidth}]`, L * qWidth);
  act(`attention out [${L}, ${qWidth}]`, L * qWidth);
  act(`k [${L}, ${kvWidth}]`, L * kvWidth);
  act(`v [${L}, ${kvWidth}]`, L * kvWidth);
  act(`mlp gate [${L}, ${ffn}]`, L * ffn);
  act(`mlp up [${L}, ${ffn}]`, L * ffn);
  act(`mlp act [${L}, ${ffn}]`, L * ffn);
  act(`logits [1, ${vocab}]`, vocab);
  const sum = (k: PlannedBuffer['kind']) =>
    buffers.filter((b) => b.kind === k).reduce((n, b) => n + b.bytes, 0);
  const weightBytes = sum('weight');
  const kvBytes = sum('kv');
  const activationBytes = sum('activation');
  return {
    buffers,
    weightBytes,
    kvBytes,
    activationBytes,
    totalBytes: weightBytes + kvBytes + activationBytes,
  };
}

/** Bytes of every weight on the GPU in `formats` (what the result reports as the model's weight bytes). */
export function weightBytesOf(config: ModelConfig, formats: WeightFormats): number {
  return weightBuffers(config, formats).reduce((n, b) => n + b.bytes, 0);
}

/**
 * The weight buffers, linear weights in their format: a packed format's quants and scales are two
 * buffers (the larger is the one a binding limit can refuse, so the plan lists them apart).
 */
function weightBuffers(config: ModelConfig, formats: WeightFormats): PlannedBuffer[] {
  const { d, vocab } = dims(config);
  const weight = (name: string, shape: readonly number[], linear: boolean): PlannedBuffer[] => {
    const format = !linear ? 'f32' : name === EMBEDDING ? embeddingFormat(formats) : formatOf(formats, name);
    if (format === 'f32') return [{ name, bytes: elementCount(shape) * BYTES.f32, kind: 'weight' }];
    const layout = gpuLayout(format, shape[0], shape[1], name);
    const out: PlannedBuffer[] = [{ name: `${name} (${format})`, bytes: 4 * layout.words, kind: 'weight' }];
    if (layout.scales > 0) out.push({ name: `${name} scales`, bytes: 4 * layout.scales, kind: 'weight' });
    return out;
  };
  // The embedding is f32, or a packed table (a file's, or --weights': the lookup reads it packed).
  const buffers = tensorSpecs(config).flatMap((s) =>
    weight(s.name, s.shape, s.kind === 'linear' || s.kind === 'embedding'),
  );
  // A tied head is the embedding's buffers; a head packed apart from an f32 table is a copy.
  if (config.tieWordEmbeddings && embeddingFormat(formats) === 'f32' && formatOf(formats, LM_HEAD) !== 'f32')
    buffers.push(...weight(LM_HEAD, [vocab, d], true));
  return buffers;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Throws DeviceLimitError naming the first buffer over a device limit: which tensor, how many bytes, which limit. */
export function checkPlanFits(plan: MemoryPlan, limits: Record<string, number>, what: string): void {
  const binding = limits.maxStorageBufferBindingSize;
  const bufferMax = limits.maxBufferSize;
  for (const b of plan.buffers) {
    const single = b.bytes;
    if (single > binding) {
      throw new DeviceLimitError(
        `${what} does not fit this device: ${b.name} needs ${fmt(single)} bytes, over maxStorageBufferBindingSize = ${fmt(binding)} bytes. Pick a smaller preset, a shorter maxSeqLen or a smaller KV capacity.`,
      );
    }
    if (single > bufferMax) {
      throw new DeviceLimitError(
        `${what} does not fit this device: ${b.name} needs ${fmt(single)} bytes, over maxBufferSize = ${fmt(bufferMax)} bytes.`,
      );
    }
  }
}

/** One tensor type of a model: how many tensors and weights it holds, and its bits per weight. */
export interface WeightTypeShare {
  /** The format as the engine names it (a GGUF type: 'q4_k'; 'f16', 'f32', 'int8', 'int4'). */
  format: string;
  tensors: number;
  params: number;
  /** Bits per weight as the file stores the type (GGUF's own figure, Q4_K 4.5), the project's formats as held. */
  bitsPerWeight: number;
}

/**
 * The model's weights by type, as llama.cpp's loader prints them ("type q4_K: 113 tensors"), each
 * with its bits per weight, and the whole model's: Σ bits ÷ Σ weights over every tensor (a tied
 * head counted once, with the embedding), as llama.cpp's "(4.95 BPW)". Norms and biases are f32.
 */
export function weightTypeSummary(
  config: ModelConfig,
  formats: WeightFormats,
): { types: WeightTypeShare[]; bitsPerWeight: number } {
  const byType = new Map<string, WeightTypeShare>();
  let bits = 0;
  let params = 0;
  for (const s of tensorSpecs(config)) {
    const format =
      s.kind === 'linear'
        ? formatOf(formats, s.name)
        : s.kind === 'embedding'
          ? embeddingFormat(formats)
          : 'f32';
    const n = elementCount(s.shape);
    const bpw = bitsPerWeight(format);
    const share = byType.get(format) ?? { format, tensors: 0, params: 0, bitsPerWeight: bpw };
    share.tensors++;
    share.params += n;
    byType.set(format, share);
    bits += n * bpw;
    params += n;
  }
  const types = [...byType.values()].sort((a, b) => b.params - a.params);
  return { types, bitsPerWeight: bits / params };
}
