/**
 * The typed boundary between the page (or the CLI, through Playwright) and the engine worker.
 * Everything that crosses it has a named type here, and every engine error crosses as its own
 * class (see installErrorTransfer), so callers can branch on `instanceof` or `name`.
 */
import { transferHandlers } from 'comlink';
import { ENGINE_ERRORS } from '../errors.ts';
import type { AdapterRecord } from '../gpu/device.ts';
import type { ModelSource } from '../model/source.ts';
import type { VerifyOutcome } from '../model/verify.ts';
import type { BenchResult } from '../results/schema.ts';
import type { GenerateEvent, GenerateOutcome } from '../run/generate.ts';
import type { ProbeOutcome, Progress } from '../run/run.ts';
import type { GenerateRequest } from '../spec/prompt.ts';

export type { ModelSource } from '../model/source.ts';
export type { BenchResult } from '../results/schema.ts';
export type { GenerateEvent, GenerateOutcome } from '../run/generate.ts';
export type { ProbeOutcome, Progress } from '../run/run.ts';
export type { GenerateRequest, Generation } from '../spec/prompt.ts';
export type { BenchSpec } from '../spec/schema.ts';

export interface GpuInfo {
  adapter: AdapterRecord;
  features: string[];
  limits: Record<string, number>;
  userAgent: string;
}

export interface VerifyRequest {
  model: ModelSource;
  tokens: number[];
}

export interface VerifyResult extends VerifyOutcome {
  gpu: GpuInfo;
  modelName: string;
  warnings: string[];
}

export interface GenerateResult extends GenerateOutcome {
  gpu: GpuInfo;
}

/** What the worker exposes. */
export interface EngineApi {
  /** Acquires the adapter (once) and describes it. */
  gpuInfo(): Promise<GpuInfo>;
  /** Prefill on the GPU, compared with the CPU reference; returns the GPU logits. */
  verify(request: VerifyRequest): Promise<VerifyResult>;
  /**
   * Runs a benchmark spec (validated here with the same schema the callers use). `onProgress` must
   * be wrapped in comlink's `proxy()`. A cancel or device loss resolves with the finished records
   * and `error: {name, message}`. `runId` names the run for `cancel`. `probeTokens`: next-token
   * logits to take from the run's own model after its workloads, for `takeProbe(runId)`.
   */
  run(
    spec: unknown,
    onProgress?: (p: Progress) => void,
    runId?: string,
    probeTokens?: number[],
  ): Promise<BenchResult>;
  /**
   * Greedy generation from a text prompt with the model's own tokenizer (validated here): the
   * model built once and checked against the CPU reference, then each token streamed to `onEvent`
   * (wrapped in comlink's `proxy()`) as it is read back, with the text it completes. `runId` names
   * it for `cancel`, which stops it between two tokens. A model without a tokenizer, or a prompt
   * past the model's context, rejects with an InputError before anything is built.
   */
  generate(
    request: GenerateRequest,
    onEvent?: (e: GenerateEvent) => void,
    runId?: string,
  ): Promise<GenerateResult>;
  /** What run `runId`'s probe gave (given once, then forgotten); null when it took none. */
  takeProbe(runId: string): Promise<ProbeOutcome | null>;
  /**
   * Cancels run `runId` at its next check. A cancel that arrives before its run has started is
   * kept, and that run starts cancelled: it resolves at once with no points. Without an id, every
   * running run is cancelled.
   */
  cancel(runId?: string): Promise<void>;
}

export type { EngineErrorName } from '../errors.ts';

/** An error as it crosses a boundary (comlink, or the Node host's IPC): plain, clonable data. */
export interface SerializedError {
  isError: true;
  name: string;
  message: string;
  stack?: string;
  /** Own enumerable fields, e.g. KvCacheExhaustedError's `needed` and `free`. */
  fields: Record<string, unknown>;
}

export function serializeError(thrown: unknown): SerializedError {
  const err = thrown instanceof Error ? thrown : new Error(String(thrown));
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') fields[k] = v;
  }
  return { isError: true, name: err.name, message: err.message, stack: err.stack, fields };
}

/**
 * A real Error (so structured clone, DevTools and Playwright treat it as one), given the engine
 * class's prototype so `instanceof` holds, without re-running the class's constructor.
 */
export function deserializeError(s: SerializedError): Error {
  const cls = (ENGINE_ERRORS as Record<string, { prototype: Error }>)[s.name];
  const err = new Error(s.message);
  if (cls) Object.setPrototypeOf(err, cls.prototype);
  Object.assign(err, s.fields);
  Object.defineProperty(err, 'message', { value: s.message, enumerable: false, writable: true });
  if (!cls) Object.defineProperty(err, 'name', { value: s.name, enumerable: false, writable: true });
  if (s.stack) Object.defineProperty(err, 'stack', { value: s.stack, enumerable: false, writable: true });
  return err;
}

/**
 * Replaces comlink's throw handler on both sides: a thrown engine error is rebuilt as the same
 * class (prototype and fields restored, constructor not re-run), anything else as a plain Error
 * with its name and message. Must be called in the worker and in the caller before first use.
 */
export function installErrorTransfer(): void {
  const handler = transferHandlers.get('throw');
  if (!handler) return;
  transferHandlers.set('throw', {
    canHandle: handler.canHandle,
    serialize(thrown: unknown) {
      return [serializeError((thrown as { value: unknown }).value), []];
    },
    deserialize(serialized: unknown): never {
      throw deserializeError(serialized as SerializedError);
    },
  });
}
