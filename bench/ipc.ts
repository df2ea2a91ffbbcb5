import { type ChildProcess, fork } from 'node:child_process';
import { deserializeError, type Progress } from '../src/runtime/api.ts';
import type { HostEvent, HostReply } from '../src/runtime/rpc.ts';

export interface IpcProcess {
  child: ChildProcess;
  /**
   * Sends `message` with a fresh `id` and resolves with the reply's value (engine errors as their
   * own classes). `onProgress` gets what the call streams before it: a run's progress (the
   * default `E`), or a generation's events.
   */
  call<T, E extends HostEvent = Progress>(
    message: Record<string, unknown>,
    onProgress?: (p: E) => void,
  ): Promise<T>;
  /** Asks the process to exit (`{type: 'exit'}`: it destroys its device first); kills it after 5 s. */
  stop(): Promise<void>;
}

/**
 * A Node process on Dawn spoken to over its IPC channel, by the CLI (the engine host) and the tests
 * (the check harness). comlink's proxies need transferable MessagePorts, which a process channel
 * cannot carry, hence this small protocol. Calls still pending when the process exits are rejected
 * with `exitError`.
 */
export function forkIpc(
  path: string,
  env: Record<string, string>,
  exitError: (why: string) => Error,
): IpcProcess {
  const child = fork(path, [], {
    env: { ...process.env, ...env },
    serialization: 'advanced',
    // Dawn's own warnings (a missing loader, a driver that failed) go to our stderr.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 0;
  const pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void; onProgress?: (p: HostEvent) => void }
  >();
  // The engine host's replies; the test harness answers calls the same way (result or error by id).
  child.on('message', (reply: HostReply) => {
    const call = typeof reply.id === 'number' ? pending.get(reply.id) : undefined;
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
    const error = exitError(signal ?? `code ${code}`);
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  });
  return {
    child,
    call: <T, E extends HostEvent = Progress>(
      message: Record<string, unknown>,
      onProgress?: (p: E) => void,
    ) =>
      new Promise<T>((resolve, reject) => {
        const id = ++nextId;
        // The host streams only the events of the call it answers (a run's progress, a generation's events).
        pending.set(id, {
          resolve: resolve as (v: unknown) => void,
          reject,
          onProgress: onProgress as ((p: HostEvent) => void) | undefined,
        });
        // A process that died between calls fails the write (EPIPE): the call is rejected as
        // its exit rejects the others, not thrown from a callback-less send as an uncaught error.
        child.send({ ...message, id }, (error) => {
          if (!error || !pending.delete(id)) return;
          reject(exitError(`its channel closed (${error.message})`));
        });
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // The process may be dying already (a crash in it): then the write fails with EPIPE, and its
      // exit, or the kill below, ends the wait all the same.
      if (child.connected) child.send({ type: 'exit' }, () => {});
      const timeout = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timeout);
    },
  };
}
