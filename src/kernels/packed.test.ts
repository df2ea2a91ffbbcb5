import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError, KernelError } from '../errors.ts';
import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import { gpuLayout } from '../quant/formats.ts';
import type { PackedFormat } from '../weight-format.ts';
import type { KernelContext } from './kernel.ts';
import { PackedGemvKernel, PackedMatmulKernel } from './packed.ts';
import { VARIANT_CANDIDATES } from './variants.ts';

/**
 * The wrappers' checks and bindings without a GPU: a fake device records the bind groups and the
 * pipeline cache the constants each pipeline was asked for. What the kernels compute is checked in
 * the browser tests (e2e/kernels.spec.ts).
 */
interface Recorded {
  pipelines: { label: string; code: string; constants: Record<string, number> }[];
  bindGroups: { buffers: unknown[] }[];
}

function fakeContext(hasF16: boolean): { ctx: KernelContext; rec: Recorded } {
  const rec: Recorded = { pipelines: [], bindGroups: [] };
  const device = {
    createBuffer: (d: { size: number }) => ({ size: d.size, destroy() {} }),
    queue: { writeBuffer() {} },
    createBindGroup: (d: { entries: { resource: { buffer: unknown } }[] }) => {
      rec.bindGroups.push({ buffers: d.entries.map((e) => e.resource.buffer) });
      return {};
    },
  };
  const pipelines = {
    get: async (label: string, code: string, constants: Record<string, number> = {}) => {
      rec.pipelines.push({ label, code, constants });
      return { getBindGroupLayout: () => ({}) };
    },
  };
  const gpu = {
    device,
    hasF16,
    hasSubgroups: false,
    limits: { maxComputeWorkgroupsPerDimension: 65535 },
    adapter: {},
  };
  return { ctx: { gpu: gpu as unknown as Gpu, pipelines: pipelines as unknown as PipelineCache }, rec };
}

/** A buffer as the wrapper sees it: only its size matters. */
const buffer = (bytes: number) => ({ size: bytes }) as GPUBuffer;

function buffers(format: PackedFormat, M: number, N: number, K: number) {
  const layout = gpuLayout(format, N, K);
  return {
    x: buffer(4 * M * K),
    w: buffer(4 * layout.words),
    scales: buffer(4 * Math.max(1, layout.scales)),
    y: buffer(4 * M * N),
  };
}

// makeCall creates the params block with the WebGPU usage flags, which Node lacks.
const globals = globalThis as { GPUBufferUsage?: unknown };
let saved: unknown;
beforeAll(() => {
  saved = globals.GPUBufferUsage;
  globals.GPUBufferUsage = { UNIFORM: 64, COPY_DST: 8 };
});
afterAll(() => {
  globals.GPUBufferUsage = saved;
});

