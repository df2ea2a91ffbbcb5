import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import webgpuPackage from 'webgpu/package.json' with { type: 'json' };
import { dawnLabel, type EngineMethod, type HostReply, type HostRequest } from '../src/runtime/rpc.ts';
import { deserializeError, type EngineApi, type GpuInfo, type Progress } from '../src/worker/api.ts';
import { type AdapterChoice, findVulkan } from './vulkan.ts';

/** The engine host as `npm run build` writes it (vite.node.config.ts). */
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
  const child = fork(HOST_PATH, [], {
    env: { ...process.env, ...vulkan.env },
    serialization: 'advanced',
    // Dawn's own warnings (a missing loader, a driver that failed) go to the CLI's stderr.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const api = rpcClient(child);
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
      dawn: dawnLabel(webgpuPackage.version),
      vulkan: vulkan.description,
      close: () => stop(child),
    };
  } catch (e) {
    await stop(child);
    throw e instanceof Error && e.name === 'NoAdapterError'
      ? new NativeUnavailableError(
          `Dawn returned no adapter (${vulkan.description}). Check that the Vulkan driver works (vulkaninfo --summary), install your GPU's Vulkan driver (mesa-vulkan-drivers, or the NVIDIA driver), or run on Chromium's software adapter with --adapter swiftshader.`,
        )
      : e;
  } finally {
    clearTimeout(timer);
  }
}

/** Asks the host to destroy its device and exit; kills it if it has not within 5 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.send({ type: 'exit' } satisfies HostRequest);
  const timeout = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timeout);
}

function rpcClient(child: ChildProcess): EngineApi {
  let nextId = 0;
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void; onProgress?: (p: Progress) => void }
  >();
  child.on('message', (reply: HostReply) => {
    const call = pending.get(reply.id);
    if (!call) return;
    if (reply.type === 'progress') {
      call.onProgress?.(reply.progress);
      return;
    }
    pending.delete(reply.id);
    if (reply.type === 'result') call.resolve(reply.value);
    else call.reject(deserializeError(reply.error));
  });
  child.on('exit', (code, signal) => {
    const error = new NativeUnavailableError(
      `The native engine process exited (${signal ?? `code ${code}`}) with a call outstanding.`,
    );
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  });
  const call = <T>(method: EngineMethod, args: unknown[], onProgress?: (p: Progress) => void) =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject, onProgress });
      child.send({ type: 'call', id, method, args } satisfies HostRequest);
    });
  return {
    gpuInfo: () => call('gpuInfo', []),
    verify: (request) => call('verify', [request]),
    run: (spec, onProgress, runId) => call('run', [spec, runId], onProgress),
    cancel: (runId) => call('cancel', [runId]),
  };
}
