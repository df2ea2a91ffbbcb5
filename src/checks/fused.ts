import { fusionName, type LinearFusion } from '../kernels/fuse.ts';
import { GemvKernel } from '../kernels/gemv.ts';
import { HeadPrepKernel, type QkvPrep } from '../kernels/head-prep.ts';
import type { KernelCall, KernelContext } from '../kernels/kernel.ts';
import { RopeKvWriteKernel } from '../kernels/kv-write.ts';
import { MatmulKernel } from '../kernels/matmul.ts';
import { PackedGemvKernel, PackedMatmulKernel } from '../kernels/packed.ts';
import { compare, matmulRef, rmsNormRef, ropeRef } from '../kernels/reference.ts';
import {
  type GemvVariant,
  type MatmulVariant,
  type PackedGemvVariant,
  type PackedMatmulVariant,
  variantName,
} from '../kernels/variants.ts';
import type { KvDtype } from '../kv/format.ts';
import { type KvLayout, pageBytes, slotsOf } from '../kv/layout.ts';
import { presetConfig } from '../model/config.ts';
import { ropeTable } from '../model/rope.ts';
import { gpuLayout } from '../quant/formats.ts';
import { BYTES, type PackedFormat } from '../weight-format.ts';
import { decodedReference, decodePool, kvKind, poolReference } from './attention.ts';
import { type KernelCase, seededData, TOLERANCES } from './case.ts';
import { seededPacked } from './packed-weights.ts';

/**
 * The fused linear kernels (src/kernels/fuse.ts) against the float64 reference of the unfused ops
 * they replace, composed on the CPU: RMSNorm (rmsNormRef), the product (matmulRef), then the
 * residual add or SwiGLU of the product's (gate, up) column pairs. The packed formats are checked
 * on the exact dequantization of what was uploaded, as in cases/packed.ts.
 */
export type FusedLinearSpec = {
  M: number;
  N: number;
  K: number;
  fusion: LinearFusion;
  eps?: number;
} & (
  | { linear: 'matmul'; variant: MatmulVariant }
  | { linear: 'gemv'; variant: GemvVariant }
  | { linear: 'packedGemv'; variant: PackedGemvVariant; format: PackedFormat }
  | { linear: 'packedMatmul'; variant: PackedMatmulVariant; format: PackedFormat }
);

const SEEDS = { x: 21, w: 22, gamma: 23, y: 24 } as const;

/** silu(g)·u, as the reference forward computes SwiGLU (swigluRef), for one pair. */
function swigluPair(g: number, u: number): number {
  return (g / (1 + Math.exp(-g))) * u;
}

/** The fused op's expected output, from the unfused ops' float64 references. */
export function fusedLinearRef(
  x: Float32Array,
  w: ArrayLike<number>,
  y0: Float32Array,
  gamma: Float32Array,
  s: { M: number; N: number; K: number; fusion: LinearFusion; eps: number },
): Float64Array {
  const { M, N, K, fusion } = s;
  const xin = fusion.norm ? rmsNormRef(x, gamma, M, K, s.eps) : x;
  const prod = matmulRef(xin, w, M, K, N);
  if (fusion.epilogue === 'add') return prod.map((v, i) => y0[i] + v);
  if (fusion.epilogue === 'store') return prod;
  const out = new Float64Array((M * N) / 2);
  for (let m = 0; m < M; m++)
    for (let j = 0; j < N / 2; j++)
      out[m * (N / 2) + j] = swigluPair(prod[m * N + 2 * j], prod[m * N + 2 * j + 1]);
  return out;
}

