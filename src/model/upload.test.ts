import { describe, expect, it } from 'vitest';
import type { WeightFormat } from '../weight-format.ts';
import { type GpuWeights, type LayerBuffers, type LinearWeight, linearFormatsOf } from './upload.ts';

// linearFormatsOf reads formats only: stand-in buffers are enough.
const buffer = {} as GPUBuffer;
const lw = (format: WeightFormat): LinearWeight => ({ format, w: buffer });

function weights(layers: LayerBuffers[], head: WeightFormat): GpuWeights {
  return {
    embedding: lw('f32'),
    layers,
    finalNorm: buffer,
    lmHead: lw(head),
    ropeCos: buffer,
    ropeSin: buffer,
  };
}

const fusedLayer = (format: WeightFormat): LayerBuffers => ({
  inputNorm: buffer,
  attn: { kind: 'fused', wqkv: lw(format) },
  wo: lw(format),
  postNorm: buffer,
  mlp: { kind: 'fused', wGateUp: lw(format) },
  wDown: lw(format),
});

describe('linearFormatsOf', () => {
  it('a model packed throughout holds no f32 linear weight (so compiles no f32 matmul or GEMV)', () => {
    expect([...linearFormatsOf(weights([fusedLayer('q4_k'), fusedLayer('q4_k')], 'q4_k'))]).toEqual(['q4_k']);
  });

  it('counts the head, and every projection of a split layer (a Q4_K_M file’s Q6_K v and down)', () => {
    const split: LayerBuffers = {
      inputNorm: buffer,
      attn: { kind: 'split', wq: lw('q4_k'), wk: lw('q4_k'), wv: lw('q6_k') },
      wo: lw('q4_k'),
      postNorm: buffer,
      mlp: { kind: 'split', wGate: lw('q4_k'), wUp: lw('q4_k') },
      wDown: lw('q6_k'),
    };
    expect(new Set(linearFormatsOf(weights([split], 'f32')))).toEqual(new Set(['f32', 'q4_k', 'q6_k']));
    expect(new Set(linearFormatsOf(weights([fusedLayer('f16')], 'q8_0')))).toEqual(new Set(['f16', 'q8_0']));
  });
});
