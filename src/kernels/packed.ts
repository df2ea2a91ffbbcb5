import embeddingCode from '../../shaders/embedding_packed.wgsl?raw';
import gemvColsCode from '../../shaders/gemv_packed.wgsl?raw';
import gemvReduceCode from '../../shaders/gemv_packed_reduce.wgsl?raw';
import matmulCode from '../../shaders/matmul_packed.wgsl?raw';
import { KernelError } from '../errors.ts';
import { gpuLayout } from '../quant/formats.ts';
import { BYTES, checkPackable, isQuantFormat, type PackedFormat } from '../weight-format.ts';
import {
  checkFusionCall,
  EPILOGUE_CODE,
  fusionName,
  type LinearFusion,
  PLAIN,
  prologueSlot,
} from './fuse.ts';
import { grid1d, type KernelCall, type KernelContext, makeCall } from './kernel.ts';
import { GEMV_LIMITS } from './limits.ts';
import {
  DEFAULT_VARIANTS,
  familyFuses,
  type PackedGemvVariant,
  type PackedMatmulVariant,
} from './variants.ts';
import { composedOnce, composeShader, defineParams, type Shader, type WgslLibraryName } from './wgsl.ts';

/** Params of every packed shader: y[M, N] = x[M, K] · W[N, K]ᵀ, W packed; eps: the fused RMSNorm's (else 0). */
const PACKED_PARAMS = defineParams({ M: 'u32', N: 'u32', K: 'u32', eps: 'f32', epilogue: 'u32' });

/** Binding of the fused RMSNorm's gamma in the cols and matmul shaders (after params, x, w, y, scales). */
const FUSE_BINDING = 5;
type PackedParams = typeof PACKED_PARAMS.fields;

/** How a kernel reads its weights: a format, and for f16 optionally as f16 (shader-f16). */
type WeightsReading = PackedFormat | 'f16Native';

/** The snippet filling each shader's `weights` slot, per reading. */
const WEIGHTS_LIBRARY: Record<WeightsReading, WgslLibraryName> = {
  f16: 'weights_f16',
  f16Native: 'weights_f16_native',
  int8: 'weights_int8',
  int4: 'weights_int4',
  q4_0: 'weights_q4_0',
  q4_1: 'weights_q4_1',
  q5_0: 'weights_q5_0',
  q5_1: 'weights_q5_1',
  q8_0: 'weights_q8_0',
  q2_k: 'weights_q2_k',
  q3_k: 'weights_q3_k',
  q4_k: 'weights_q4_k',
  q5_k: 'weights_q5_k',
  q6_k: 'weights_q6_k',
};

/**
 * One shader source composed per reading (the same kernel text behind each weights snippet) and,
 * where it takes the fusions of fuse.ts, per prologue; each combination is composed once, on first use.
 */
function perReading(
  label: string,
  code: string,
  constants: Record<string, number>,
  fusable: boolean,
): (reading: WeightsReading, norm: boolean) => Shader<PackedParams> {
  return composedOnce(
    (reading: WeightsReading, norm: boolean) => `${reading}:${norm}`,
    (reading: WeightsReading, norm: boolean) =>
      composeShader({
        label,
        code,
        params: PACKED_PARAMS,
        constants: fusable ? { ...constants, FUSE_BINDING } : constants,
        slots: {
          weights: WEIGHTS_LIBRARY[reading],
          ...(fusable ? prologueSlot({ norm, epilogue: 'store' }) : {}),
        },
      }),
  );
}

const SHADERS = {
  cols: perReading('gemv_packed', gemvColsCode, {}, true),
  reduce: perReading(
    'gemv_packed_reduce',
    gemvReduceCode,
    { WG: GEMV_LIMITS.workgroupSize, MAX_M: GEMV_LIMITS.maxBatch },
    false,
  ),
  matmul: perReading('matmul_packed', matmulCode, {}, true),
} as const;

