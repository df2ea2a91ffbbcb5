import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { EngineApi, GpuInfo, Progress } from '../src/runtime/api.ts';
import { dawnLabel, type EngineMethod, type HostEvent, type HostRequest } from '../src/runtime/rpc.ts';
import { forkIpc, type IpcProcess } from './ipc.ts';
import { type AdapterChoice, findVulkan } from './vulkan.ts';

/** The engine host as `npm run build` writes it (vite.node.config.ts). */
/** The webgpu package's version, read at run time (the kit carries the package beside its host). */
const webgpuVersion = (createRequire(import.meta.url)('webgpu/package.json') as { version: string }).version;

export const HOST_PATH = process.env.BENCH_NODE_HOST ?? 'dist-node/host.mjs';

/** How long the host may take to hand over its first adapter before the CLI gives up on it. */
const START_TIMEOUT_MS = 60_000;

export interface NativeSession {
  api: EngineApi;
  gpu: GpuInfo;
  /** The Dawn build, as results name it. */
  dawn: string;
  /** Which loader and drivers were used. */
  vulkan: string;
  close(): Promise<void>;
}

/** Raised when the native runtime cannot start: no loader, no adapter, no built host. */
export class NativeUnavailableError extends Error {
  override readonly name = 'NativeUnavailableError';
}

/**
 * Starts the engine in a Node child process on Dawn (see vulkan.ts for why a process) and returns
 * the same EngineApi as the browser's worker, over the process's IPC channel.
 */
export async function openNative(options: { adapter: AdapterChoice }): Promise<NativeSession> {
  if (!existsSync(HOST_PATH)) {
    throw new NativeUnavailableError(`${HOST_PATH} is missing: run npm run build first.`);
  }
  const vulkan = findVulkan(options.adapter);
  const host = forkIpc(
    HOST_PATH,
    vulkan.env,
    (why) => new NativeUnavailableError(`The native engine process exited (${why}) with a call outstanding.`),
  );
  const api = engineClient(host);
  let timer: NodeJS.Timeout | undefined;
  try {
    const gpu = await Promise.race([
      api.gpuInfo(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new NativeUnavailableError(`Dawn found no adapter within ${START_TIMEOUT_MS / 1000} s.`)),
          START_TIMEOUT_MS,
        );
      }),
    ]);
    return {
      api,
      gpu,
      dawn: dawnLabel(webgpuVersion),
      vulkan: vulkan.description,
      close: () => host.stop(),
    };
  } catch (e) {
    await host.stop();
    throw e instanceof Error && e.name === 'NoAdapterError'
      ? new NativeUnavailableError(
          `Dawn returned no adapter (${vulkan.description}). Check that the Vulkan driver works (vulkaninfo --summary), install your GPU's Vulkan driver (mesa-vulkan-drivers, or the NVIDIA driver), or run on Chromium's software adapter with --adapter swiftshader.`,
        )
      : e;
  } finally {
    clearTimeout(timer);
  }
}

/** The EngineApi over the host's IPC channel: one call message per method. */
function engineClient(host: IpcProcess): EngineApi {
  const call = <T, E extends HostEvent = Progress>(
    method: EngineMethod,
    args: unknown[],
    onProgress?: (p: E) => void,
  ) =>
    host.call<T, E>(
      { type: 'call', method, args } satisfies Omit<HostRequest & { type: 'call' }, 'id'>,
      onProgress,
    );
  return {
    gpuInfo: () => call('gpuInfo', []),
    verify: (request) => call('verify', [request]),
    generate: (request, onEvent, runId) => call('generate', [request, runId], onEvent),
    run: (spec, onProgress, runId, probeTokens) => call('run', [spec, runId, probeTokens], onProgress),
    takeProbe: (runId) => call('takeProbe', [runId]),
    cancel: (runId) => call('cancel', [runId]),
  };
}
