import { GpuValidationError } from '../errors.ts';
import { assertAlive, type Gpu, withErrorScopes } from './device.ts';

/**
 * Usage sets we allocate; named so the pool can reuse a released buffer only for the same purpose.
 * Getters, so nothing reads the GPUBufferUsage global when this module loads: in Node, Dawn
 * installs that global, and a bundle may evaluate this module before it does.
 */
export const BufferUsage = {
  /** Kernel inputs and outputs that we may also fill from the CPU. */
  get storage() {
    return GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  },
  /** Small per-call parameter blocks. */
  get uniform() {
    return GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
  },
  /** CPU-visible copies of results. */
  get readback() {
    return GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
  },
};

/** Bytes of uploads the queue may hold before a write waits for it (see BufferPool.write). */
const STAGED_MAX = 64 << 20;

/** Buffers are padded to 16 bytes so any binding can be read as vec4 without going out of range. */
const ALIGN = 16;

export function alignedSize(bytes: number): number {
  return Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
}

/**
 * A labelled buffer pool that owns every buffer it hands out, so a model frees them all at once.
 * Long-lived buffers (weights, KV pools) are allocated with error scopes so an OOM names the
 * tensor. Temporary buffers are released back and reused by size and usage, so repeated passes do
 * not churn the allocator.
 */
export class BufferPool {
  private readonly live = new Set<GPUBuffer>();
  private readonly free = new Map<string, GPUBuffer[]>();
  /** Bytes written since the queue was last waited for (write). */
  private staged = 0;

  constructor(private readonly gpu: Gpu) {}

  /** Allocates under error scopes; an OOM or validation error becomes a typed error naming `label`. */
  async allocate(
    label: string,
    bytes: number,
    usage: GPUBufferUsageFlags = BufferUsage.storage,
  ): Promise<GPUBuffer> {
    const size = alignedSize(bytes);
    const buffer = await withErrorScopes(this.gpu, `buffer "${label}" (${size} bytes)`, () =>
      this.gpu.device.createBuffer({ label, size, usage }),
    );
    this.live.add(buffer);
    return buffer;
  }

  /** Allocates and fills a storage buffer from CPU data. */
  async upload(label: string, data: ArrayBufferView, usage: GPUBufferUsageFlags = BufferUsage.storage) {
    const buffer = await this.allocate(label, data.byteLength, usage);
    this.gpu.device.queue.writeBuffer(
      buffer,
      0,
      data.buffer as ArrayBuffer,
      data.byteOffset,
      data.byteLength,
    );
    return buffer;
  }

  /**
   * Writes `data` at byte `offset` of `buffer`, one chunk of a weight uploaded a few rows at a time.
   * The queue copies the data before this returns, so the caller may drop it; every 64 MiB this
   * waits for the queue, so a gigabyte upload never stages more than that at once.
   */
  async write(buffer: GPUBuffer, offset: number, data: ArrayBufferView): Promise<void> {
    this.gpu.device.queue.writeBuffer(
      buffer,
      offset,
      data.buffer as ArrayBuffer,
      data.byteOffset,
      data.byteLength,
    );
    this.staged += data.byteLength;
    if (this.staged >= STAGED_MAX) {
      this.staged = 0;
      await this.gpu.device.queue.onSubmittedWorkDone();
    }
  }

  /**
   * A buffer for one pass, reused from earlier released ones of the same size class and usage.
   * Sizes are rounded up to a power of two so a sweep over L does not allocate at every point.
   * No error scope here: acquire is on the hot path, and the pass that uses it is checked.
   */
  acquire(label: string, bytes: number, usage: GPUBufferUsageFlags = BufferUsage.storage): GPUBuffer {
    assertAlive(this.gpu);
    const limit = this.gpu.limits.maxStorageBufferBindingSize;
    if (usage & GPUBufferUsage.STORAGE && alignedSize(bytes) > limit) {
      throw new GpuValidationError(
        `Buffer "${label}" needs ${bytes} bytes, over maxStorageBufferBindingSize ${limit}`,
      );
    }
    // A size class past the binding limit is clipped to it; the key is the size actually created,
    // the one `release` files it under, so clipped buffers are reused like any other.
    const size = Math.min(2 ** Math.ceil(Math.log2(alignedSize(bytes))), limit);
    const key = `${usage}:${size}`;
    const reused = this.free.get(key)?.pop();
    if (reused) {
      reused.label = label;
      return reused;
    }
    const buffer = this.gpu.device.createBuffer({ label, size, usage });
    this.live.add(buffer);
    return buffer;
  }

  release(buffer: GPUBuffer): void {
    const key = `${buffer.usage}:${buffer.size}`;
    const list = this.free.get(key) ?? [];
    list.push(buffer);
    this.free.set(key, list);
  }

  destroyAll(): void {
    for (const buffer of this.live) buffer.destroy();
    this.live.clear();
    this.free.clear();
  }
}

/** Copies a GPU buffer range into a new Float32Array (one map; use sparingly, it stalls the queue). */
export async function readFloat32(
  gpu: Gpu,
  source: GPUBuffer,
  bytes: number,
  offset = 0,
): Promise<Float32Array> {
  return new Float32Array(await readBytes(gpu, source, bytes, offset));
}

export async function readBytes(
  gpu: Gpu,
  source: GPUBuffer,
  bytes: number,
  offset = 0,
): Promise<ArrayBuffer> {
  assertAlive(gpu);
  const size = alignedSize(bytes);
  const staging = gpu.device.createBuffer({
    label: `readback(${source.label})`,
    size,
    usage: BufferUsage.readback,
  });
  const encoder = gpu.device.createCommandEncoder({ label: 'readback' });
  encoder.copyBufferToBuffer(source, offset, staging, 0, Math.min(size, source.size - offset));
  gpu.device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const copy = staging.getMappedRange(0, bytes).slice(0);
  staging.unmap();
  staging.destroy();
  return copy;
}
