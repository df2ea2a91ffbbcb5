/**
 * Dawn's WebGPU globals (GPUBufferUsage, GPUMapMode, the GPU*Error classes, …), installed before
 * any engine module is evaluated: some read them at load time (BufferUsage). Imported first by
 * host.ts for that reason.
 */
import { globals } from 'webgpu';

Object.assign(globalThis, globals);
