import matmulCode from '../../shaders/matmul.wgsl?raw';
import registerCode from '../../shaders/matmul_regtile.wgsl?raw';
import register8Code from '../../shaders/matmul_regtile8.wgsl?raw';
import { KernelError } from '../errors.ts';
import {
  checkFusionCall,
  EPILOGUE_CODE,
  fusionName,
  type LinearFusion,
  PLAIN,
  prologueSlot,
} from './fuse.ts';
import { type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { DEFAULT_VARIANTS, familyFuses, type MatmulVariant } from './variants.ts';
import { composeShader, defineParams, type Shader } from './wgsl.ts';

/** Params of every matmul shader: c[M, N] = a[M, K] · b[N, K]ᵀ; eps: the fused RMSNorm's (else 0). */
const MATMUL_PARAMS = defineParams({ M: 'u32', N: 'u32', K: 'u32', eps: 'f32' });

/** Binding of the fused RMSNorm's gamma in the fusable matmul shaders (after params, a, b and c). */
const FUSE_BINDING = 4;

/** Every family takes the fusions of fuse.ts; its shader is composed once per prologue. */
const CODE = {
  tiled: { label: 'matmul', code: matmulCode },
  register: { label: 'matmul_regtile', code: registerCode },
  register8: { label: 'matmul_regtile8', code: register8Code },
} as const;

const shaders = new Map<string, Shader<typeof MATMUL_PARAMS.fields>>();
function shaderOf(family: MatmulVariant['family'], norm: boolean) {
  const key = `${family}:${norm}`;
  let shader = shaders.get(key);
  if (!shader) {
    shader = composeShader({
      ...CODE[family],
      params: MATMUL_PARAMS,
      constants: { FUSE_BINDING },
      slots: prologueSlot({ norm, epilogue: 'store' }),
    });
    shaders.set(key, shader);
  }
  return shader;
}

/**
 * c[M, N] = a[M, K] · b[N, K]ᵀ for prefill, where M = L is large. Two families: workgroup-memory
 * tiles (matmul.wgsl) and barrier-free register tiles (matmul_regtile.wgsl, 4x4 per invocation;
 * matmul_regtile8.wgsl, 8x8). A workgroup covers tile·wgY rows by tile·wgX columns.
 */
export class MatmulKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly variant: MatmulVariant,
    readonly fusion: LinearFusion,
  ) {}

  static async create(
    ctx: KernelContext,
    variant: MatmulVariant = DEFAULT_VARIANTS.matmul,
    fusion: LinearFusion = PLAIN,
  ) {
    if (fusionName(fusion) !== 'plain' && !familyFuses('matmul', variant))
      throw new KernelError(`the ${variant.family} matmul cannot fuse ${fusionName(fusion)}`);
    const shader = shaderOf(variant.family, fusion.norm);
    if (variant.family === 'tiled') {
      if (variant.tileK % 4 !== 0)
        throw new KernelError(`matmul tileK must be a multiple of 4, got ${variant.tileK}`);
      const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
        WG_X: variant.wgX,
        WG_Y: variant.wgY,
        TILE_K: variant.tileK,
        EPILOGUE: EPILOGUE_CODE[fusion.epilogue],
      });
      return new MatmulKernel(ctx, pipeline, variant, fusion);
    }
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
      WG_X: variant.wgX,
      WG_Y: variant.wgY,
      EPILOGUE: EPILOGUE_CODE[fusion.epilogue],
    });
    return new MatmulKernel(ctx, pipeline, variant, fusion);
  }

  /** With the kernel's fusion (fuse.ts): `gamma` and `eps` exactly when it fuses the norm. */
  call(a: {
    a: GPUBuffer;
    b: GPUBuffer;
    c: GPUBuffer;
    M: number;
    N: number;
    K: number;
    gamma?: GPUBuffer;
    eps?: number;
  }): KernelCall {
    checkFusionCall(`${this.variant.family} matmul`, this.fusion, a);
    const v = this.variant;
    const tile = v.family === 'register8' ? 8 : 4; // outputs per invocation along each axis
    const grid = [Math.ceil(a.N / (tile * v.wgX)), Math.ceil(a.M / (tile * v.wgY)), 1] as const;
    return makeCall(this.ctx, {
      name: 'matmul',
      pipeline: this.pipeline,
      params: MATMUL_PARAMS,
      values: { M: a.M, N: a.N, K: a.K, eps: a.eps ?? 0 },
      buffers: a.gamma ? [a.a, a.b, a.c, a.gamma] : [a.a, a.b, a.c],
      workgroups: grid,
    });
  }
}
