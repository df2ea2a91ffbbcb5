import type { Gpu } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import type { Timing } from '../gpu/profiler.ts';
import { type ParamFields, type ParamsLayout, type ParamValues, packWords } from './wgsl.ts';

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

/**
 * Packs a params struct of 4-byte scalars, given in order, into a uniform buffer (padded to 16
 * bytes). For shaders outside the model kernels; those pack named values through `defineParams`.
 */
export function paramsBuffer(gpu: Gpu, label: string, params: readonly Param[]): GPUBuffer {
  const words = params.map((p) =>
    typeof p === 'number' ? { type: 'u32' as const, value: p } : { type: 'f32' as const, value: p.f32 },
  );
  return uniformBuffer(gpu, label, packWords(label, words));
}

function uniformBuffer(gpu: Gpu, label: string, data: ArrayBuffer): GPUBuffer {
  const buffer = gpu.device.createBuffer({
    label: `${label} params`,
    size: data.byteLength,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  gpu.device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

/**
 * Builds a bind group over `resources` at bindings 0..n-1 of group 0; an undefined entry leaves its
 * binding out (a shader binding it only for some inputs, such as the packed f16 kernels' scales).
 */
export function bindGroup(
  gpu: Gpu,
  pipeline: GPUComputePipeline,
  label: string,
  resources: readonly (GPUBuffer | undefined)[],
): GPUBindGroup {
  return gpu.device.createBindGroup({
    label,
    layout: pipeline.getBindGroupLayout(0),
    entries: resources.flatMap((buffer, binding) => (buffer ? [{ binding, resource: { buffer } }] : [])),
  });
}

/** What `makeCall` records: the params are named values checked against the shader's field list. */
export interface CallSpec<F extends ParamFields> {
  /** Names the call in profiles and errors (one name per op, whatever the family). */
  readonly name: string;
  readonly pipeline: GPUComputePipeline;
  /** The layout the pipeline's shader was composed with. */
  readonly params: ParamsLayout<F>;
  readonly values: NoInfer<ParamValues<F>>;
  /** Bound at 1, 2, …, after the params block at binding 0; an undefined entry is left unbound. */
  readonly buffers: readonly (GPUBuffer | undefined)[];
  readonly workgroups: readonly [number, number, number];
}

export function makeCall<F extends ParamFields>(ctx: KernelContext, spec: CallSpec<F>): KernelCall {
  const uniform = uniformBuffer(ctx.gpu, spec.name, spec.params.pack(spec.name, spec.values));
  return {
    kernel: spec.name,
    pipeline: spec.pipeline,
    bindGroup: bindGroup(ctx.gpu, spec.pipeline, spec.name, [uniform, ...spec.buffers]),
    workgroups: spec.workgroups,
    owned: [uniform],
  };
}
