import emptyCode from '../../shaders/empty.wgsl?raw';
import copyCode from '../../shaders/peak_copy.wgsl?raw';
import dependentCode from '../../shaders/peak_dispatch.wgsl?raw';
import fmaCode from '../../shaders/peak_fma.wgsl?raw';
import { assertAlive, type Gpu, isSoftwareAdapter } from '../gpu/device.ts';
import type { PipelineCache } from '../gpu/pipelines.ts';
import { GpuProfiler, timerQuantumNs } from '../gpu/profiler.ts';
import { bindGroup, grid1d, paramsBuffer } from '../kernels/kernel.ts';
import type { PeaksRecord } from '../results/schema.ts';
import { percentile } from '../stats.ts';

/** Tuning of the peak probes. */
export const PEAK_PROBES = {
  /** Each timed probe is scaled up until one run takes at least this long, so launch cost is negligible. */
  minRunMs: 40,
  /** Repetitions per configuration after one warm-up; the best is kept. */
  reps: 3,
  /** FMA probe: loop trips per invocation and workgroup sizes tried. */
  fmaIters: 512,
  fmaWorkgroupSizes: [64, 256],
  /** Copy probe: buffer size cap (far beyond any GPU's last-level cache) and grid shapes tried. */
  copyMaxBytes: 256 * 1024 * 1024,
  /**
   * The same cap on a software adapter, whose "last-level cache" is the CPU's (tens of MiB): 64 MiB
   * still dwarfs it, and each copy costs a quarter of the time where memory bandwidth is a CPU's.
   */
  copyMaxBytesSoftware: 64 * 1024 * 1024,
  copyGrids: [
    { wg: 256, workgroups: 1024 },
    { wg: 64, workgroups: 4096 },
    { wg: 256, workgroups: 8192 },
  ],
  /** Dispatches per pass in the dispatch-overhead probe. */
  dispatchCount: 500,
} as const;

/** The roofs, as the result records them (see PeaksSchema for what each one is). */
export type Peaks = PeaksRecord;
export type Trial = Peaks['trials'][number];

/** Runs `record` in one submit and returns its time: GPU timestamps when present, else wall clock. */
async function timeOnce(gpu: Gpu, profiler: GpuProfiler, record: (pass: GPUComputePassEncoder) => void) {
  profiler.reset();
  const encoder = gpu.device.createCommandEncoder({ label: 'peak probe' });
  const pass = encoder.beginComputePass(profiler.pass('probe'));
  record(pass);
  pass.end();
  const t0 = performance.now();
  gpu.device.queue.submit([encoder.finish()]);
  await gpu.device.queue.onSubmittedWorkDone();
  const wall = performance.now() - t0;
  const spans = await profiler.read();
  assertAlive(gpu);
  return spans.length > 0 && spans[0].ms > 0 ? spans[0].ms : wall;
}

/** Doubles `scale` until one run reaches minRunMs, then returns the best of `reps` runs at that scale. */
async function calibrated(
  gpu: Gpu,
  profiler: GpuProfiler,
  maxScale: number,
  record: (scale: number) => (pass: GPUComputePassEncoder) => void,
): Promise<{ scale: number; ms: number }> {
  let scale = 1;
  let ms = await timeOnce(gpu, profiler, record(scale));
  while (ms < PEAK_PROBES.minRunMs && scale * 2 <= maxScale) {
    scale *= 2;
    ms = await timeOnce(gpu, profiler, record(scale));
  }
  let best = ms;
  for (let r = 0; r < PEAK_PROBES.reps; r++)
    best = Math.min(best, await timeOnce(gpu, profiler, record(scale)));
  return { scale, ms: best };
}

async function fmaPeak(gpu: Gpu, pipelines: PipelineCache, profiler: GpuProfiler, trials: Trial[]) {
  const maxWorkgroups = (gpu.limits.maxComputeWorkgroupsPerDimension ?? 65535) * 16;
  const out = gpu.device.createBuffer({
    label: 'fma probe out',
    size: 1 << 20,
    usage: GPUBufferUsage.STORAGE,
  });
  const params = paramsBuffer(gpu, 'fma probe', [{ f32: 0.999 }, { f32: 1e-4 }]);
  let best = 0;
  for (const wg of PEAK_PROBES.fmaWorkgroupSizes) {
    if (wg > gpu.limits.maxComputeInvocationsPerWorkgroup) continue;
    const pipeline = await pipelines.get('peak_fma', fmaCode, { WG: wg, ITERS: PEAK_PROBES.fmaIters });
    const group = bindGroup(gpu, pipeline, 'fma probe', [params, out]);
    const { scale, ms } = await calibrated(gpu, profiler, maxWorkgroups, (workgroups) => (pass) => {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      const [x, y] = grid1d(workgroups, gpu);
      pass.dispatchWorkgroups(x, y);
    });
    const flops = scale * wg * PEAK_PROBES.fmaIters * 8 * 4 * 2;
    const gflops = flops / (ms * 1e6);
    trials.push({ kind: 'fma', label: `wg ${wg} × ${scale} workgroups`, value: gflops });
    best = Math.max(best, gflops);
  }
  out.destroy();
  params.destroy();
  return best;
}

