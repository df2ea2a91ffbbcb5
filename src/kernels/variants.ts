import type { PackedFormat } from '../model/formats.ts';

/**
 * Kernel families. What is fast differs by device: on GPUs workgroup-memory tiling and
 * workgroup reductions usually win; on CPU-backed adapters (SwiftShader) a barrier costs more than
 * the memory traffic it saves, and barrier-free register-tiled or one-invocation-per-row kernels
 * win by 3–40x. Each op keeps more than one family; the autotuner picks per device.
 */
export type MatmulVariant =
  | { family: 'tiled'; wgX: number; wgY: number; tileK: number }
  | { family: 'register'; wgX: number; wgY: number }
  /** 8x8 outputs per invocation instead of 4x4. */
  | { family: 'register8'; wgX: number; wgY: number };

export type GemvVariant =
  | { family: 'reduce' }
  | { family: 'rowwise'; wg: number }
  /** Four output columns per invocation. */
  | { family: 'cols4'; wg: number }
  /** Eight output columns per invocation. */
  | { family: 'cols8'; wg: number }
  | { family: 'subgroup'; wg: number };

/**
 * GEMV on packed weights (f16, int8, int4; src/kernels/packed.ts). 'cols': an invocation per `cols`
 * (4 or 8) output columns, no barriers, each x load shared by the columns (CPU adapters); 'reduce':
 * `lanes` invocations per column reading neighbouring words, then a workgroup reduction (GPUs).
 * `shaderF16`: f16 weights read as vec4<f16> (f16 format only; needs `shader-f16`).
 */
export type PackedGemvVariant =
  | { family: 'cols'; cols: 4 | 8; wg: number; shaderF16?: true }
  | { family: 'reduce'; lanes: number; shaderF16?: true };

/**
 * Prefill matmul on packed weights: 'register', each invocation a `rows` × `cols` (4 or 8) tile,
 * dequantizing each weight group once per tile, no barriers.
 */
export type PackedMatmulVariant = {
  family: 'register';
  rows: 4 | 8;
  cols: 4 | 8;
  wgX: number;
  wgY: number;
  shaderF16?: true;
};

export type RmsNormVariant = { family: 'workgroup' } | { family: 'rowwise' };

/**
 * 'tiled': K/V staged in workgroup memory (prefill) or a workgroup per context (decode); 'direct': one
 * invocation per query and head, no barriers; 'direct4' (prefill only): four queries per invocation;
 * 'register' (prefill only): 4 (query, head) rows × 8 keys in named registers per invocation, `wg`
 * invocations per workgroup.
 */
export type AttentionVariant =
  | { family: 'tiled' }
  | { family: 'direct' }
  | { family: 'direct4' }
  | { family: 'register'; wg: number };

export interface KernelVariants {
  matmul: MatmulVariant;
  gemv: GemvVariant;
  rmsnorm: RmsNormVariant;
  attentionPrefill: AttentionVariant;
  attentionDecode: AttentionVariant;
  /** The packed-weight kernels (f16, int8, int4); only used, and only tuned, when weights are packed. */
  packedGemv: PackedGemvVariant;
  packedMatmul: PackedMatmulVariant;
}

/** The defaults (`--no-autotune`): the families that suit discrete and integrated GPUs. */
export const DEFAULT_VARIANTS = {
  matmul: { family: 'tiled', wgX: 16, wgY: 16, tileK: 16 },
  gemv: { family: 'reduce' },
  rmsnorm: { family: 'workgroup' },
  attentionPrefill: { family: 'tiled' },
  attentionDecode: { family: 'tiled' },
  packedGemv: { family: 'reduce', lanes: 32 },
  packedMatmul: { family: 'register', rows: 4, cols: 4, wgX: 8, wgY: 8 },
} as const satisfies KernelVariants;