export function fusedLinearCase(ctx: KernelContext, s: FusedLinearSpec): KernelCase {
  const kind = 'reduction';
  const { M, N, K, fusion } = s;
  const eps = s.eps ?? 1e-5;
  const outWidth = fusion.epilogue === 'swiglu' ? N / 2 : N;
  const format = 'format' in s ? s.format : 'f32';
  return {
    op: `${s.linear} ${fusionName(fusion)}`,
    variant: `${format === 'f32' ? '' : `${format} `}${variantName(s.variant)}`,
    shape: { M, N, K },
    kind,
    bufferBytes: BYTES.f32 * Math.max(M * K, N * K, M * N),
    async prepare(rig) {
      const x = seededData(M * K, SEEDS.x);
      const gamma = seededData(K, SEEDS.gamma, 2);
      const y0 = seededData(M * outWidth, SEEDS.y);
      const wF32 = seededData(N * K, SEEDS.w);
      const xBuf = rig.input(x);
      const y = rig.output(M * outWidth);
      const norm = fusion.norm ? { gamma: rig.input(gamma), eps } : {};
      let call: KernelCall;
      let wRef: ArrayLike<number> = wF32;
      if (s.linear === 'matmul' || s.linear === 'gemv') {
        const w = rig.input(wF32);
        call =
          s.linear === 'matmul'
            ? (await MatmulKernel.create(ctx, s.variant, fusion)).call({
                a: xBuf,
                b: w,
                c: y,
                M,
                N,
                K,
                ...norm,
              })
            : (await GemvKernel.create(ctx, s.variant, M, fusion)).call({ x: xBuf, w, y, M, N, K, ...norm });
      } else {
        const { packed, unpacked } = seededPacked(s.format, N, K, SEEDS.w, () => wF32);
        wRef = unpacked;
        const layout = gpuLayout(s.format, N, K);
        const w = rig.output(layout.words);
        rig.gpu.device.queue.writeBuffer(w, 0, packed.words);
        const scales = s.format === 'f16' ? undefined : rig.output(layout.scales);
        if (scales) rig.gpu.device.queue.writeBuffer(scales, 0, packed.scales);
        call =
          s.linear === 'packedGemv'
            ? (await PackedGemvKernel.create(ctx, s.format, s.variant, M, fusion)).call({
                x: xBuf,
                w,
                scales,
                y,
                M,
                N,
                K,
                ...norm,
              })
            : (await PackedMatmulKernel.create(ctx, s.format, s.variant, fusion)).call({
                a: xBuf,
                w,
                scales,
                c: y,
                M,
                N,
                K,
                ...norm,
              });
      }
      call = rig.own(call);
      return {
        setup: [],
        call,
        async check() {
          rig.write(y, y0); // the add epilogue accumulates into y: start from the seeded stream
          await rig.run(call);
          const want = fusedLinearRef(x, wRef, y0, gamma, { M, N, K, fusion, eps });
          return compare(await rig.read(y, M * outWidth), want, TOLERANCES[kind]);
        },
      };
    },
  };
}

/**
 * The fused RoPE + KV write against RoPE's and the pool layout's references: q rotated into q, k
 * rotated and v copied into a pool of shuffled pages at the tokens' slots.
 */
