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
import type { Roofs } from './roofline.ts';

/** Tuning of the peak probes. */
export const PEAK_PROBES = {
  /** Each timed probe is scaled up until one run takes at least this long, so launch cost is negligible. */
  minRunMs: 40,
  /**
   * Repetitions after a configuration's first sample (the calibration's last run); the fastest is
   * kept. Only configurations whose first sample is within repeatMargin of the best are repeated.
   */
  reps: 3,
  repeatMargin: 0.1,
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

/**
 * The next scale of a probe whose run at `scale` took `ms`, short of minRunMs: double it while a
 * run is so short that launching it weighs, then, from a run of a quarter of minRunMs or more, the
 * scale that run predicts for minRunMs, 10% over. Doubling alone lands the final run anywhere
 * from minRunMs to twice it (an FMA run of 37 ms became 76), and every repetition pays that.
 */
export function nextScale(scale: number, ms: number, minRunMs: number, maxScale: number): number {
  const next = ms >= minRunMs / 4 ? Math.ceil(scale * (minRunMs / ms) * 1.1) : scale * 2;
  return Math.min(Math.max(next, scale + 1), maxScale);
}

/** Scales a probe (nextScale) until one run reaches minRunMs or maxScale; that run is the first sample. */
async function calibrate(
  gpu: Gpu,
  profiler: GpuProfiler,
  maxScale: number,
  record: (scale: number) => (pass: GPUComputePassEncoder) => void,
): Promise<{ scale: number; ms: number }> {
  let scale = 1;
  let ms = await timeOnce(gpu, profiler, record(scale));
  while (ms < PEAK_PROBES.minRunMs && scale < maxScale) {
    scale = nextScale(scale, ms, PEAK_PROBES.minRunMs, maxScale);
    ms = await timeOnce(gpu, profiler, record(scale));
  }
  return { scale, ms };
}

/**
 * Which configurations of a probe earn their repetitions: those whose first sample's rate is within
 * `margin` of the best first sample. A configuration further behind cannot become the roof on
 * repetitions that shave off noise; timing it three more times would only lengthen every run.
 */
export function configsToRepeat(rates: readonly number[], margin: number): boolean[] {
  const best = Math.max(...rates);
  return rates.map((r) => r >= (1 - margin) * best);
}

/** One configuration of a throughput probe (a workgroup size, a grid shape). */
interface ProbeConfig {
  /** The trial's label at the scale the calibration settled on. */
  label(scale: number): string;
  maxScale: number;
  record(scale: number): (pass: GPUComputePassEncoder) => void;
  /** The rate (GFLOP/s, GB/s) of one run of `ms` at `scale`. */
  rate(scale: number, ms: number): number;
}

/** Which configuration of each throughput probe gave the roof, and at what scale. */
interface ProbeChoice {
  index: number;
  scale: number;
}

/**
 * Each probe's winning configuration, by the measurement it won in: a measurement again (after the
 * workloads) times that configuration alone. Kept beside the result's record rather than in it.
 */
const winners = new WeakMap<Roofs, { fma: ProbeChoice; copy: ProbeChoice }>();

/**
 * The best rate over `configs`: each is calibrated (its first sample), those within
 * PEAK_PROBES.repeatMargin of the best first sample get PEAK_PROBES.reps more runs at their scale,
 * and each keeps its fastest run. With `only`, that configuration alone, at its known scale.
 */
async function bestRate(
  gpu: Gpu,
  profiler: GpuProfiler,
  kind: Trial['kind'],
  configs: readonly ProbeConfig[],
  trials: Trial[],
  only?: ProbeChoice,
): Promise<{ rate: number; choice: ProbeChoice }> {
  const runs: { index: number; scale: number; ms: number }[] = [];
  if (only) {
    const c = configs[only.index];
    runs.push({
      index: only.index,
      scale: only.scale,
      ms: await timeOnce(gpu, profiler, c.record(only.scale)),
    });
  } else {
    for (const [index, c] of configs.entries())
      runs.push({ index, ...(await calibrate(gpu, profiler, c.maxScale, c.record)) });
  }
  const repeat = configsToRepeat(
    runs.map((r) => configs[r.index].rate(r.scale, r.ms)),
    PEAK_PROBES.repeatMargin,
  );
  let best = { rate: 0, choice: { index: runs[0].index, scale: runs[0].scale } };
  for (const [i, run] of runs.entries()) {
    const c = configs[run.index];
    if (repeat[i]) {
      for (let r = 0; r < PEAK_PROBES.reps; r++)
        run.ms = Math.min(run.ms, await timeOnce(gpu, profiler, c.record(run.scale)));
    }
    const rate = c.rate(run.scale, run.ms);
    const note = only
      ? " (the first measurement's best configuration)"
      : repeat[i]
        ? ''
        : ` (one run: more than ${PEAK_PROBES.repeatMargin * 100}% below the best, not repeated)`;
    trials.push({ kind, label: `${c.label(run.scale)}${note}`, value: rate });
    if (rate > best.rate) best = { rate, choice: { index: run.index, scale: run.scale } };
  }
  return best;
}

async function fmaPeak(
  gpu: Gpu,
  pipelines: PipelineCache,
  profiler: GpuProfiler,
  trials: Trial[],
  only?: ProbeChoice,
) {
  const maxWorkgroups = (gpu.limits.maxComputeWorkgroupsPerDimension ?? 65535) * 16;
  const out = gpu.device.createBuffer({
    label: 'fma probe out',
    size: 1 << 20,
    usage: GPUBufferUsage.STORAGE,
  });
  const params = paramsBuffer(gpu, 'fma probe', [{ f32: 0.999 }, { f32: 1e-4 }]);
  const configs: ProbeConfig[] = [];
  for (const wg of PEAK_PROBES.fmaWorkgroupSizes) {
    if (wg > gpu.limits.maxComputeInvocationsPerWorkgroup) continue;
    const pipeline = await pipelines.get('peak_fma', fmaCode, { WG: wg, ITERS: PEAK_PROBES.fmaIters });
    const group = bindGroup(gpu, pipeline, 'fma probe', [params, out]);
    configs.push({
      label: (workgroups) => `wg ${wg} × ${workgroups} workgroups`,
      maxScale: maxWorkgroups,
      record: (workgroups) => (pass) => {
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, group);
        const [x, y] = grid1d(workgroups, gpu);
        pass.dispatchWorkgroups(x, y);
      },
      rate: (workgroups, ms) => (workgroups * wg * PEAK_PROBES.fmaIters * 8 * 4 * 2) / (ms * 1e6),
    });
  }
  try {
    return await bestRate(gpu, profiler, 'fma', configs, trials, only);
  } finally {
    out.destroy();
    params.destroy();
  }
}

