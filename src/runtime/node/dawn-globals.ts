/**
 * Dawn's WebGPU globals (GPUBufferUsage, GPUMapMode, the GPU*Error classes, …), installed when this
 * module loads, before any engine call uses them. No engine module reads them at load time
 * (BufferUsage is getters), so the order a bundle evaluates modules in does not matter.
 */
import { create, globals } from 'webgpu';
import { installDawnPollNaps } from './dawn-poll.ts';

Object.assign(globalThis, globals);

/**
 * Dawn instances, held for the life of the process. dawn.node keeps polling an instance for events
 * (map and work-done callbacks); once its JS object is collected, that poll touches a freed instance
 * and the process crashes (a futex error, or an abort in a mutex). A local that goes out of scope
 * after requestAdapter is exactly that, so every instance is kept here.
 */
const instances: GPU[] = [];

/**
 * A Dawn instance on `backend` ('vulkan', 'metal', 'd3d12'), kept alive until the process exits.
 * Dawn quantizes timestamps by default: on SwiftShader every span read a multiple of 65,536 ns
 * (webgpu 0.6.2), so a kernel shorter than that read 0 or 65.5 µs, by where the tick fell. Its
 * toggle is turned off here, as the CLI's Chromium runs with WebGPU developer features
 * (bench/browser.ts): both runtimes time with the same resolution.
 */
export function dawnInstance(backend: string): GPU {
  installDawnPollNaps();
  const instance = create([`backend=${backend}`, 'disable-dawn-features=timestamp_quantization']);
  instances.push(instance);
  return instance;
}
