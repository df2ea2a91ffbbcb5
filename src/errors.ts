/**
 * Every error the engine throws, in one place. Each class has a stable `name`, so it keeps its
 * identity across the worker boundary (see worker/api.ts) and lands in a result as
 * `error: {name, message}`; its message tells a person what happened and what to do.
 *
 * Three kinds, kept apart on purpose:
 * - bad input (a spec, a config, a file, a token): the caller can fix it;
 * - the device or the browser (no WebGPU, a lost device, out of memory, over a limit): the machine;
 * - the engine's own bugs (a shader WebGPU rejects, a result its own schema rejects, a kernel that
 *   disagrees with the CPU reference): ours to fix.
 */

// ---------------------------------------------------------------------------------------------
// Bad input

/** A benchmark spec that does not validate. */
export class SpecError extends Error {
  override readonly name = 'SpecError';
}

/** A model config that does not validate; the message names every bad field. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** A caller's mistake (bad token id, sequence too long, batch too large), as opposed to an engine bug. */
export class InputError extends Error {
  override readonly name = 'InputError';
}

/** A safetensors file is malformed or holds something we cannot load; the message names the file. */
export class SafetensorsError extends Error {
  override readonly name = 'SafetensorsError';
}

/** A checkpoint's tensors do not match its config: a tensor missing or shaped wrongly. */
export class WeightsError extends Error {
  override readonly name = 'WeightsError';
}

/**
 * A model file's tokenizer cannot be used: a key missing or of the wrong type, a merge naming an
 * unknown token, a tokenizer or pre-tokenizer this engine does not implement. The message names
 * the key (and the element) at fault.
 */
export class TokenizerError extends Error {
  override readonly name = 'TokenizerError';
}

// ---------------------------------------------------------------------------------------------
// The device and the browser

/** `navigator.gpu` is missing: wrong browser, WebGPU disabled, or not a secure context. */
export class WebGpuUnavailableError extends Error {
  override readonly name = 'WebGpuUnavailableError';
}

/** The browser has WebGPU but gave no adapter (blocklisted GPU, no driver, or headless without flags). */
export class NoAdapterError extends Error {
  override readonly name = 'NoAdapterError';
}

/** The device was lost mid-run (driver reset, TDR, tab backgrounded too long, or destroy()). */
export class DeviceLostError extends Error {
  override readonly name = 'DeviceLostError';
}

/** An allocation failed for lack of GPU memory. */
export class GpuOutOfMemoryError extends Error {
  override readonly name = 'GpuOutOfMemoryError';
}

/** A model or run does not fit the device limits; raised before anything is allocated. */
export class DeviceLimitError extends Error {
  override readonly name = 'DeviceLimitError';
}

/** What an append that could not fit needed and found; carried by `KvCacheExhaustedError`. */
export interface KvCacheExhaustion {
  /** The sequence whose append failed. */
  readonly sequence: number;
  /** Pages the append needed: new pages plus a copy-on-write page. */
  readonly needed: number;
  /** Pages that were free. */
  readonly free: number;
  readonly totalPages: number;
  readonly pageSize: number;
  /** Live sequences, which between them hold every used page. */
  readonly liveSequences: number;
}

/**
 * An append needs more KV pages than are free. The allocator is left exactly as it was, so a
 * scheduler can catch this, preempt or wait, and retry.
 */
export class KvCacheExhaustedError extends Error {
  override readonly name = 'KvCacheExhaustedError';
  readonly sequence: number;
  readonly needed: number;
  readonly free: number;

  constructor(e: KvCacheExhaustion) {
    super(
      `KV cache exhausted: sequence ${e.sequence} needs ${e.needed} more pages of ${e.pageSize} tokens ` +
        `but only ${e.free} of ${e.totalPages} pages are free ` +
        `(${e.liveSequences} sequences hold ${e.totalPages - e.free} pages)`,
    );
    this.sequence = e.sequence;
    this.needed = e.needed;
    this.free = e.free;
  }
}

/** The run was cancelled (the Cancel button, Ctrl-C, or an AbortSignal); its finished records are kept. */
export class CancelledError extends Error {
  override readonly name = 'CancelledError';
}

// ---------------------------------------------------------------------------------------------
// The engine's own bugs

/** WebGPU rejected a call or a shader: a bug in the engine, not in the input. */
export class GpuValidationError extends Error {
  override readonly name = 'GpuValidationError';
}

/** A kernel asked for something it cannot do: a shape past its limits, or a family this adapter lacks. */
export class KernelError extends Error {
  override readonly name = 'KernelError';
}

/** The GPU's output disagrees with the CPU reference: nothing is timed after this. */
export class ReferenceMismatchError extends Error {
  override readonly name = 'ReferenceMismatchError';
}

/** An invariant of the engine broke (e.g. a workload that needs the model got none): a bug. */
export class InternalError extends Error {
  override readonly name = 'InternalError';
}

/** The engine produced a result its own schema rejects: a bug, distinct from bad input. */
export class ResultValidationError extends Error {
  override readonly name = 'ResultValidationError';
}

/** Every engine error class by name: how errors are rebuilt on the far side of the worker boundary. */
export const ENGINE_ERRORS = {
  SpecError,
  ConfigError,
  InputError,
  SafetensorsError,
  WeightsError,
  TokenizerError,
  WebGpuUnavailableError,
  NoAdapterError,
  DeviceLostError,
  GpuOutOfMemoryError,
  DeviceLimitError,
  KvCacheExhaustedError,
  CancelledError,
  GpuValidationError,
  KernelError,
  ReferenceMismatchError,
  InternalError,
  ResultValidationError,
} as const;

export type EngineErrorName = keyof typeof ENGINE_ERRORS;

/** `{name, message}` of anything thrown, as a result records it. */
export function errorRecord(e: unknown): { name: string; message: string } {
  if (e instanceof Error) return { name: e.name, message: e.message };
  return { name: 'Error', message: String(e) };
}
