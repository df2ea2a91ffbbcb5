import { InternalError } from '../errors.ts';
import type { PagedAttentionDecodeKernel, PagedAttentionPrefillKernel } from '../kernels/attention.ts';
import type { EmbeddingKernel, ResidualAddKernel, RopeKernel, SwigluKernel } from '../kernels/elementwise.ts';
import { type LinearFusion, PLAIN } from '../kernels/fuse.ts';
import type { HeadPrepKernel } from '../kernels/head-prep.ts';
import { type KernelCall, withRole } from '../kernels/kernel.ts';
import type { KvWriteKernel, RopeKvWriteKernel } from '../kernels/kv-write.ts';
import type { PackedEmbeddingKernel } from '../kernels/packed.ts';
import { KERNEL_ROLES, type KernelRole } from '../kernels/roles.ts';
import type { ArgmaxKernel, RmsNormKernel } from '../kernels/rowwise.ts';
import type { KvCache } from '../kv/cache.ts';
import { dims, type ModelConfig } from './config.ts';
import type { GpuWeights, LinearWeight } from './upload.ts';

/**
 * The transformer's graph: which kernel calls a pass consists of, in order, for the fused and the
 * unfused graph (src/measure/cost.ts counts the same calls). Pure: it records calls on the buffers
 * it is given and submits or reads back nothing.
 */

/**
 * The fusions the fused graph's linear kernels run (fuse.ts): the q/k/v and the LM head with the
 * RMSNorm before them, the o and down projections with the residual add, gate/up with the norm and
 * SwiGLU. The unfused graph runs every product plain.
 */
export const FUSIONS = {
  plain: PLAIN,
  norm: { norm: true, epilogue: 'store' },
  add: { norm: false, epilogue: 'add' },
  normSwiglu: { norm: true, epilogue: 'swiglu' },
} as const satisfies Record<string, LinearFusion>;
export type FusionKey = keyof typeof FUSIONS;

/** The fusion keys a graph's products use. */
const GRAPH_FUSIONS: Record<'fused' | 'unfused', readonly FusionKey[]> = {
  fused: ['norm', 'add', 'normSwiglu'],
  unfused: ['plain'],
};

/**
 * The fusion keys the fused or the unfused graph runs; a fused graph with split layers (layerKinds)
 * runs their products plain as well.
 */
export function graphFusions(fused: boolean, splitLayers = false): readonly FusionKey[] {
  if (fused && splitLayers) return [...GRAPH_FUSIONS.fused, 'plain'];
  return GRAPH_FUSIONS[fused ? 'fused' : 'unfused'];
}

/**
 * Records y[M, N] = x[M, K] · W[N, K]ᵀ with the kernel for W's format and, in the fused graph, a
 * fusion: `gamma` is the fused RMSNorm's weight (with the 'norm' fusions).
 */
export type LinearCall = (
  x: GPUBuffer,
  w: LinearWeight,
  y: GPUBuffer,
  N: number,
  K: number,
  fuse?: { key: FusionKey; gamma?: GPUBuffer },
) => KernelCall;

/**
 * The kernels the graph calls besides the linear ones, built once per model (kernel-set.ts). The
 * linear kernels are compiled per shape; a pass gets them as a LinearCall.
 */
export interface Kernels {
  /** The unfused graph's bias and head norm of q and k, and bias of v, where the architecture has them. */
  headPrepQk?: HeadPrepKernel;
  headPrepV?: HeadPrepKernel;
  embedding: EmbeddingKernel;
  /** The lookup of a packed table (a GGUF file's token_embd), where the model has one. */
  packedEmbedding?: PackedEmbeddingKernel;
  rmsNorm: RmsNormKernel;
  rope: RopeKernel;
  add: ResidualAddKernel;
  swiglu: SwigluKernel;
  argmax: ArgmaxKernel;
  kvWrite: KvWriteKernel;
  ropeKvWrite: RopeKvWriteKernel;
  attentionPrefill: PagedAttentionPrefillKernel;
  attentionDecode: PagedAttentionDecodeKernel;
}