/** Candidates the autotuner searches, per op. */
export const VARIANT_CANDIDATES = {
  matmul: [
    { family: 'tiled', wgX: 16, wgY: 16, tileK: 16 },
    { family: 'tiled', wgX: 8, wgY: 8, tileK: 16 },
    { family: 'tiled', wgX: 16, wgY: 8, tileK: 32 },
    { family: 'register', wgX: 8, wgY: 8 },
    { family: 'register', wgX: 16, wgY: 4 },
    { family: 'register8', wgX: 8, wgY: 8 },
    { family: 'register8', wgX: 16, wgY: 4 },
  ],
  gemv: [
    { family: 'reduce' },
    { family: 'rowwise', wg: 64 },
    { family: 'rowwise', wg: 128 },
    { family: 'cols4', wg: 32 },
    { family: 'cols4', wg: 64 },
    { family: 'cols8', wg: 16 },
    { family: 'cols8', wg: 32 },
    { family: 'subgroup', wg: 64 },
    { family: 'subgroup', wg: 256 },
  ],
  rmsnorm: [{ family: 'workgroup' }, { family: 'rowwise' }],
  // 'direct' (one query per invocation) is left out for prefill: direct4 beat it at every shape
  // measured, and register beats both on CPU-backed adapters; tiled is the one for real GPUs.
  attentionPrefill: [
    { family: 'tiled' },
    { family: 'direct4' },
    { family: 'register', wg: 16 },
    { family: 'register', wg: 32 },
  ],
  attentionDecode: [{ family: 'tiled' }, { family: 'direct' }],
  // shaderF16 candidates are tried only on f16 weights where the device has shader-f16.
  packedGemv: [
    { family: 'cols', cols: 4, wg: 32 },
    { family: 'cols', cols: 8, wg: 16 },
    // Workgroups of 32 invocations of 8 columns: 1.7× faster than 16 of 8 on the kernel suite's int4
    // GEMV on SwiftShader (28.8 against 49.4 ms); 64 and 128 were no better.
    { family: 'cols', cols: 8, wg: 32 },
    { family: 'reduce', lanes: 8 },
    { family: 'reduce', lanes: 32 },
    { family: 'cols', cols: 8, wg: 16, shaderF16: true },
    { family: 'reduce', lanes: 32, shaderF16: true },
  ],
  packedMatmul: [
    { family: 'register', rows: 4, cols: 4, wgX: 8, wgY: 8 },
    { family: 'register', rows: 4, cols: 8, wgX: 8, wgY: 8 },
    { family: 'register', rows: 8, cols: 8, wgX: 8, wgY: 8 },
    { family: 'register', rows: 4, cols: 4, wgX: 8, wgY: 8, shaderF16: true },
    { family: 'register', rows: 8, cols: 8, wgX: 8, wgY: 8, shaderF16: true },
  ],
} as const satisfies { [K in keyof KernelVariants]: readonly KernelVariants[K][] };

export type AnyVariant =
  | MatmulVariant
  | GemvVariant
  | RmsNormVariant
  | AttentionVariant
  | PackedGemvVariant
  | PackedMatmulVariant;

export function variantName(v: AnyVariant): string {
  const { family, ...rest } = v;
  const params = Object.entries(rest)
    .map(([k, val]) => `${k}=${val}`)
    .join(',');
  return params ? `${family}(${params})` : family;
}

/** Families that need an optional feature; the autotuner skips them where the adapter lacks it. */
export function variantSupported(
  v: MatmulVariant | GemvVariant | RmsNormVariant,
  features: { hasSubgroups: boolean },
) {
  return v.family !== 'subgroup' || features.hasSubgroups;
}

/** Whether a packed-kernel variant can run on `format` here: shaderF16 ones need f16 weights and shader-f16. */
export function packedVariantSupported(
  v: PackedGemvVariant | PackedMatmulVariant,
  format: PackedFormat,
  features: { hasF16: boolean },
) {
  return !v.shaderF16 || (format === 'f16' && features.hasF16);
}