async function copyPeak(gpu: Gpu, pipelines: PipelineCache, profiler: GpuProfiler, trials: Trial[]) {
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  const cap = isSoftwareAdapter(gpu.adapter) ? PEAK_PROBES.copyMaxBytesSoftware : PEAK_PROBES.copyMaxBytes;
  const bytes = Math.floor(Math.min(cap, limit) / 16) * 16;
  const usage = GPUBufferUsage.STORAGE;
  const src = gpu.device.createBuffer({ label: 'copy probe src', size: bytes, usage });
  const dst = gpu.device.createBuffer({ label: 'copy probe dst', size: bytes, usage });
  const params = paramsBuffer(gpu, 'copy probe', [bytes / 16]);
  let best = 0;
  for (const { wg, workgroups } of PEAK_PROBES.copyGrids) {
    if (wg > gpu.limits.maxComputeInvocationsPerWorkgroup) continue;
    const pipeline = await pipelines.get('peak_copy', copyCode, { WG: wg });
    const group = bindGroup(gpu, pipeline, 'copy probe', [params, src, dst]);
    // The copy size is fixed (it must dwarf the caches); `repeat` copies back to back reach minRunMs.
    const { scale, ms } = await calibrated(gpu, profiler, 64, (repeat) => (pass) => {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      const [x, y] = grid1d(workgroups, gpu);
      for (let r = 0; r < repeat; r++) pass.dispatchWorkgroups(x, y);
    });
    const gbps = (2 * bytes * scale) / (ms * 1e6);
    trials.push({ kind: 'copy', label: `${bytes >> 20} MiB, wg ${wg} × ${workgroups}`, value: gbps });
    best = Math.max(best, gbps);
  }
  src.destroy();
  dst.destroy();
  params.destroy();
  return best;
}

/** Wall time of a submit of `count` dispatches recorded by `record`, waited on. */
async function dispatchWall(
  gpu: Gpu,
  count: number,
  record: (pass: GPUComputePassEncoder, i: number) => void,
) {
  const encoder = gpu.device.createCommandEncoder({ label: 'dispatch probe' });
  const pass = encoder.beginComputePass({ label: 'dispatch probe' });
  for (let i = 0; i < count; i++) record(pass, i);
  pass.end();
  const t0 = performance.now();
  gpu.device.queue.submit([encoder.finish()]);
  await gpu.device.queue.onSubmittedWorkDone();
  return performance.now() - t0;
}

/** Median over 5 tries of (time of n dispatches − time of 1) / (n − 1), µs, after one warm-up. */
async function perDispatchUs(gpu: Gpu, record: (pass: GPUComputePassEncoder, i: number) => void) {
  const n = PEAK_PROBES.dispatchCount;
  const perDispatch: number[] = [];
  await dispatchWall(gpu, n, record);
  for (let r = 0; r < 5; r++) {
    const many = await dispatchWall(gpu, n, record);
    const one = await dispatchWall(gpu, 1, record);
    perDispatch.push(Math.max(0, ((many - one) / (n - 1)) * 1000));
  }
  return percentile(perDispatch, 50);
}

