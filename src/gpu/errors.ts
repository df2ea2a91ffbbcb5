/**
 * Typed GPU errors. Each has a stable `name` so it survives the worker boundary (see worker/api.ts)
 * and a message that tells a person what happened and what to do.
 */

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

/** WebGPU rejected a call or a shader; this is a bug in the engine, not in the input. */
export class GpuValidationError extends Error {
  override readonly name = 'GpuValidationError';
}

/** A model or run does not fit the device limits; raised before anything is allocated. */
export class DeviceLimitError extends Error {
  override readonly name = 'DeviceLimitError';
}