describe('PackedGemvKernel', () => {
  it('binds x, w, y and then the scales for int8 and int4, and no scales for f16', async () => {
    for (const format of ['int4', 'int8', 'f16'] as const) {
      const { ctx, rec } = fakeContext(false);
      const kernel = await PackedGemvKernel.create(ctx, format, { family: 'cols', cols: 8, wg: 16 }, 3);
      const b = buffers(format, 3, 67, 136);
      const call = kernel.call({ ...b, M: 3, N: 67, K: 136 });
      expect(call.kernel).toBe('gemv');
      const bound = rec.bindGroups[0].buffers.slice(1); // after the params block
      expect(bound).toEqual(format === 'f16' ? [b.x, b.w, b.y] : [b.x, b.w, b.y, b.scales]);
      // 67 columns, 8 per invocation, 16 invocations per workgroup: one workgroup.
      expect(call.workgroups).toEqual([1, 1, 1]);
      expect(rec.pipelines[0].constants).toEqual({ WG: 16, ROWS: 3, COLS: 8 });
    }
  });

  it('fills the weights slot per format, and with the f16-typed reading only for shaderF16', async () => {
    const codes = new Map<string, string>();
    for (const format of ['int4', 'int8', 'f16'] as const) {
      const { ctx, rec } = fakeContext(true);
      await PackedGemvKernel.create(ctx, format, { family: 'reduce', lanes: 32 });
      codes.set(format, rec.pipelines[0].code);
      expect(rec.pipelines[0].constants).toEqual({ LANES: 32, BATCH: 1 });
    }
    expect(codes.get('int4')).toContain('const W_VECS_PER_GROUP: u32 = 1u;');
    expect(codes.get('int8')).toContain('const W_VECS_PER_GROUP: u32 = 2u;');
    expect(codes.get('f16')).toContain('unpack2x16float');
    const { ctx, rec } = fakeContext(true);
    await PackedGemvKernel.create(ctx, 'f16', { family: 'reduce', lanes: 32, shaderF16: true });
    expect(rec.pipelines[0].code.startsWith('enable f16;')).toBe(true);
    expect(rec.pipelines[0].code).toContain('array<WElem>');
    expect(rec.pipelines[0].code).toContain('alias WElem = vec4<f16>;');
  });

  it('refuses the shader-f16 kernel without the feature, and for a quantized format', async () => {
    const variant = { family: 'cols', cols: 4, wg: 32, shaderF16: true } as const;
    const without = fakeContext(false).ctx;
    await expect(PackedGemvKernel.create(without, 'f16', variant)).rejects.toThrow(KernelError);
    await expect(PackedGemvKernel.create(without, 'f16', variant)).rejects.toThrow(/"shader-f16" feature/);
    await expect(PackedGemvKernel.create(fakeContext(true).ctx, 'int8', variant)).rejects.toThrow(
      /for f16 weights, not int8/,
    );
  });

  it('rejects int4 at K = 36 (not a multiple of 8) and any K not a multiple of 4, naming the shape', async () => {
    const { ctx } = fakeContext(false);
    const int4 = await PackedGemvKernel.create(ctx, 'int4', { family: 'cols', cols: 4, wg: 32 });
    const call =
      (format: PackedFormat, K: number, k = int4) =>
      () =>
        k.call({ ...buffers(format, 1, 67, K), M: 1, N: 67, K });
    expect(call('int4', 36)).toThrow(InputError);
    expect(call('int4', 36)).toThrow(/inner width 36 is not a multiple of 8/);
    expect(call('int4', 40)).not.toThrow();
    const int8 = await PackedGemvKernel.create(ctx, 'int8', { family: 'cols', cols: 4, wg: 32 });
    expect(call('int8', 36, int8)).not.toThrow();
    expect(call('int8', 34, int8)).toThrow(/inner width 34 is not a multiple of 4/);
  });

  it('rejects a batch it was not compiled for, buffers too small, a missing scales buffer, bad variants', async () => {
    const { ctx } = fakeContext(false);
    const k = await PackedGemvKernel.create(ctx, 'int4', { family: 'cols', cols: 4, wg: 32 }, 2);
    const b = buffers('int4', 2, 67, 136);
    expect(() => k.call({ ...b, M: 1, N: 67, K: 136 })).toThrow(/compiled for batch 2, called with M=1/);
    expect(() => k.call({ ...b, w: buffer(64), M: 2, N: 67, K: 136 })).toThrow(
      /packed weights buffer has 64 bytes/,
    );
    expect(() => k.call({ ...b, scales: undefined, M: 2, N: 67, K: 136 })).toThrow(/need a scales buffer/);
    expect(() => k.call({ ...b, M: 2, N: 68, K: 136 })).toThrow(KernelError);
    await expect(PackedGemvKernel.create(ctx, 'int4', { family: 'reduce', lanes: 24 })).rejects.toThrow(
      /power of two/,
    );
    await expect(
      PackedGemvKernel.create(ctx, 'int4', { family: 'cols', cols: 4, wg: 32 }, 9),
    ).rejects.toThrow(/batch 9 is outside 1…8/);
    const cols6 = { family: 'cols', cols: 6, wg: 32 } as unknown as { family: 'cols'; cols: 4; wg: number };
    await expect(PackedGemvKernel.create(ctx, 'int4', cols6)).rejects.toThrow(/cols must be 4 or 8/);
  });
});

describe('PackedMatmulKernel', () => {
  it('covers rows·wgY by cols·wgX outputs per workgroup and binds the scales last', async () => {
    const { ctx, rec } = fakeContext(false);
    const variant = VARIANT_CANDIDATES.packedMatmul[2]; // 8 × 8 tiles, 8 × 8 invocations
    const kernel = await PackedMatmulKernel.create(ctx, 'int8', variant);
    const b = buffers('int8', 200, 1000, 64);
    const call = kernel.call({ a: b.x, w: b.w, scales: b.scales, c: b.y, M: 200, N: 1000, K: 64 });
    expect(call.kernel).toBe('matmul');
    expect(call.workgroups).toEqual([Math.ceil(1000 / 64), Math.ceil(200 / 64), 1]);
    expect(rec.bindGroups[0].buffers.slice(1)).toEqual([b.x, b.w, b.y, b.scales]);
    expect(rec.pipelines[0].constants).toEqual({ WG_X: 8, WG_Y: 8, ROWS: 8, COLS: 8 });
  });
});
