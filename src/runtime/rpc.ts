import type { GenerateEvent } from '../run/generate.ts';
import type { Progress } from '../run/run.ts';
import type { EngineApi, SerializedError } from './api.ts';

/**
 * The Node runtime's wire protocol: the CLI and the engine host exchange these over the child
 * process's IPC channel (comlink's proxies need transferable MessagePorts, which a process channel
 * cannot carry). A call names an EngineApi method; a run's progress (a generation's events) comes
 * back as messages with the call's id, before its reply.
 */
export type EngineMethod = keyof EngineApi;

export interface CallMessage {
  type: 'call';
  id: number;
  method: EngineMethod;
  args: unknown[];
}

/** Sent by the CLI before it lets the host go: the host destroys its device and exits. */
export interface ExitMessage {
  type: 'exit';
}

export type HostRequest = CallMessage | ExitMessage;

/** What a call streams before its reply: a run's progress, or a generation's events. */
export type HostEvent = Progress | GenerateEvent;

export type HostReply =
  | { type: 'progress'; id: number; progress: HostEvent }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: SerializedError };

/** How the native runtime names itself in results and reports, from the npm `webgpu` version. */
export function dawnLabel(webgpuVersion: string): string {
  return `webgpu ${webgpuVersion} (Dawn)`;
}