/** What a pass's graph is built from: the model's configuration, graph, kernels, weights and KV cache. */
export interface GraphModel {
  config: ModelConfig;
  /** Whether the model runs the fused graph; its weights are laid out for it (upload.ts). */
  fused: boolean;
  kernels: Kernels;
  weights: GpuWeights;
  kv: KvCache;
}

/**
 * The activations of one pass, each [rows, width]: what the shared transformer body reads and
 * writes. Which exist depends on the graph and on its layers (layerKinds): a fused layer's q/k/v
 * come out side by side in `qkv`, a split one's in `q`, `k` and `v` after a norm into `h`; a fused
 * MLP writes only `act`, a split one `gate` and `up` first; the unfused graph's products write
 * `proj` before each residual add.
 */
export interface PassBuffers {
  tokens: GPUBuffer; // u32[rows]
  positions: GPUBuffer; // u32[rows]
  slots: GPUBuffer; // u32[rows] KV slot of each token
  x: GPUBuffer; // [rows, d] residual stream
  q: GPUBuffer; // [rows, heads, headDim]
  attn: GPUBuffer; // [rows, heads, headDim]
  act: GPUBuffer; // [rows, ffn]
  h?: GPUBuffer; // [rows, d] normed (split layers, and the unfused graph's final norm)
  k?: GPUBuffer; // [rows, kvHeads, headDim] (split attention)
  v?: GPUBuffer; // [rows, kvHeads, headDim] (split attention)
  proj?: GPUBuffer; // [rows, d] (unfused graph)
  gate?: GPUBuffer; // [rows, ffn] (split MLP)
  up?: GPUBuffer; // [rows, ffn] (split MLP)
  qkv?: GPUBuffer; // [rows, heads + 2 kvHeads, headDim] (fused attention)
}

/** A pass buffer the layer's kind needs, or an InternalError naming it (a plan built for another graph). */
function need<T>(thing: T | undefined, what: string): T {
  if (!thing) throw new InternalError(`the pass has no ${what} for this model`);
  return thing;
}

/**
 * The activation buffers of a pass over `rows` tokens, for the model's graph and its layers'
 * kinds. `alloc` names and sizes each ([rows, width] f32).
 */
export async function passBuffers(
  g: GraphModel,
  rows: number,
  alloc: (label: string, floats: number) => GPUBuffer | Promise<GPUBuffer>,
  io: { tokens: GPUBuffer; positions: GPUBuffer; slots: GPUBuffer },
): Promise<PassBuffers> {
  const { d, ffn, qWidth, kvWidth } = dims(g.config);
  const splitAttn = g.weights.layers.some((w) => w.attn.kind === 'split');
  const fusedAttn = g.weights.layers.some((w) => w.attn.kind === 'fused');
  const splitMlp = g.weights.layers.some((w) => w.mlp.kind === 'split');
  return {
    ...io,
    x: await alloc('x', rows * d), // [rows, d] residual stream
    q: await alloc('q', rows * qWidth), // [rows, heads, headDim]
    attn: await alloc('attn', rows * qWidth), // [rows, heads, headDim]
    act: await alloc('act', rows * ffn), // [rows, ffn]
    ...(splitAttn || splitMlp || !g.fused ? { h: await alloc('h', rows * d) } : {}), // [rows, d] normed
    ...(splitAttn
      ? { k: await alloc('k', rows * kvWidth), v: await alloc('v', rows * kvWidth) } // [rows, kvHeads, headDim]
      : {}),
    ...(g.fused ? {} : { proj: await alloc('proj', rows * d) }), // [rows, d]
    ...(splitMlp ? { gate: await alloc('gate', rows * ffn), up: await alloc('up', rows * ffn) } : {}), // [rows, ffn]
    ...(fusedAttn ? { qkv: await alloc('qkv', rows * (qWidth + 2 * kvWidth)) } : {}),
  };
}