/** Params of the packed embedding gather: rows looked up, the row width d, the table's rows. */
const PACKED_EMBEDDING_PARAMS = defineParams({ rows: 'u32', d: 'u32', vocab: 'u32' });

/** Invocations per workgroup of the packed embedding, one per output vec4. */
const PACKED_EMBEDDING_WG = 64;

const EMBEDDING_SHADER = composedOnce(
  (reading: WeightsReading) => reading,
  (reading: WeightsReading) =>
    composeShader({
      label: 'embedding_packed',
      code: embeddingCode,
      params: PACKED_EMBEDDING_PARAMS,
      slots: { weights: WEIGHTS_LIBRARY[reading] },
    }),
);

/** The reading a variant asks for; shaderF16 needs f16 weights and the device feature. */
function reading(ctx: KernelContext, format: PackedFormat, v: { shaderF16?: true }): WeightsReading {
  if (!v.shaderF16) return format;
  if (format !== 'f16')
    throw new KernelError(`the shader-f16 reading is for f16 weights, not ${format} (no such kernel)`);
  if (!ctx.gpu.hasF16)
    throw new KernelError(
      'the shader-f16 kernel reads f16 weights as f16, which needs the "shader-f16" feature this adapter lacks; use the variant without shaderF16 (unpack2x16float)',
    );
  return 'f16Native';
}

/** Tile sides the packed tile (lib/packed_tile.wgsl) unrolls: 4 or 8 columns, 1 … 8 rows. */
function checkTile(what: string, rows: number, cols: number): void {
  if (cols !== 4 && cols !== 8) throw new KernelError(`${what}: cols must be 4 or 8, got ${cols}`);
  if (!Number.isInteger(rows) || rows < 1 || rows > GEMV_LIMITS.maxBatch)
    throw new KernelError(`${what}: rows must be 1…${GEMV_LIMITS.maxBatch}, got ${rows}`);
}

/** The buffers of one packed call, checked against the shape, in binding order (scales, none for f16, then gamma). */
interface PackedBuffers {
  x: GPUBuffer;
  w: GPUBuffer;
  /** [N, groups] f32; required for int8 and int4, ignored (and not bound) for f16. */
  scales?: GPUBuffer;
  y: GPUBuffer;
  /** The fused RMSNorm's gamma [K] (exactly when the kernel fuses it). */
  gamma?: GPUBuffer;
}

function bindings(
  name: string,
  format: PackedFormat,
  fusion: LinearFusion,
  b: PackedBuffers,
  M: number,
  N: number,
  K: number,
): (GPUBuffer | undefined)[] {
  // An InputError naming the shape: K a multiple of 4 (8 for int4; a whole number of blocks for a
  // GGUF type), N and K positive integers.
  if (!isQuantFormat(format)) checkPackable(format, `${name} weights`, N, K);
  const layout = gpuLayout(format, N, K, `${name} weights`);
  const need = (buffer: GPUBuffer | undefined, what: string, bytes: number) => {
    if (!buffer) throw new KernelError(`${name}: ${format} weights need a ${what} buffer`);
    if (buffer.size < bytes)
      throw new KernelError(
        `${name}: ${what} buffer has ${buffer.size} bytes, [M=${M}, N=${N}, K=${K}] ${format} needs ${bytes}`,
      );
    return buffer;
  };
  const outWidth = fusion.epilogue === 'swiglu' ? N / 2 : N;
  return [
    need(b.x, 'x', M * K * BYTES.f32),
    need(b.w, 'packed weights', layout.words * BYTES.u32),
    need(b.y, 'y', M * outWidth * BYTES.f32),
    format === 'f16' ? undefined : need(b.scales, 'scales', layout.scales * BYTES.u32),
    fusion.norm ? need(b.gamma, 'gamma', K * BYTES.f32) : undefined,
  ];
}

