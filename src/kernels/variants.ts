import type { PackedFormat } from '../weight-format.ts';

/**
 * Kernel families. What is fast differs by device: on GPUs workgroup-memory tiling and
 * workgroup reductions usually win; on CPU-backed adapters (SwiftShader) a barrier costs more than
 * the memory traffic it saves, and barrier-free register-tiled or one-invocation-per-row kernels
 * win by 3–40x. Each op keeps more than one family; the autotuner picks per device.
 */
export type MatmulVariant =
  /** a and b tiles staged in workgroup memory, tileK of K per barrier, 4x4 outputs per invocation (GPUs). */
  | { family: 'tiled'; wgX: number; wgY: number; tileK: number }
  /**
   * Barrier-free register tile (matmul_tile.wgsl): tm × tn outputs per invocation, ku vec4 steps of
   * K per loop iteration, a and b read straight from memory (CPU adapters, where barriers are dear).
   */
  | { family: 'tile'; tm: number; tn: number; ku: number; wgX: number; wgY: number };

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
 * 'split' (decode only, split-K or flash-decoding): the direct kernel's work cut into slices of
 * `chunk` tokens of the context, one invocation each, then a merge of the slices (two dispatches).
 * 'register' (prefill only): 4 (query, head) rows × 8 keys in named registers per invocation, `wg`
 * invocations per workgroup.
 */
export type AttentionVariant =
  | { family: 'tiled' }
  | { family: 'direct' }
  | { family: 'direct4' }
  | { family: 'split'; chunk: number }
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

/**
 * The families a run without the autotuner uses on a software adapter (SwiftShader, llvmpipe,
 * WARP): the barrier-free ones. A software adapter runs each workgroup's invocations as CPU fibres,
 * so the GPU defaults above (reductions and tiles staged behind workgroup barriers) pay a fibre
 * switch per invocation at every barrier. These are the autotuner's picks on SwiftShader for
 * ci-tiny (f32 and int4, 2026-12-04); with them a ci-tiny decode step without the autotuner took
 * 2 ms instead of 178 ms (docs/measurements.md). Every one of them fuses, as the GPU defaults do.
 * But the packed matmul: its 4×8 register tile, not the search's 8×8. SwiftShader unrolls the
 * tile, so the 8×8 one took twice as long to compile (Q4_K 5.7 s against 2.8 s, f16 3.3 s against
 * 1.7 s, each fusion of the graph once) to run 5% faster (trained-4m's Q4_K head, L = 256: 195
 * against 205 ms): a run without the search is a short one, and compiling was most of it.
 */
export const SOFTWARE_DEFAULT_VARIANTS = {
  matmul: { family: 'tile', tm: 16, tn: 16, ku: 1, wgX: 8, wgY: 8 },
  gemv: { family: 'cols4', wg: 32 },
  rmsnorm: { family: 'rowwise' },
  attentionPrefill: { family: 'register', wg: 32 },
  attentionDecode: { family: 'direct' },
  packedGemv: { family: 'cols', cols: 8, wg: 16 },
  packedMatmul: { family: 'register', rows: 4, cols: 8, wgX: 8, wgY: 8 },
} as const satisfies KernelVariants;

/** The kernel families of a run without the autotuner: the software adapter's, or the GPU's. */
export function defaultVariants(softwareAdapter: boolean): KernelVariants {
  return softwareAdapter ? SOFTWARE_DEFAULT_VARIANTS : DEFAULT_VARIANTS;
}

/**
 * The matmul's tuning space, per family: each parameter's values. The first value of each list is
 * the family's centre (what the search tries first); see `spaceByDistance`.
 */
export const MATMUL_SPACE = {
  tile: { tm: [8, 4, 16], tn: [8, 4, 16], ku: [1, 2], wg: [[8, 8] as const, [16, 4] as const] },
  tiled: { wg: [[16, 16] as const, [8, 8] as const, [16, 8] as const], tileK: [16, 32] },
} as const;

/** The GEMV's tuning space: its families (whose shaders are fixed) × their workgroup sizes. */
export const GEMV_SPACE = {
  rowwise: [64, 32, 128, 256],
  cols4: [32, 16, 64, 128],
  cols8: [16, 8, 32, 64],
  subgroup: [64, 128, 256],
} as const;

/**
 * A space's points ordered by how many parameters differ from the centre (the first value of
 * each), the families interleaved at each distance: every single parameter value is tried before
 * any pair of changes, so a search that runs out of time drops the far corners of the space first.
 * Within a distance, points keep the order of the parameter lists.
 */
export function spaceByDistance<P>(families: readonly (readonly { point: P; distance: number }[])[]): P[] {
  const max = Math.max(0, ...families.flat().map((x) => x.distance));
  const out: P[] = [];
  for (let d = 0; d <= max; d++) {
    for (const fam of families) for (const x of fam) if (x.distance === d) out.push(x.point);
  }
  return out;
}

/** Families in the matmul space: its first this many candidates are their centres. */
export const MATMUL_FAMILIES = Object.keys(MATMUL_SPACE).length;