/** What the LM head reads: the final norm's output (unfused) or the residual stream (fused). */
export function headInput(g: GraphModel, b: PassBuffers): GPUBuffer {
  return g.fused ? b.x : need(b.h, 'normed');
}

/**
 * The transformer body both passes share, for `rows` tokens: embedding, then every layer, then
 * (unfused) the final RMSNorm. Only the projection kernel (matmul for prefill, GEMV for decode)
 * and the attention call differ between passes.
 *
 * Unfused, per layer (16 dispatches): RMSNorm, q, k and v projections, RoPE of q and of k, KV
 * write, attention, o projection, residual add, RMSNorm, gate and up projections, SwiGLU, down
 * projection, residual add; a qwen2 adds its q, k and v biases (3 more), a qwen3 its q and k head
 * norms (2 more), after the projections. Fused (6): [norm → q/k/v] in one product, RoPE + KV write
 * (biases and head norms included), attention, [o projection → residual add], [norm → gate/up →
 * SwiGLU], [down projection → residual add]; the final norm runs inside the LM head. In the fused
 * graph a layer whose q, k and v (or gate and up) are in different formats (a Q4_K_M file's Q6_K v
 * beside Q4_K q and k) runs that part split, as the unfused graph does, and the rest fused. The
 * unfused graph is the fused one's reference.
 */