/**
 * y[M, N] = x[M, K] · W[N, K]ᵀ for decode (M = 1 … 8), W packed (src/model/formats.ts) and
 * dequantized in registers. 'cols' (gemv_packed.wgsl): an invocation per 4 or 8 columns, no
 * barriers, suited to CPU adapters; 'reduce' (gemv_packed_reduce.wgsl): `lanes` invocations per
 * column with coalesced loads and a workgroup reduction, suited to GPUs. Both are compiled per
 * batch size and batch-invariant: a row's outputs do not depend on the rows beside it.
 */
export class PackedGemvKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly format: PackedFormat,
    readonly variant: PackedGemvVariant,
    /** The batch M the pipeline was compiled for. */
    readonly batch: number,
    readonly fusion: LinearFusion,
  ) {}

  static async create(
    ctx: KernelContext,
    format: PackedFormat,
    variant: PackedGemvVariant = DEFAULT_VARIANTS.packedGemv,
    batch = 1,
    fusion: LinearFusion = PLAIN,
  ): Promise<PackedGemvKernel> {
    const read = reading(ctx, format, variant);
    if (fusionName(fusion) !== 'plain' && !familyFuses('packedGemv', variant))
      throw new KernelError(`the packed ${variant.family} GEMV cannot fuse ${fusionName(fusion)}`);
    if (!Number.isInteger(batch) || batch < 1 || batch > GEMV_LIMITS.maxBatch)
      throw new KernelError(`packed gemv batch ${batch} is outside 1…${GEMV_LIMITS.maxBatch}`);
    let pipeline: GPUComputePipeline;
    if (variant.family === 'cols') {
      checkTile('packed gemv', batch, variant.cols);
      const shader = SHADERS.cols(read, fusion.norm);
      pipeline = await ctx.pipelines.get(shader.label, shader.code, {
        WG: variant.wg,
        ROWS: batch,
        COLS: variant.cols,
      });
    } else {
      const wg = GEMV_LIMITS.workgroupSize;
      const { lanes } = variant;
      if (!Number.isInteger(lanes) || lanes < 1 || lanes > wg || (lanes & (lanes - 1)) !== 0)
        throw new KernelError(`packed gemv lanes must be a power of two up to ${wg}, got ${lanes}`);
      const shader = SHADERS.reduce(read, false);
      pipeline = await ctx.pipelines.get(shader.label, shader.code, { LANES: lanes, BATCH: batch });
    }
    return new PackedGemvKernel(ctx, pipeline, format, variant, batch, fusion);
  }

  /** With the kernel's fusion (fuse.ts): `gamma` and `eps` exactly when it fuses the norm. */
  call(a: PackedBuffers & { M: number; N: number; K: number; eps?: number }): KernelCall {
    if (a.M !== this.batch)
      throw new KernelError(`this packed gemv was compiled for batch ${this.batch}, called with M=${a.M}`);
    checkFusionCall('packed gemv', this.fusion, a);
    const buffers = bindings('packed gemv', this.format, this.fusion, a, a.M, a.N, a.K);
    const v = this.variant;
    const perGroup = v.family === 'cols' ? v.cols * v.wg : GEMV_LIMITS.workgroupSize / v.lanes;
    return makeCall(this.ctx, {
      name: 'gemv',
      pipeline: this.pipeline,
      params: PACKED_PARAMS,
      values: { M: a.M, N: a.N, K: a.K, eps: a.eps ?? 0, epilogue: EPILOGUE_CODE[this.fusion.epilogue] },
      buffers,
      workgroups: grid1d(Math.ceil(a.N / perGroup), this.ctx.gpu),
    });
  }
}

/**
 * y[M, N] = x[M, K] · W[N, K]ᵀ for prefill (M large), W packed: register tiles of rows × cols per
 * invocation (matmul_packed.wgsl), each weight group dequantized once per tile, no barriers. A
 * workgroup covers rows·wgY rows by cols·wgX columns.
 */
