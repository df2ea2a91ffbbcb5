/**
 * The packed decode GEMV (cols family, 8 columns, workgroups of 16, batch 1) per weight format on
 * one device, each checked against the float64 reference first, then timed round-robin over the
 * formats (20 dispatches a submit, `ROUNDS` rounds) so drift hits each alike: min and median wall
 * time per call, and the min as a multiple of the first format's (docs/gguf.md, "Speed").
 *
 *   VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json LD_LIBRARY_PATH=/usr/lib/chromium \
 *     node --import ./bench/probes/raw.mjs --import tsx bench/probes/packed-gemv.ts q4_0,q5_0,q4_k,q6_k,q8_0 576x1536
 *
 * K-quant formats are skipped at a K that is no whole number of 256-weight blocks.
 */
import { packedGemvCase } from '../../src/checks/packed.ts';
import { acquireGpu } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import { KernelRig } from '../../src/kernels/rig.ts';
import { dawnInstance } from '../../src/runtime/node/dawn-globals.ts';
import type { PackedFormat } from '../../src/weight-format.ts';

const gpu = await acquireGpu({ gpu: dawnInstance('vulkan') });
const pipelines = new PipelineCache(gpu);
const formats = (process.argv[2] ?? 'q4_0,q5_0,q4_k,q6_k,q8_0').split(',') as PackedFormat[];
const shapes = (process.argv[3] ?? '3072x576,576x1536').split(',').map((t) => t.split('x').map(Number));
const rounds = Number(process.env.ROUNDS ?? 12);
const REPS = 20;
for (const [N, K] of shapes) {
  const items = [];
  for (const format of formats) {
    if (format.endsWith('_k') && K % 256) continue;
    const kase = packedGemvCase(
      { gpu, pipelines },
      { format, M: 1, N, K, variant: { family: 'cols', cols: 8, wg: 16 } },
    );
    const rig = new KernelRig(gpu, 'packed gemv probe');
    const { setup, call, check } = await kase.prepare(rig);
    await rig.run(...setup);
    const r = await check();
    if (!r.passed)
      throw new Error(`${format} ${N}x${K}: differs from the reference (max abs err ${r.maxAbsErr})`);
    items.push({ format, rig, call, t: [] as number[] });
  }
  for (let round = 0; round < rounds; round++) {
    for (const it of items) {
      const t0 = performance.now();
      await it.rig.run(...Array(REPS).fill(it.call));
      it.t.push((performance.now() - t0) / REPS);
    }
  }
  const base = Math.min(...items[0].t);
  for (const it of items) {
    it.t.sort((a, b) => a - b);
    console.log(
      `${it.format.padEnd(5)} N=${N} K=${K}: min ${it.t[0].toFixed(3)} ms, median ${it.t[it.t.length >> 1].toFixed(3)} ms, ×${(it.t[0] / base).toFixed(2)} of ${items[0].format}`,
    );
    it.rig.destroy();
  }
}
process.exit(0);
