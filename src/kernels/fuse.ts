import { KernelError } from '../errors.ts';
import type { WgslLibraryName } from './wgsl.ts';

/**
 * What a linear kernel (GEMV, matmul, their packed forms) does around its product
 * y[M, N] = x[M, K] · w[N, K]ᵀ, so that the pairs of kernels that always run together become one
 * dispatch (shaders/lib/linear_norm.wgsl, linear_epilogue.wgsl):
 * - `norm`: x is RMS-normalised on the fly with a gamma vector and eps (the RMSNorm before the q/k/v,
 *   gate/up and LM-head projections), so the normed rows are never written or read back;
 * - `epilogue` 'add': y += the product (the residual add after the o and down projections);
 * - `epilogue` 'swiglu': the product is over interleaved gate/up weight rows and y[m, j] =
 *   silu(gate_j) · up_j, y rows N / 2 wide (gate and up in one kernel, SwiGLU in its epilogue).
 */
export interface LinearFusion {
  norm: boolean;
  epilogue: Epilogue;
}

export type Epilogue = 'store' | 'add' | 'swiglu';

/** The plain product: no norm, a plain store. */
export const PLAIN: LinearFusion = { norm: false, epilogue: 'store' };

/** p.epilogue, the uniform field lib/linear_epilogue.wgsl branches on. */
export const EPILOGUE_CODE: Record<Epilogue, number> = { store: 0, add: 1, swiglu: 2 };

/** The snippet that fills a fusable shader's `prologue` slot. */
export function prologueSlot(f: LinearFusion): { prologue: WgslLibraryName } {
  return { prologue: f.norm ? 'linear_norm' : 'linear_plain' };
}

export function fusionName(f: LinearFusion): string {
  const parts = [f.norm ? 'norm' : '', f.epilogue === 'store' ? '' : f.epilogue].filter(Boolean);
  return parts.length > 0 ? parts.join('+') : 'plain';
}

/** Checks a call against its kernel's fusion: the gamma is bound exactly when the norm is fused. */
export function checkFusionCall(
  label: string,
  f: LinearFusion,
  a: { N: number; gamma?: GPUBuffer; eps?: number },
) {
  if (f.norm !== (a.gamma !== undefined)) {
    throw new KernelError(
      f.norm
        ? `${label}: this kernel fuses RMSNorm and needs its gamma`
        : `${label}: a gamma was given to a kernel without a fused norm`,
    );
  }
  if (f.norm && !(typeof a.eps === 'number' && a.eps > 0))
    throw new KernelError(`${label}: the fused RMSNorm needs eps > 0, got ${a.eps}`);
  if (f.epilogue === 'swiglu' && a.N % 2 !== 0)
    throw new KernelError(`${label}: the SwiGLU epilogue needs an even N (gate/up pairs), got ${a.N}`);
}
