import { GemvKernel } from '../kernels/gemv.ts';
import type { KernelCall, KernelContext } from '../kernels/kernel.ts';
import { MatmulKernel } from '../kernels/matmul.ts';
import { matmulRef } from '../kernels/reference.ts';
import { DEFAULT_VARIANTS, type GemvVariant, type MatmulVariant, variantName } from '../kernels/variants.ts';
import { compareRows, type KernelCase, type RowCheck, rowsToCheck, seededData, TOLERANCES } from './case.ts';

/** y[M, N] = x[M, K] · w[N, K]ᵀ. */
export interface LinearSpec {
  M: number;
  N: number;
  K: number;
  /** 'sampled' for shapes whose float64 reference would take longer than the kernel suite itself. */
  rows?: RowCheck;
}

function linearCase(
  op: 'matmul' | 'gemv',
  variant: string,
  s: LinearSpec,
  build: (x: GPUBuffer, w: GPUBuffer, y: GPUBuffer) => Promise<KernelCall>,
): KernelCase {
  const kind = 'reduction';
  const { M, N, K } = s;
  return {
    op,
    variant,
    shape: { M, N, K },
    kind,
    bufferBytes: 4 * Math.max(M * K, N * K, M * N),
    async prepare(rig) {
      const x = seededData(M * K, 10);
      const w = seededData(N * K, 11);
      const y = rig.output(M * N);
      const call = rig.own(await build(rig.input(x), rig.input(w), y));
      return {
        setup: [],
        call,
        async check() {
          await rig.run(call);
          const rowRef = (r: number) => matmulRef(x.subarray(r * K, (r + 1) * K), w, 1, K, N);
          const rows = rowsToCheck(M, s.rows ?? 'all');
          return compareRows(await rig.read(y, M * N), rows, N, rowRef, TOLERANCES[kind]);
        },
      };
    },
  };
}

/** Prefill matmul, [M, K] · [N, K]ᵀ. */
export function matmulCase(ctx: KernelContext, s: LinearSpec & { variant?: MatmulVariant }): KernelCase {
  const variant = s.variant ?? DEFAULT_VARIANTS.matmul;
  return linearCase('matmul', variantName(variant), s, async (a, b, c) =>
    (await MatmulKernel.create(ctx, variant)).call({ a, b, c, M: s.M, N: s.N, K: s.K }),
  );
}

/** Decode GEMV for a batch of M ≤ 8 rows. */
export function gemvCase(ctx: KernelContext, s: LinearSpec & { variant?: GemvVariant }): KernelCase {
  const variant = s.variant ?? DEFAULT_VARIANTS.gemv;
  return linearCase('gemv', variantName(variant), s, async (x, w, y) =>
    (await GemvKernel.create(ctx, variant, s.M)).call({ x, w, y, M: s.M, N: s.N, K: s.K }),
  );
}
