/**
 * How dawn.node's wait for the GPU costs, with and without the naps of src/runtime/node/dawn-poll.ts:
 * one long dispatch (1,024 workgroups of a 20,000-step loop) and its readback, timed on the wall
 * clock with the process's CPU time beside it. Run it both ways:
 *
 *   npx tsx bench/dawn-poll-probe.ts                      # with the naps (what the engine does)
 *   BENCH_DAWN_SPIN=1 npx tsx bench/dawn-poll-probe.ts    # dawn.node's own spinning poll
 *
 * (with VK_ICD_FILENAMES and LD_LIBRARY_PATH set for SwiftShader as docs/ci-and-native.md says).
 */
import { dawnInstance } from '../src/runtime/node/dawn-globals.ts';

const CODE = `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  var s = 0.0;
  for (var i = 0u; i < 20000u; i++) { s += sin(f32(i + id.x)); }
  out[id.x] = s;
}`;

const adapter = await dawnInstance('vulkan').requestAdapter();
if (!adapter) throw new Error('no adapter: see docs/ci-and-native.md');
const device = await adapter.requestDevice();
const pipeline = await device.createComputePipelineAsync({
  layout: 'auto',
  compute: { module: device.createShaderModule({ code: CODE }), entryPoint: 'main' },
});
const bytes = 4 * 64 * 1024;
const out = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const bindGroup = device.createBindGroup({
  layout: pipeline.getBindGroupLayout(0),
  entries: [{ binding: 0, resource: { buffer: out } }],
});
for (let rep = 0; rep < 3; rep++) {
  const readback = device.createBuffer({
    size: bytes,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(1024);
  pass.end();
  encoder.copyBufferToBuffer(out, 0, readback, 0, bytes);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  device.queue.submit([encoder.finish()]);
  await readback.mapAsync(GPUMapMode.READ);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  readback.destroy();
  console.log(
    `${process.env.BENCH_DAWN_SPIN === '1' ? 'spinning' : 'napping'}: wall ${wallMs.toFixed(0)} ms, process CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`,
  );
}
device.destroy();
process.exit(0);