/** Every matmul candidate in MATMUL_SPACE, nearest the family centres first. */
export function matmulSpace(): MatmulVariant[] {
  const t = MATMUL_SPACE.tile;
  const tile: { point: MatmulVariant; distance: number }[] = [];
  // The first-listed parameter varies fastest, so at each distance the tile's shape changes come
  // before the K unroll's and the workgroup's: the budget cuts the least telling changes first.
  for (const [e, [wgX, wgY]] of t.wg.entries()) {
    for (const [c, ku] of t.ku.entries()) {
      for (const [b, tn] of t.tn.entries()) {
        for (const [a, tm] of t.tm.entries()) {
          const distance = [a, b, c, e].filter((i) => i > 0).length;
          tile.push({ point: { family: 'tile', tm, tn, ku, wgX, wgY }, distance });
        }
      }
    }
  }
  const tiled: { point: MatmulVariant; distance: number }[] = [];
  for (const [b, tileK] of MATMUL_SPACE.tiled.tileK.entries()) {
    for (const [a, [wgX, wgY]] of MATMUL_SPACE.tiled.wg.entries()) {
      const distance = [a, b].filter((i) => i > 0).length;
      tiled.push({ point: { family: 'tiled', wgX, wgY, tileK }, distance });
    }
  }
  return spaceByDistance([tile, tiled]);
}

/** Families in the GEMV space, the workgroup reduction included: its first this many candidates are their centres. */
export const GEMV_FAMILIES = Object.keys(GEMV_SPACE).length + 1;

/** Every GEMV candidate: the workgroup reduction, then each family at its workgroup sizes. */
export function gemvSpace(): GemvVariant[] {
  const fams = Object.entries(GEMV_SPACE).map(([family, wgs]) =>
    wgs.map((wg, i) => ({ point: { family, wg } as GemvVariant, distance: i > 0 ? 1 : 0 })),
  );
  return [{ family: 'reduce' }, ...spaceByDistance(fams)];
}

/**
 * A cover of the matmul space for the kernel tests: each family's centre and every point one
 * parameter away, so every value of every parameter is compiled and checked, without the product.
 */
export function matmulTestSet(): MatmulVariant[] {
  const centre = { tile: MATMUL_SPACE.tile, tiled: MATMUL_SPACE.tiled };
  return matmulSpace().filter((v) =>
    v.family === 'tile'
      ? [
          v.tm !== centre.tile.tm[0],
          v.tn !== centre.tile.tn[0],
          v.ku !== centre.tile.ku[0],
          v.wgX !== centre.tile.wg[0][0],
        ].filter(Boolean).length <= 1
      : [
          v.wgX !== centre.tiled.wg[0][0] || v.wgY !== centre.tiled.wg[0][1],
          v.tileK !== centre.tiled.tileK[0],
        ].filter(Boolean).length <= 1,
  );
}

/** Candidates the autotuner searches, per op. */
export const VARIANT_CANDIDATES = {
  matmul: matmulSpace(),
  gemv: gemvSpace(),
  rmsnorm: [{ family: 'workgroup' }, { family: 'rowwise' }],
  // 'direct' (one query per invocation) is left out for prefill: direct4 beat it at every shape
  // measured, and register beats both on CPU-backed adapters; tiled is the one for real GPUs.
  attentionPrefill: [
    { family: 'tiled' },
    { family: 'direct4' },
    { family: 'register', wg: 16 },
    { family: 'register', wg: 32 },
  ],
  attentionDecode: [
    { family: 'tiled' },
    { family: 'direct' },
    { family: 'split', chunk: 32 },
    { family: 'split', chunk: 128 },
    { family: 'split', chunk: 512 },
  ],
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

/**
 * The families whose shaders take the fusions of src/kernels/fuse.ts (an RMSNorm prologue, the
 * residual-add and SwiGLU epilogues): those where one invocation holds whole quads of neighbouring
 * output columns (the reduce GEMV's workgroup owns a quad) and can reach each x row. The
 * one-column-per-invocation and subgroup GEMVs (and the packed reduce GEMV) cannot pair SwiGLU's
 * columns; a model whose autotuned families include one of them runs the unfused graph.
 */
export const FUSABLE_FAMILIES = {
  matmul: ['tiled', 'tile'],
  gemv: ['reduce', 'cols4', 'cols8'],
  packedGemv: ['cols'],
  packedMatmul: ['register'],
} as const satisfies { [K in keyof typeof FUSABLE_OPS]: readonly KernelVariants[K]['family'][] };

/** The ops of the linear layers, whose families decide whether the fused graph can run. */
const FUSABLE_OPS = { matmul: 1, gemv: 1, packedGemv: 1, packedMatmul: 1 } as const;

export function familyFuses<K extends keyof typeof FUSABLE_FAMILIES>(op: K, v: KernelVariants[K]): boolean {
  // A register tile stores by column quads: its width must be a whole number of them.
  if (v.family === 'tile' && 'tn' in v && v.tn % 4 !== 0) return false;
  return (FUSABLE_FAMILIES[op] as readonly string[]).includes(v.family);
}

/**
 * Whether a model can run the fused graph (src/model/graph.ts): every linear kernel it runs must
 * take the fusions; `packed` when some of its weights are packed (f16, int8, int4).
 */
export function graphFuses(v: KernelVariants, packed: boolean): boolean {
  return (
    familyFuses('matmul', v.matmul) &&
    familyFuses('gemv', v.gemv) &&
    (!packed || (familyFuses('packedGemv', v.packedGemv) && familyFuses('packedMatmul', v.packedMatmul)))
  );
}

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
