import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import type { Timing } from '../gpu/profiler.ts';

/** What every kernel wrapper needs: the device and the shared pipeline cache. */
export interface KernelContext {
  readonly gpu: Gpu;
  readonly pipelines: PipelineCache;
}

/**
 * One recorded dispatch: a pipeline, its bind group and its grid. Built once by a kernel's
 * `bind()` and replayed by `encode()`, so a decode step records without creating anything.
 */
export interface KernelCall {
  readonly kernel: string;
  /** What the call does in the model (e.g. "qkv proj"); names its span in profile mode. */
  readonly role?: string;
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly workgroups: readonly [number, number, number];
  /** Buffers the call owns (its parameter block), destroyed with it. */
  readonly owned: readonly GPUBuffer[];
}

export function encodeCall(pass: GPUComputePassEncoder, call: KernelCall): void {
  pass.setPipeline(call.pipeline);
  pass.setBindGroup(0, call.bindGroup);
  pass.dispatchWorkgroups(call.workgroups[0], call.workgroups[1], call.workgroups[2]);
}

/** Tags a call with its role in the model, for per-kernel timing. */
export function withRole(role: string, call: KernelCall): KernelCall {
  return { ...call, role };
}

/**
 * Records calls into compute passes: one pass for all of them, or in profile mode one pass per
 * call, so each kernel gets its own timestamps. Profile mode adds pass boundaries (and on some
 * GPUs, lost overlap), which is why throughput numbers come from the one-pass mode.
 */
export function encodePasses(
  encoder: GPUCommandEncoder,
  label: string,
  calls: readonly KernelCall[],
  timing?: Timing,
): void {
  if (timing?.perKernel) {
    for (const call of calls) {
      const pass = encoder.beginComputePass(timing.profiler.pass(call.role ?? call.kernel));
      encodeCall(pass, call);
      pass.end();
    }
    return;
  }
  const pass = encoder.beginComputePass(timing ? timing.profiler.pass(label) : { label });
  for (const call of calls) encodeCall(pass, call);
  pass.end();
}

export function disposeCalls(calls: readonly KernelCall[]): void {
  for (const call of calls) for (const b of call.owned) b.destroy();
}

/**
 * Splits a 1-D count of workgroups over x and y, because one dimension stops at
 * maxComputeWorkgroupsPerDimension (65535 by default). Shaders rebuild the linear index from
 * `num_workgroups`, and skip the few extra invocations of the last row.
 */
export function grid1d(workgroups: number, gpu: Gpu): [number, number, number] {
  const maxPerDim = gpu.limits.maxComputeWorkgroupsPerDimension ?? 65535;
  if (workgroups <= maxPerDim) return [Math.max(1, workgroups), 1, 1];
  const y = Math.ceil(workgroups / maxPerDim);
  return [Math.ceil(workgroups / y), y, 1];
}

/** A parameter field: u32 unless marked as f32. Order is the WGSL struct's order. */
export type Param = number | { f32: number };

/** Packs a params struct of 4-byte scalars into a uniform buffer (padded to 16 bytes). */
export function paramsBuffer(gpu: Gpu, label: string, params: readonly Param[]): GPUBuffer {
  const words = Math.max(4, Math.ceil(params.length / 4) * 4);
  const data = new ArrayBuffer(words * 4);
  const u32 = new Uint32Array(data);
  const f32 = new Float32Array(data);
  params.forEach((p, i) => {
    if (typeof p === 'number') {
      if (!Number.isInteger(p) || p < 0 || p > 0xffffffff)
        throw new Error(`${label}: param ${i} = ${p} is not a u32`);
      u32[i] = p;
    } else {
      f32[i] = p.f32;
    }
  });
  const buffer = gpu.device.createBuffer({
    label: `${label} params`,
    size: data.byteLength,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

/** Builds a bind group over `resources` at bindings 0..n-1 of group 0. */
export function bindGroup(
  gpu: Gpu,
  pipeline: GPUComputePipeline,
  label: string,
  resources: readonly GPUBuffer[],
): GPUBindGroup {
  return gpu.device.createBindGroup({
    label,
    layout: pipeline.getBindGroupLayout(0),
    entries: resources.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
}

export function makeCall(
  ctx: KernelContext,
  name: string,
  pipeline: GPUComputePipeline,
  params: readonly Param[],
  buffers: readonly GPUBuffer[],
  workgroups: readonly [number, number, number],
): KernelCall {
  const uniform = paramsBuffer(ctx.gpu, name, params);
  return {
    kernel: name,
    pipeline,
    bindGroup: bindGroup(ctx.gpu, pipeline, name, [uniform, ...buffers]),
    workgroups,
    owned: [uniform],
  };
}
