import {
  DeviceLostError,
  GpuOutOfMemoryError,
  GpuValidationError,
  NoAdapterError,
  WebGpuUnavailableError,
} from '../errors.ts';

/** What we record about the adapter in every result, so no run is mistaken for another device's. */
export interface AdapterRecord {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
}

/** Optional features we use when, and only when, the adapter has them. */
const OPTIONAL_FEATURES = [
  'timestamp-query',
  'shader-f16',
  'subgroups',
] as const satisfies readonly GPUFeatureName[];

/**
 * Limits we raise from the spec defaults to the adapter's own maximum. The defaults (128 MiB
 * bindings, 256 invocations) would refuse real model shapes on hardware that can run them.
 */
const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

export interface Gpu {
  readonly device: GPUDevice;
  readonly adapter: AdapterRecord;
  readonly features: string[];
  readonly limits: Record<string, number>;
  readonly hasTimestamps: boolean;
  readonly hasF16: boolean;
  readonly hasSubgroups: boolean;
  /** Set once the device is lost; every later GPU call should fail fast with it. */
  lostError: DeviceLostError | undefined;
  /**
   * The first WebGPU error no error scope caught (an `uncapturederror` event). Such an error means
   * some call silently did nothing, so every later measurement is suspect: the run stops on it.
   */
  uncapturedError: GpuValidationError | GpuOutOfMemoryError | undefined;
}

function gpuNamespace(): GPU {
  const nav = (globalThis as { navigator?: Navigator }).navigator;
  if (!nav?.gpu) {
    const secure = (globalThis as { isSecureContext?: boolean }).isSecureContext;
    throw new WebGpuUnavailableError(
      secure === false
        ? 'WebGPU needs a secure context: open the page over https:// or from http://localhost / 127.0.0.1, not file:// or a LAN address.'
        : 'This browser does not expose WebGPU (navigator.gpu is missing). Use a recent Chrome or Edge (113+); on Linux, start it with --enable-unsafe-webgpu (and --enable-features=Vulkan); Firefox and Safari need WebGPU turned on in their settings.',
    );
  }
  return nav.gpu;
}

function limitsRecord(limits: GPUSupportedLimits): Record<string, number> {
  const out: Record<string, number> = {};
  // GPUSupportedLimits exposes its values as prototype getters, so spread would copy nothing.
  for (const key in limits) {
    const v = (limits as unknown as Record<string, unknown>)[key];
    if (typeof v === 'number') out[key] = v;
  }
  return out;
}

/**
 * Requests the adapter and a device with the adapter's own maximum limits and the optional features
 * it has. `gpu` is the WebGPU entry point: the browser's navigator.gpu by default, or Dawn's in Node.
 */
export async function acquireGpu(
  options: { powerPreference?: GPUPowerPreference; gpu?: GPU } = {},
): Promise<Gpu> {
  const adapter = await (options.gpu ?? gpuNamespace()).requestAdapter({
    powerPreference: options.powerPreference ?? 'high-performance',
  });
  if (!adapter) {
    throw new NoAdapterError(
      'WebGPU is present but no GPU adapter was returned: the GPU may be blocklisted or its driver missing. In Chrome see chrome://gpu; headless Chromium needs --enable-unsafe-webgpu (and --enable-unsafe-swiftshader for the software adapter).',
    );
  }
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];
  const device = await adapter.requestDevice({ label: 'bench-device', requiredFeatures, requiredLimits });
  const info = adapter.info;
  const gpu: Gpu = {
    device,
    adapter: {
      vendor: info.vendor,
      architecture: info.architecture,
      device: info.device,
      description: info.description,
      isFallbackAdapter: Boolean(
        (info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter,
      ),
      subgroupMinSize: (info as GPUAdapterInfo & { subgroupMinSize?: number }).subgroupMinSize,
      subgroupMaxSize: (info as GPUAdapterInfo & { subgroupMaxSize?: number }).subgroupMaxSize,
    },
    features: [...device.features].sort(),
    limits: limitsRecord(device.limits),
    hasTimestamps: device.features.has('timestamp-query'),
    hasF16: device.features.has('shader-f16'),
    hasSubgroups: device.features.has('subgroups'),
    lostError: undefined,
    uncapturedError: undefined,
  };
  device.addEventListener('uncapturederror', (event) => {
    const error = (event as GPUUncapturedErrorEvent).error;
    if (gpu.uncapturedError) return;
    gpu.uncapturedError =
      error instanceof GPUOutOfMemoryError
        ? new GpuOutOfMemoryError(`Out of GPU memory (uncaptured): ${error.message}`)
        : new GpuValidationError(`WebGPU reported an error no scope caught: ${error.message}`);
  });
  device.lost.then((lost) => {
    gpu.lostError = new DeviceLostError(
      lost.reason === 'destroyed'
        ? 'The GPU device was destroyed.'
        : `The GPU device was lost (${lost.message || 'no reason given'}). This happens on a driver reset or when the GPU is reclaimed; finished measurements are kept, reload to run again.`,
    );
  });
  return gpu;
}