export class PackedMatmulKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly format: PackedFormat,
    readonly variant: PackedMatmulVariant,
    readonly fusion: LinearFusion,
  ) {}

  static async create(
    ctx: KernelContext,
    format: PackedFormat,
    variant: PackedMatmulVariant = DEFAULT_VARIANTS.packedMatmul,
    fusion: LinearFusion = PLAIN,
  ): Promise<PackedMatmulKernel> {
    const read = reading(ctx, format, variant);
    checkTile('packed matmul', variant.rows, variant.cols);
    const shader = SHADERS.matmul(read, fusion.norm);
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, {
      WG_X: variant.wgX,
      WG_Y: variant.wgY,
      ROWS: variant.rows,
      COLS: variant.cols,
    });
    return new PackedMatmulKernel(ctx, pipeline, format, variant, fusion);
  }

  /** With the kernel's fusion (fuse.ts): `gamma` and `eps` exactly when it fuses the norm. */
  call(a: {
    a: GPUBuffer;
    w: GPUBuffer;
    scales?: GPUBuffer;
    c: GPUBuffer;
    M: number;
    N: number;
    K: number;
    gamma?: GPUBuffer;
    eps?: number;
  }) {
    if (!Number.isInteger(a.M) || a.M < 1)
      throw new KernelError(`packed matmul: M=${a.M} is not a row count`);
    checkFusionCall('packed matmul', this.fusion, a);
    const buffers = bindings(
      'packed matmul',
      this.format,
      this.fusion,
      { x: a.a, w: a.w, scales: a.scales, y: a.c, gamma: a.gamma },
      a.M,
      a.N,
      a.K,
    );
    const v = this.variant;
    return makeCall(this.ctx, {
      name: 'matmul',
      pipeline: this.pipeline,
      params: PACKED_PARAMS,
      values: { M: a.M, N: a.N, K: a.K, eps: a.eps ?? 0, epilogue: EPILOGUE_CODE[this.fusion.epilogue] },
      buffers,
      workgroups: [Math.ceil(a.N / (v.cols * v.wgX)), Math.ceil(a.M / (v.rows * v.wgY)), 1],
    });
  }
}

/**
 * out[l, :] = table[tokens[l], :] from a packed table (embedding_packed.wgsl): a GGUF file's
 * token_embd in its own type, each looked-up row dequantized on the way. The tied LM head reads
 * the same buffers, so the table is held once, in its file's bits.
 */
export class PackedEmbeddingKernel {
  private constructor(
    private readonly ctx: KernelContext,
    private readonly pipeline: GPUComputePipeline,
    readonly format: PackedFormat,
  ) {}

  static async create(ctx: KernelContext, format: PackedFormat): Promise<PackedEmbeddingKernel> {
    const shader = EMBEDDING_SHADER(format);
    const pipeline = await ctx.pipelines.get(shader.label, shader.code, { WG: PACKED_EMBEDDING_WG });
    return new PackedEmbeddingKernel(ctx, pipeline, format);
  }

  /** tokens: u32[rows]; the table [vocab, d] packed (w, and scales unless f16); out: [rows, d]. */
  call(a: {
    tokens: GPUBuffer;
    w: GPUBuffer;
    scales?: GPUBuffer;
    out: GPUBuffer;
    rows: number;
    d: number;
    vocab: number;
  }): KernelCall {
    const layout = gpuLayout(this.format, a.vocab, a.d, 'embedding');
    if (a.w.size < layout.words * BYTES.u32)
      throw new KernelError(
        `packed embedding: the table has ${a.w.size} bytes, [${a.vocab}, ${a.d}] ${this.format} needs ${layout.words * BYTES.u32}`,
      );
    if (this.format !== 'f16' && !a.scales)
      throw new KernelError(`packed embedding: ${this.format} needs its scales buffer`);
    return makeCall(this.ctx, {
      name: 'embedding',
      pipeline: this.pipeline,
      params: PACKED_EMBEDDING_PARAMS,
      values: { rows: a.rows, d: a.d, vocab: a.vocab },
      buffers: [a.tokens, a.w, a.out, this.format === 'f16' ? undefined : a.scales],
      workgroups: grid1d(Math.ceil((a.rows * (a.d / 4)) / PACKED_EMBEDDING_WG), this.ctx.gpu),
    });
  }
}