export function ropeKvWriteCase(
  ctx: KernelContext,
  s: {
    rows: number;
    start: number;
    heads: number;
    kvHeads: number;
    headDim: number;
    pageSize: number;
    kvDtype?: KvDtype;
    /** An architecture's preparation before RoPE: qwen2's q/k/v bias, qwen3's q/k head norm. */
    prep?: QkvPrep;
  },
): KernelCase {
  const kind = kvKind(s, 'elementwise', 'quantizedKvWrite');
  const { rows, start, heads, kvHeads, headDim, pageSize } = s;
  const prep = s.prep ?? { bias: false, norm: false };
  const eps = 1e-6;
  const g: KvLayout = { kvHeads, pageSize, headDim, dtype: s.kvDtype ?? 'f32' };
  const units = heads + 2 * kvHeads;
  const maxSeqLen = start + rows;
  const pages = Math.ceil(maxSeqLen / pageSize) + 2;
  // Pages in reverse order, so a slot's page is never its position's page index.
  const table = Array.from({ length: pages }, (_, i) => pages - 1 - i);
  const poolElements = (pages * pageBytes(g)) / 4;
  const poolValues = pages * 2 * kvHeads * pageSize * headDim;
  return {
    op: 'rope_kv_write',
    variant: [
      g.dtype === 'f32' ? 'elementwise' : `${g.dtype} KV`,
      prep.bias ? 'bias' : '',
      prep.norm ? 'head norm' : '',
    ]
      .filter(Boolean)
      .join(', '),
    shape: { rows, start, heads, kvHeads, headDim, pageSize },
    kind,
    bufferBytes: BYTES.f32 * Math.max(poolElements, rows * units * headDim),
    async prepare(rig) {
      const qkv = seededData(rows * units * headDim, 25);
      const positions = Array.from({ length: rows }, (_, i) => start + i);
      const slots = slotsOf(table, start, rows, pageSize);
      const config = { ...presetConfig('ci-tiny'), headDim, maxSeqLen };
      const angles = ropeTable(config);
      const q = rig.output(rows * heads * headDim);
      const pool = rig.output(poolElements);
      // Biases around ±1 and norm weights in 0.5…1.5: large enough that a kernel skipping either fails.
      const bias = seededData(units * headDim, 26);
      const normWeights = seededData(2 * headDim, 27, 0.5).map((x) => 1 + x);
      const call = rig.own(
        (await RopeKvWriteKernel.create(ctx, g.dtype, prep)).call({
          bias: prep.bias ? rig.input(bias) : undefined,
          norm: prep.norm ? rig.input(normWeights) : undefined,
          eps,
          qkv: rig.input(qkv),
          positions: rig.inputU32(positions),
          cos: rig.input(angles.cos),
          sin: rig.input(angles.sin),
          slots: rig.inputU32(slots),
          q,
          pool,
          rows,
          heads,
          kvHeads,
          headDim,
          pageSize,
        }),
      );
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          // Split the reference's input as the projection laid it out, then apply the unfused ops.
          const qkvRef = Float64Array.from(qkv);
          const part = (from: number, n: number) => {
            const out = new Float64Array(rows * n * headDim);
            for (let r = 0; r < rows; r++)
              out.set(
                qkvRef.subarray((r * units + from) * headDim, (r * units + from + n) * headDim),
                r * n * headDim,
              );
            return out;
          };
          // The preparation's reference: each row's bias, then each q and k head RMS-normalized.
          if (prep.bias) {
            for (let r = 0; r < rows; r++)
              for (let i = 0; i < units * headDim; i++) qkvRef[r * units * headDim + i] += bias[i];
          }
          let wantQ: Float64Array = part(0, heads);
          let k: Float64Array = part(heads, kvHeads);
          const v = part(heads + kvHeads, kvHeads);
          if (prep.norm) {
            wantQ = rmsNormRef(wantQ, normWeights.subarray(0, headDim), rows * heads, headDim, eps);
            k = rmsNormRef(k, normWeights.subarray(headDim), rows * kvHeads, headDim, eps);
          }
          ropeRef(wantQ, positions, heads, headDim, angles);
          ropeRef(k, positions, kvHeads, headDim, angles);
          // The pool as values: decoded as the shaders read it, against the CPU's store of the rows.
          const wantPool = poolReference(
            g,
            slots,
            decodedReference(g, k),
            decodedReference(g, v),
            poolValues,
          );
          const gotQ = await rig.read(q, rows * heads * headDim);
          const gotPool = decodePool(g, await rig.readU32(pool, poolElements), pages);
          // q is f32 whatever the pool's type: held to the elementwise tolerance; the pool to its own.
          const qResult = compare(gotQ, wantQ, TOLERANCES.elementwise);
          return qResult.passed ? compare(gotPool, wantPool, TOLERANCES[kind]) : qResult;
        },
      };
    },
  };
}

/**
 * The unfused graph's q/k/v preparation (head_prep.wgsl), in place on one projection's rows: its
 * bias added, then (a q or k of a qwen3) each head RMS-normalized with the q or the k weights.
 */
export function headPrepCase(
  ctx: KernelContext,
  s: { rows: number; heads: number; headDim: number; prep: QkvPrep; normAt: 0 | 1 },
): KernelCase {
  const { rows, heads, headDim, prep } = s;
  const eps = 1e-6;
  const n = rows * heads * headDim;
  return {
    op: 'head_prep',
    variant: [prep.bias ? 'bias' : '', prep.norm ? (s.normAt ? 'k norm' : 'q norm') : '']
      .filter(Boolean)
      .join(', '),
    shape: { rows, heads, headDim },
    kind: 'elementwise',
    bufferBytes: BYTES.f32 * n,
    async prepare(rig) {
      const x = seededData(n, 28, 3);
      const bias = seededData(heads * headDim, 29);
      const normWeights = seededData(2 * headDim, 30, 0.5).map((v) => 1 + v);
      const buffer = rig.input(x);
      const call = rig.own(
        (await HeadPrepKernel.create(ctx, prep)).call({
          x: buffer,
          rows,
          heads,
          headDim,
          bias: prep.bias ? rig.input(bias) : undefined,
          norm: prep.norm ? rig.input(normWeights) : undefined,
          normAt: s.normAt * headDim,
          eps,
        }),
      );
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          let want: Float64Array = Float64Array.from(
            x,
            (v, i) => v + (prep.bias ? bias[i % (heads * headDim)] : 0),
          );
          if (prep.norm) {
            const w = normWeights.subarray(s.normAt * headDim, (s.normAt + 1) * headDim);
            want = rmsNormRef(want, w, rows * heads, headDim, eps);
          }
          return compare(await rig.read(buffer, n), want, TOLERANCES.elementwise);
        },
      };
    },
  };
}