/**
 * Fails fast with the loss reason instead of letting a call on a dead device hang or return zeros,
 * and with the first uncaptured WebGPU error instead of timing calls that silently did nothing.
 */
export function assertAlive(gpu: Gpu): void {
  if (gpu.lostError) throw gpu.lostError;
  if (gpu.uncapturedError) throw gpu.uncapturedError;
}

/**
 * Runs `create` inside out-of-memory and validation error scopes and turns a captured error into
 * a typed exception naming `what`. Used around every allocation, where an OOM must become a
 * clear message instead of a silently invalid buffer.
 */
export async function withErrorScopes<T>(gpu: Gpu, what: string, create: () => T): Promise<T> {
  assertAlive(gpu);
  gpu.device.pushErrorScope('out-of-memory');
  gpu.device.pushErrorScope('validation');
  const value = create();
  const validation = await gpu.device.popErrorScope();
  const oom = await gpu.device.popErrorScope();
  if (oom) throw new GpuOutOfMemoryError(`Out of GPU memory while allocating ${what}: ${oom.message}`);
  if (validation) throw new GpuValidationError(`WebGPU rejected ${what}: ${validation.message}`);
  return value;
}

/**
 * What really stopped a run that threw `e`: a lost device shows up first as whatever call noticed
 * it (a failed map, a rejected submit), and only then as the device's `lost` promise, so wait for
 * that promise briefly before naming the error. The loss, when there is one, is the root cause.
 */
export async function rootCause(gpu: Gpu, e: unknown, waitMs = 250): Promise<unknown> {
  if (gpu.lostError) return gpu.lostError;
  await Promise.race([gpu.device.lost, new Promise((resolve) => setTimeout(resolve, waitMs))]);
  return gpu.lostError ?? e;
}

/**
 * Runs `body` (GPU work that submits and awaits) inside validation and out-of-memory error scopes,
 * and throws the typed error if either caught one. Every workload runs the first repetition of a
 * new shape through this, so a call WebGPU rejected ends the run instead of yielding a fast,
 * bogus point; later repetitions replay the same calls and need no scope.
 */
export async function checkedRun<T>(gpu: Gpu, what: string, body: () => Promise<T>): Promise<T> {
  assertAlive(gpu);
  gpu.device.pushErrorScope('out-of-memory');
  gpu.device.pushErrorScope('validation');
  // A scope error is the root cause of anything the body threw after it, so it wins.
  const outcome = await body().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const validation = await gpu.device.popErrorScope();
  const oom = await gpu.device.popErrorScope();
  if (oom) throw new GpuOutOfMemoryError(`Out of GPU memory in ${what}: ${oom.message}`);
  if (validation) throw new GpuValidationError(`WebGPU rejected ${what}: ${validation.message}`);
  if (!outcome.ok) throw outcome.error;
  const value = outcome.value;
  assertAlive(gpu);
  return value;
}

/**
 * True for adapters that run on the CPU: the browser's own fallback flag, or a known software
 * rasterizer that some drivers report without setting it.
 */
export function isSoftwareAdapter(a: AdapterRecord): boolean {
  const text = `${a.vendor} ${a.architecture} ${a.device} ${a.description}`.toLowerCase();
  return (
    a.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe|softpipe|microsoft basic render|warp/.test(text)
  );
}