async function copyPeak(
  gpu: Gpu,
  pipelines: PipelineCache,
  profiler: GpuProfiler,
  trials: Trial[],
  only?: ProbeChoice,
) {
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  const cap = isSoftwareAdapter(gpu.adapter) ? PEAK_PROBES.copyMaxBytesSoftware : PEAK_PROBES.copyMaxBytes;
  const bytes = Math.floor(Math.min(cap, limit) / 16) * 16;
  const usage = GPUBufferUsage.STORAGE;
  const src = gpu.device.createBuffer({ label: 'copy probe src', size: bytes, usage });
  const dst = gpu.device.createBuffer({ label: 'copy probe dst', size: bytes, usage });
  const params = paramsBuffer(gpu, 'copy probe', [bytes / 16]);
  const configs: ProbeConfig[] = [];
  for (const { wg, workgroups } of PEAK_PROBES.copyGrids) {
    if (wg > gpu.limits.maxComputeInvocationsPerWorkgroup) continue;
    const pipeline = await pipelines.get('peak_copy', copyCode, { WG: wg });
    const group = bindGroup(gpu, pipeline, 'copy probe', [params, src, dst]);
    // The copy size is fixed (it must dwarf the caches); `repeat` copies back to back reach minRunMs.
    configs.push({
      label: () => `${bytes >> 20} MiB, wg ${wg} × ${workgroups}`,
      maxScale: 64,
      record: (repeat) => (pass) => {
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, group);
        const [x, y] = grid1d(workgroups, gpu);
        for (let r = 0; r < repeat; r++) pass.dispatchWorkgroups(x, y);
      },
      rate: (repeat, ms) => (2 * bytes * repeat) / (ms * 1e6),
    });
  }
  try {
    return await bestRate(gpu, profiler, 'copy', configs, trials, only);
  } finally {
    src.destroy();
    dst.destroy();
    params.destroy();
  }
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
 * the fixed costs of a dispatch and of a submit with readback. Each throughput is the best of
 * several configurations, because a peak measured too low would flatter every percentage.
 *
 * `again`: the roofs measured earlier in this run (by this function, in this process). A second
 * measurement times each throughput probe's winning configuration of that one, at its scale: it
 * is there to catch drift and to give the targets the better of two samples, and comparing the
 * same configuration twice does both (the other configurations lost on this device already).
 */
export async function measurePeaks(
  gpu: Gpu,
  pipelines: PipelineCache,
  signal?: AbortSignal,
  again?: Roofs,
): Promise<Peaks> {
  const trials: Trial[] = [];
  const profiler = new GpuProfiler(gpu, 1);
  const first = again ? winners.get(again) : undefined;
  try {
    signal?.throwIfAborted();
    const fma = await fmaPeak(gpu, pipelines, profiler, trials, first?.fma);
    signal?.throwIfAborted();
    const copy = await copyPeak(gpu, pipelines, profiler, trials, first?.copy);
    signal?.throwIfAborted();
    const { dispatchUs, emptyDispatchUs, submitUs } = await overheads(gpu, pipelines, trials);
    const peaks = { fmaGflops: fma.rate, copyGBps: copy.rate, dispatchUs, emptyDispatchUs, submitUs, trials };
    winners.set(peaks, first ?? { fma: fma.choice, copy: copy.choice });
    return peaks;
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
