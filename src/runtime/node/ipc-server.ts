import { serializeError } from '../api.ts';
import type { HostEvent, HostReply } from '../rpc.ts';

/**
 * The child side of the IPC protocol (bench/ipc.ts is the parent's): each `{type: 'call', id, …}`
 * message is answered with its value or its error, by id, with progress (or a generation's events)
 * in between; `{type:
 * 'exit'}`, or the parent going away, runs `shutdown` (which destroys the devices, so Dawn holds no
 * handle that keeps the process alive) and exits.
 */
export function serveIpc<M extends { type: 'call'; id: number }>(
  handle: (message: M, progress: (p: HostEvent) => void) => Promise<unknown>,
  shutdown: () => void,
): void {
  const send = (reply: HostReply) => process.send?.(reply);
  const exit = (): never => {
    shutdown();
    process.exit(0);
  };
  process.on('message', (message: M | { type: 'exit' }) => {
    if (message.type === 'exit') exit();
    const call = message as M;
    const { id } = call;
    handle(call, (progress) => send({ type: 'progress', id, progress })).then(
      (value) => send({ type: 'result', id, value }),
      (e: unknown) => send({ type: 'error', id, error: serializeError(e) }),
    );
  });
  // The parent went away (crashed or was killed): nothing will ask for results any more.
  process.on('disconnect', exit);
}