export function bodyCalls(
  g: GraphModel,
  rows: number,
  b: PassBuffers,
  linear: LinearCall,
  /** One call, or several (split-K decode: slices, then their merge), each in the attention role. */
  attention: (pool: GPUBuffer) => KernelCall | KernelCall[],
): KernelCall[] {
  const { d, ffn, vocab, heads, kvHeads, headDim, qWidth, kvWidth } = dims(g.config);
  const k = g.kernels;
  const R = KERNEL_ROLES;
  const eps = g.config.rmsNormEps;
  const { embedding, layers, finalNorm, ropeCos, ropeSin } = g.weights;
  const { x, q, attn, act } = b;
  const rope = (xIn: GPUBuffer, n: number) =>
    k.rope.call({
      x: xIn,
      positions: b.positions,
      cos: ropeCos,
      sin: ropeSin,
      rows,
      heads: n,
      headDim,
    });
  const lookup =
    embedding.format === 'f32'
      ? k.embedding.call({ tokens: b.tokens, table: embedding.w, out: x, rows, d, vocab })
      : need(k.packedEmbedding, 'packed embedding').call({
          tokens: b.tokens,
          w: embedding.w,
          scales: embedding.scales,
          out: x,
          rows,
          d,
          vocab,
        });
  const calls = [withRole(R.embedding, lookup)];
  layers.forEach((w, layer) => {
    const pool = g.kv.pools[layer];
    const a = w.attn;
    if (a.kind === 'fused') {
      const qkv = need(b.qkv, 'q/k/v');
      calls.push(
        withRole(R.qkv, linear(x, a.wqkv, qkv, qWidth + 2 * kvWidth, d, { key: 'norm', gamma: w.inputNorm })),
        withRole(
          R.ropeKvWrite,
          k.ropeKvWrite.call({
            bias: a.bqkv,
            norm: w.headNorm,
            eps,
            qkv,
            positions: b.positions,
            cos: ropeCos,
            sin: ropeSin,
            slots: b.slots,
            q,
            pool,
            rows,
            heads,
            kvHeads,
            headDim,
            pageSize: g.kv.pageSize,
          }),
        ),
      );
    } else {
      const [h, kOut, vOut] = [need(b.h, 'normed'), need(b.k, 'k'), need(b.v, 'v')];
      // The architecture's bias and head norm, in place on each projection (head_prep.wgsl).
      const prep: KernelCall[] = [];
      if (k.headPrepQk) {
        const common = { rows, headDim, norm: w.headNorm, eps };
        prep.push(
          k.headPrepQk.call({ ...common, x: q, heads, bias: a.bq, normAt: 0 }),
          k.headPrepQk.call({ ...common, x: kOut, heads: kvHeads, bias: a.bk, normAt: headDim }),
        );
      }
      if (k.headPrepV) prep.push(k.headPrepV.call({ x: vOut, rows, heads: kvHeads, headDim, bias: a.bv }));
      calls.push(
        withRole(R.norm, k.rmsNorm.call({ x, weight: w.inputNorm, out: h, rows, d, eps })),
        withRole(R.qkv, linear(h, a.wq, q, qWidth, d)),
        withRole(R.qkv, linear(h, a.wk, kOut, kvWidth, d)),
        withRole(R.qkv, linear(h, a.wv, vOut, kvWidth, d)),
        ...prep.map((call) => withRole(R.qkvPrep, call)),
        withRole(R.rope, rope(q, heads)),
        withRole(R.rope, rope(kOut, kvHeads)),
        withRole(
          R.kvWrite,
          k.kvWrite.call({
            k: kOut,
            v: vOut,
            slots: b.slots,
            pool,
            rows,
            kvHeads,
            headDim,
            pageSize: g.kv.pageSize,
          }),
        ),
      );
    }
    calls.push(...[attention(pool)].flat().map((call) => withRole(R.attention, call)));
    // The o projection and (below) the down projection: their residual add fused, or after them.
    const project = (input: GPUBuffer, weight: LinearWeight, role: KernelRole, N: number, K: number) => {
      if (g.fused) {
        calls.push(withRole(role, linear(input, weight, x, N, K, { key: 'add' })));
        return;
      }
      const proj = need(b.proj, 'projection');
      calls.push(
        withRole(role, linear(input, weight, proj, N, K)),
        withRole(R.residual, k.add.call({ x, y: proj, n: rows * N })),
      );
    };
    project(attn, w.wo, R.oProj, d, qWidth);
    const m = w.mlp;
    if (m.kind === 'fused') {
      calls.push(
        withRole(R.gateUp, linear(x, m.wGateUp, act, 2 * ffn, d, { key: 'normSwiglu', gamma: w.postNorm })),
      );
    } else {
      const [h, gate, up] = [need(b.h, 'normed'), need(b.gate, 'gate'), need(b.up, 'up')];
      calls.push(
        withRole(R.norm, k.rmsNorm.call({ x, weight: w.postNorm, out: h, rows, d, eps })),
        withRole(R.gateUp, linear(h, m.wGate, gate, ffn, d)),
        withRole(R.gateUp, linear(h, m.wUp, up, ffn, d)),
        withRole(R.swiglu, k.swiglu.call({ gate, up, out: act, n: rows * ffn })),
      );
    }
    project(act, w.wDown, R.down, d, ffn);
  });
  if (!g.fused)
    calls.push(
      withRole(R.norm, k.rmsNorm.call({ x, weight: finalNorm, out: need(b.h, 'normed'), rows, d, eps })),
    );
  return calls;
}

/**
 * The LM head over `rows` rows of `hidden` (headInput's buffer, or its last row copied out) into
 * `logits` [rows, vocab], then the greedy token of each row into `next` u32[rows]. In the fused
 * graph the final RMSNorm runs in the head's prologue.
 */
export function headCalls(
  g: GraphModel,
  rows: number,
  hidden: GPUBuffer,
  linear: LinearCall,
  logits: GPUBuffer,
  next: GPUBuffer,
): KernelCall[] {
  const { d, vocab } = dims(g.config);
  const R = KERNEL_ROLES;
  const fuse: { key: FusionKey; gamma?: GPUBuffer } = g.fused
    ? { key: 'norm', gamma: g.weights.finalNorm }
    : { key: 'plain' };
  return [
    withRole(R.lmHead, linear(hidden, g.weights.lmHead, logits, vocab, d, fuse)),
    withRole(R.argmax, g.kernels.argmax.call({ x: logits, out: next, rows, n: vocab })),
  ];
}
