import { alignedSize, BufferUsage, readBytes } from '../gpu/buffers.ts';
import type { Gpu } from '../gpu/device.ts';
import { BYTES } from '../weight-format.ts';
import { disposeCalls, encodeCall, type KernelCall } from './kernel.ts';

/**
 * Inputs, outputs and untimed runs for kernels called one at a time, outside a model: what the
 * kernel cases, the browser tests, the kernel suite and the autotuner share. It owns every buffer
 * it makes and every call handed to `own`, and frees them all in `destroy`.
 */
export class KernelRig {
  private readonly buffers: GPUBuffer[] = [];
  private readonly calls: KernelCall[] = [];

  constructor(
    readonly gpu: Gpu,
    /** Names this rig's buffers and passes, so a validation error says who made them. */
    private readonly label: string,
  ) {}

  /** An f32 storage buffer holding `values`. */
  input(values: Float32Array<ArrayBuffer>): GPUBuffer {
    const b = this.output(values.length);
    this.write(b, values);
    return b;
  }

  /** A u32 storage buffer (token ids, positions, slots, block tables). */
  inputU32(values: readonly number[]): GPUBuffer {
    const b = this.output(values.length);
    this.gpu.device.queue.writeBuffer(b, 0, new Uint32Array(values));
    return b;
  }

  /** A zeroed storage buffer of `elements` 4-byte values. */
  output(elements: number): GPUBuffer {
    const b = this.gpu.device.createBuffer({
      label: `${this.label} buffer ${this.buffers.length}`,
      size: alignedSize(elements * BYTES.f32),
      usage: BufferUsage.storage,
    });
    this.buffers.push(b);
    return b;
  }

  /** Overwrites a buffer from its start: restores an input that a kernel updates in place. */
  write(b: GPUBuffer, values: Float32Array<ArrayBuffer>): void {
    this.gpu.device.queue.writeBuffer(b, 0, values);
  }

  /** The first `elements` f32 values of a buffer. */
  async read(b: GPUBuffer, elements: number): Promise<Float32Array> {
    return new Float32Array(await readBytes(this.gpu, b, elements * BYTES.f32));
  }

  /** The first `elements` u32 values of a buffer. */
  async readU32(b: GPUBuffer, elements: number): Promise<Uint32Array> {
    return new Uint32Array(await readBytes(this.gpu, b, elements * BYTES.u32));
  }

  /** Takes ownership of a call's parameter buffers, freed with the rig. */
  own(call: KernelCall): KernelCall {
    this.calls.push(call);
    return call;
  }

  /** Runs calls in order in one compute pass and waits for the GPU to finish them. */
  async run(...calls: readonly KernelCall[]): Promise<void> {
    if (calls.length === 0) return;
    const encoder = this.gpu.device.createCommandEncoder({ label: this.label });
    const pass = encoder.beginComputePass({ label: this.label });
    for (const call of calls) encodeCall(pass, call);
    pass.end();
    this.gpu.device.queue.submit([encoder.finish()]);
    await this.gpu.device.queue.onSubmittedWorkDone();
  }

  destroy(): void {
    disposeCalls(this.calls);
    for (const b of this.buffers) b.destroy();
    this.calls.length = 0;
    this.buffers.length = 0;
  }
}
