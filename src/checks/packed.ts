import type { KernelCall, KernelContext } from '../kernels/kernel.ts';
import { PackedEmbeddingKernel, PackedGemvKernel, PackedMatmulKernel } from '../kernels/packed.ts';
import { compare, matmulRef } from '../kernels/reference.ts';
import {
  DEFAULT_VARIANTS,
  type PackedGemvVariant,
  type PackedMatmulVariant,
  variantName,
} from '../kernels/variants.ts';
import { gpuLayout } from '../quant/formats.ts';
import { BYTES, type PackedFormat, type PackedTensor } from '../weight-format.ts';
import { compareRows, type KernelCase, type RowCheck, rowsToCheck, seededData, TOLERANCES } from './case.ts';
import { seededPacked } from './packed-weights.ts';

/** y[M, N] = x[M, K] · W[N, K]ᵀ with W packed in `format`. */
export interface PackedSpec {
  format: PackedFormat;
  M: number;
  N: number;
  K: number;
  /** 'sampled' for shapes whose float64 reference would take longer than the kernel suite itself. */
  rows?: RowCheck;
}

/** Seeds of the inputs (the f32 weights are packed on the CPU, as a model's are on load). */
const SEEDS = { x: 10, w: 11 } as const;

/**
 * The packed weights of the last shape asked for, and their exact dequantization: the kernel suite
 * times every GEMV family on one large shape, and packing 32 M weights once instead of per family
 * saves seconds each. Held weakly, so the arrays (over 150 MiB at that shape) do not outlive the
 * cases that use them in a long-lived worker.
 */
let lastPacked: WeakRef<{ key: string; packed: PackedTensor; unpacked: Float32Array }> | undefined;

function packedWeights(format: PackedFormat, N: number, K: number) {
  const key = `${format} ${N} ${K}`;
  const cached = lastPacked?.deref();
  if (cached?.key === key) return cached;
  const entry = { key, ...seededPacked(format, N, K, SEEDS.w, (n) => seededData(n, SEEDS.w)) };
  lastPacked = new WeakRef(entry);
  return entry;
}

interface PackedBuffers {
  x: GPUBuffer;
  w: GPUBuffer;
  scales: GPUBuffer | undefined;
  y: GPUBuffer;
}

/**
 * The case: seeded weights in the format (seededPacked: f32 weights packed on the CPU, or random
 * blocks of a GGUF type), the words and scales uploaded, the kernel checked against the float64
 * reference on the exact dequantization of what was uploaded, so quantization error is not
 * counted, only the kernel's own rounding. The call is built before the weights are uploaded, so a
 * shape the kernel rejects fails in the kernel's checks.
 */
function packedCase(
  op: 'matmul' | 'gemv',
  variant: string,
  s: PackedSpec,
  build: (b: PackedBuffers) => Promise<KernelCall>,
): KernelCase {
  const kind = 'reduction';
  const { format, M, N, K } = s;
  const layout = gpuLayout(format, N, K);
  return {
    op,
    variant: `${format} ${variant}`,
    shape: { M, N, K },
    kind,
    bufferBytes: Math.max(BYTES.f32 * M * K, BYTES.u32 * layout.words, BYTES.f32 * M * N),
    async prepare(rig) {
      const x = seededData(M * K, SEEDS.x);
      const xBuffer = rig.input(x);
      const w = rig.output(layout.words);
      const scales = format === 'f16' ? undefined : rig.output(layout.scales);
      const y = rig.output(M * N);
      const call = rig.own(await build({ x: xBuffer, w, scales, y }));
      const { packed, unpacked } = packedWeights(format, N, K);
      rig.gpu.device.queue.writeBuffer(w, 0, packed.words);
      if (scales) rig.gpu.device.queue.writeBuffer(scales, 0, packed.scales);
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          const rowRef = (r: number) => matmulRef(x.subarray(r * K, (r + 1) * K), unpacked, 1, K, N);
          const rows = rowsToCheck(M, s.rows ?? 'all');
          return compareRows(await rig.read(y, M * N), rows, N, rowRef, TOLERANCES[kind]);
        },
      };
    },
  };
}

/** Decode GEMV on packed weights, a batch of M ≤ 8 rows. */
export function packedGemvCase(
  ctx: KernelContext,
  s: PackedSpec & { variant?: PackedGemvVariant },
): KernelCase {
  const variant = s.variant ?? DEFAULT_VARIANTS.packedGemv;
  return packedCase('gemv', variantName(variant), s, async (b) =>
    (await PackedGemvKernel.create(ctx, s.format, variant, s.M)).call({ ...b, M: s.M, N: s.N, K: s.K }),
  );
}

/** Prefill matmul on packed weights. */
export function packedMatmulCase(
  ctx: KernelContext,
  s: PackedSpec & { variant?: PackedMatmulVariant },
): KernelCase {
  const variant = s.variant ?? DEFAULT_VARIANTS.packedMatmul;
  return packedCase('matmul', variantName(variant), s, async (b) =>
    (await PackedMatmulKernel.create(ctx, s.format, variant)).call({
      a: b.x,
      w: b.w,
      scales: b.scales,
      c: b.y,
      M: s.M,
      N: s.N,
      K: s.K,
    }),
  );
}

/**
 * The packed embedding gather (embedding_packed.wgsl): rows of a seeded table in `format` (a GGUF
 * type's random blocks, or the project's packed weights), looked up by ids that repeat, run out of
 * order and include one past the vocabulary (clamped to the last row), against the same rows of
 * the table's exact dequantization.
 */
export function packedEmbeddingCase(
  ctx: KernelContext,
  s: { format: PackedFormat; rows: number; d: number; vocab: number },
): KernelCase {
  const { format, rows, d, vocab } = s;
  const layout = gpuLayout(format, vocab, d);
  return {
    op: 'embedding',
    variant: format,
    shape: { rows, d, vocab },
    kind: 'elementwise',
    bufferBytes: Math.max(BYTES.u32 * layout.words, BYTES.f32 * rows * d),
    async prepare(rig) {
      const { packed, unpacked } = seededPacked(format, vocab, d, SEEDS.w, (n) => seededData(n, SEEDS.w));
      const ids = Array.from({ length: rows }, (_, i) => (i === rows - 1 ? vocab : (i * 7919 + 3) % vocab));
      const w = rig.output(layout.words);
      rig.gpu.device.queue.writeBuffer(w, 0, packed.words);
      const scales = format === 'f16' ? undefined : rig.output(layout.scales);
      if (scales) rig.gpu.device.queue.writeBuffer(scales, 0, packed.scales);
      const out = rig.output(rows * d);
      const call = rig.own(
        (await PackedEmbeddingKernel.create(ctx, format)).call({
          tokens: rig.inputU32(ids),
          w,
          scales,
          out,
          rows,
          d,
          vocab,
        }),
      );
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          const want = new Float64Array(rows * d);
          ids.forEach((id, r) => {
            const row = Math.min(id, vocab - 1);
            want.set(unpacked.subarray(row * d, (row + 1) * d), r * d);
          });
          return compare(await rig.read(out, rows * d), want, TOLERANCES.elementwise);
        },
      };
    },
  };
}