async function overheads(gpu: Gpu, pipelines: PipelineCache, trials: Trial[]) {
  const n = PEAK_PROBES.dispatchCount;
  const empty = await pipelines.get('empty', emptyCode);
  const emptyDispatchUs = await perDispatchUs(gpu, (pass) => {
    pass.setPipeline(empty);
    pass.dispatchWorkgroups(1);
  });
  trials.push({
    kind: 'empty-dispatch',
    label: `median of 5: (${n} − 1 empty dispatches) / ${n - 1}`,
    value: emptyDispatchUs,
  });

  // Two 256-byte buffers; the bind groups alternate a→b and b→a, so every dispatch waits for the last.
  const dependent = await pipelines.get('peak_dispatch', dependentCode, { WG: 64 });
  const usage = GPUBufferUsage.STORAGE;
  const a = gpu.device.createBuffer({ label: 'dispatch probe a', size: 256, usage });
  const b = gpu.device.createBuffer({ label: 'dispatch probe b', size: 256, usage });
  const groups = [
    bindGroup(gpu, dependent, 'dispatch probe a→b', [a, b]),
    bindGroup(gpu, dependent, 'dispatch probe b→a', [b, a]),
  ];
  const dispatchUs = await perDispatchUs(gpu, (pass, i) => {
    pass.setPipeline(dependent);
    pass.setBindGroup(0, groups[i % 2]);
    pass.dispatchWorkgroups(1);
  });
  a.destroy();
  b.destroy();
  trials.push({
    kind: 'dispatch',
    label: `median of 5: (${n} − 1 dependent dispatches with bound buffers) / ${n - 1}`,
    value: dispatchUs,
  });

  const src = gpu.device.createBuffer({
    label: 'submit probe src',
    size: 16,
    usage: GPUBufferUsage.COPY_SRC,
  });
  const dst = gpu.device.createBuffer({
    label: 'submit probe dst',
    size: 16,
    usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ,
  });
  const submit: number[] = [];
  for (let r = 0; r < 12; r++) {
    const t0 = performance.now();
    const encoder = gpu.device.createCommandEncoder({ label: 'submit probe' });
    encoder.copyBufferToBuffer(src, 0, dst, 0, 4);
    gpu.device.queue.submit([encoder.finish()]);
    await dst.mapAsync(GPUMapMode.READ, 0, 4);
    dst.unmap();
    if (r >= 2) submit.push((performance.now() - t0) * 1000);
  }
  src.destroy();
  dst.destroy();
  const submitUs = percentile(submit, 50);
  trials.push({ kind: 'submit', label: 'median of 10: submit + 4-byte readback', value: submitUs });
  return { dispatchUs, emptyDispatchUs, submitUs };
}

/**
 * Measures the roofs this run's points are judged against: FMA throughput, copy bandwidth, and
 * the fixed costs of a dispatch and of a submit with readback. Each is the best of several
 * configurations, because a peak measured too low would flatter every percentage.
 */
export async function measurePeaks(gpu: Gpu, pipelines: PipelineCache, signal?: AbortSignal): Promise<Peaks> {
  const trials: Trial[] = [];
  const profiler = new GpuProfiler(gpu, 1);
  try {
    signal?.throwIfAborted();
    const fmaGflops = await fmaPeak(gpu, pipelines, profiler, trials);
    signal?.throwIfAborted();
    const copyGBps = await copyPeak(gpu, pipelines, profiler, trials);
    signal?.throwIfAborted();
    const { dispatchUs, emptyDispatchUs, submitUs } = await overheads(gpu, pipelines, trials);
    return { fmaGflops, copyGBps, dispatchUs, emptyDispatchUs, submitUs, trials };
  } finally {
    profiler.destroy();
  }
}

/**
 * The best of two measurements of the roofs: the higher throughputs and the lower overheads, with
 * every trial of both kept (labelled before/after) so the record shows the spread.
 */
export function bestPeaks(before: Peaks, after: Peaks): Peaks {
  const tag = (trials: Trial[], when: string) => trials.map((t) => ({ ...t, label: `${when}: ${t.label}` }));
  return {
    fmaGflops: Math.max(before.fmaGflops, after.fmaGflops),
    copyGBps: Math.max(before.copyGBps, after.copyGBps),
    dispatchUs: Math.min(before.dispatchUs, after.dispatchUs),
    emptyDispatchUs: Math.min(before.emptyDispatchUs, after.emptyDispatchUs),
    submitUs: Math.min(before.submitUs, after.submitUs),
    trials: [...tag(before.trials, 'before'), ...tag(after.trials, 'after')],
  };
}

/**
 * Whether this browser quantizes GPU timestamps, and to what tick: sixteen passes of different
 * sizes in one submit; if every span is a multiple of a round tick, that is the quantum. Chrome
 * rounds timestamps (to blunt timing attacks) unless started with WebGPU developer features.
 */
export async function probeTimestamps(
  gpu: Gpu,
  pipelines: PipelineCache,
): Promise<{ quantumNs: number | null }> {
  if (!gpu.hasTimestamps) return { quantumNs: null };
  const profiler = new GpuProfiler(gpu, 16);
  const pipeline = await pipelines.get('peak_dispatch', dependentCode, { WG: 64 });
  const a = gpu.device.createBuffer({ label: 'timestamp probe a', size: 256, usage: GPUBufferUsage.STORAGE });
  const b = gpu.device.createBuffer({ label: 'timestamp probe b', size: 256, usage: GPUBufferUsage.STORAGE });
  try {
    const group = bindGroup(gpu, pipeline, 'timestamp probe', [a, b]);
    const encoder = gpu.device.createCommandEncoder({ label: 'timestamp probe' });
    for (let i = 0; i < 16; i++) {
      const pass = encoder.beginComputePass(profiler.pass(`probe ${i}`));
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      for (let j = 0; j <= i; j++) pass.dispatchWorkgroups(1);
      pass.end();
    }
    gpu.device.queue.submit([encoder.finish()]);
    return { quantumNs: timerQuantumNs(await profiler.read()) };
  } finally {
    profiler.destroy();
    a.destroy();
    b.destroy();
  }
}
