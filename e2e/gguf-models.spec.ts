import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DEFAULT_VARIANTS, defaultVariants } from '../src/kernels/variants.ts';
import { ARCHITECTURES } from '../src/model/config.ts';
import { makeGgufFixtures, PURE_FTYPES } from '../test-support/gguf-fixtures.ts';
import { expect, test } from './harness/client.ts';

/**
 * GGUF files as llama.cpp's own quantizer makes them, every block type and the Q4_K_M mix, in each
 * architecture, against the float64 CPU forward on the file's exact dequantization (ggml's, bit
 * for bit: src/quant). Natively only: the same shaders on the same adapter as the browser's. Every
 * file runs the unfused graph on the GPU defaults (the reduce GEMV); Q4_K_M also runs the fused
 * graph on the families that fuse (the software adapter's defaults: register tiles and the cols
 * GEMV), which splits a layer's q/k/v where they mix types. Each type's snippet is checked in
 * every kernel family, with the fusions, by gguf-kernels.spec.ts: pipelines compile slowly on
 * SwiftShader, so the model runs each type's in one graph.
 *
 * A block type reads the same in every architecture (the linear kernels do not know the graph),
 * and what an architecture changes (qwen2's biases, qwen3's head norms, their place in the fused
 * RoPE + KV write) is in F32 tensors: every block type runs in llama, and qwen2 and qwen3 run the
 * Q4_K_M mix, unfused and fused.
 */

const prompt = [1, 17, 42, 7, 99, 3, 5, 250];

for (const arch of ARCHITECTURES) {
  const everyType = arch === 'llama';
  test(`${arch}: ${everyType ? 'every GGUF block type and ' : ''}Q4_K_M against the exact dequantization (|Δ log p| ≤ 1e-3, top-1 100%)`, async ({
    harness,
  }) => {
    test.setTimeout(240_000);
    const dir = mkdtempSync(join(tmpdir(), `gguf-${arch}-`));
    const files = makeGgufFixtures(dir, arch, [
      ...(everyType ? PURE_FTYPES.map((ftype) => ({ ftype, pure: true })) : []),
      { ftype: 'Q4_K_M', pure: false },
    ]);
    const seen = new Set<string>();
    const before = await harness.call('model', 'currentVariants');
    const runs = [
      ...files.map((f) => ({ f, fused: false })),
      ...files.filter((f) => f.ftype === 'Q4_K_M').map((f) => ({ f, fused: true })),
    ];
    for (const { f, fused } of runs) {
      await harness.call('model', 'useVariants', fused ? defaultVariants(true) : DEFAULT_VARIANTS);
      const bytes = readFileSync(f.path).toString('base64');
      const r = await harness.call('model', 'ggufVsReference', bytes, basename(f.path), prompt, 2);
      expect(r.fused).toBe(fused);
      const what = `${basename(f.path)}: ${JSON.stringify({ ...r, recorded: undefined, assumed: undefined })}`;
      expect(r.arch, what).toBe(arch);
      expect(r.rows, what).toBe(prompt.length + 2);
      expect(r.maxLogpDiff, what).toBeLessThanOrEqual(1e-3);
      expect(r.top1, what).toBe(r.rows);
      expect(r.recorded, what).toEqual(r.assumed);
      for (const format of r.formats) seen.add(format);
      if (process.env.GGUF_REPORT)
        console.log(
          `${basename(f.path)} fused=${r.fused} maxLogpDiff=${r.maxLogpDiff.toExponential(2)} top1=${r.top1}/${r.rows}`,
        );
      // The mix is a mix: Q4_K with Q6_K (here, where every width is a whole number of K blocks).
      if (f.ftype === 'Q4_K_M') expect(r.formats, what).toEqual(['q4_k', 'q6_k']);
      // llama's Q4_K_M keeps layer 0's v in Q6_K beside Q4_K q and k: that layer's attention runs split.
      if (fused && arch === 'llama')
        expect(r.layerKinds, what).toContainEqual({ attn: 'split', mlp: 'fused' });
    }
    await harness.call('model', 'useVariants', before);
    if (!everyType) return;
    expect([...seen].sort()).toEqual([
      'q2_k',
      'q3_k',
      'q4_0',
      'q4_1',
      'q4_k',
      'q5_0',
      'q5_1',
      'q5_k',
      'q6_k',
      'q8_0',
    ]);
  });
}
