import { seededData } from '../../src/checks/case.ts';
import { type CaseName, type CaseSpec, kernelCase } from '../../src/checks/catalogue.ts';
import { seededPacked } from '../../src/checks/packed-weights.ts';
import type { Gpu } from '../../src/gpu/device.ts';
import type { PipelineCache } from '../../src/gpu/pipelines.ts';
import type { KernelContext } from '../../src/kernels/kernel.ts';
import { PackedGemvKernel } from '../../src/kernels/packed.ts';
import type { Comparison } from '../../src/kernels/reference.ts';
import { KernelRig } from '../../src/kernels/rig.ts';
import type { PackedGemvVariant } from '../../src/kernels/variants.ts';
import type { PackedFormat } from '../../src/weight-format.ts';

/** What a kernel check returns to the Playwright test: the comparison, without the big arrays. */
export interface CheckResult extends Comparison {
  kernel: string;
  variant: string;
  /** The spec the test asked for, as JSON, so a failure message says exactly what ran. */
  shape: string;
}

/** Whether a batched GEMV's rows are, bit for bit, the rows computed one at a time. */
export interface BatchInvariance {
  /** Rows compared (the batch M). */
  rows: number;
  /** Outputs whose f32 bits differ between the batch and the row alone. */
  differing: number;
  /** The first difference, as (row, column, batched value, alone value). */
  first?: { row: number; column: number; batched: number; alone: number };
}

/** Runs catalogue cases at the shapes the browser tests choose. */
export class KernelChecks {
  private readonly ctx: KernelContext;

  constructor(
    private readonly gpu: Gpu,
    pipelines: PipelineCache,
  ) {
    this.ctx = { gpu, pipelines };
  }

  /** The device's features, for a test whose expectation depends on one (shader-f16). */
  features(): string[] {
    return this.gpu.features;
  }

  /**
   * Runs a packed GEMV over M seeded rows at once, then each row alone (a batch-1 pipeline), and
   * compares the outputs' bits: the speculative verify pass relies on a row computed in a batch
   * being exactly the row computed alone.
   */
  async packedBatchInvariance(spec: {
    format: PackedFormat;
    variant: PackedGemvVariant;
    M: number;
    N: number;
    K: number;
  }): Promise<BatchInvariance> {
    const { format, variant, M, N, K } = spec;
    const rig = new KernelRig(this.gpu, 'kernel check: packed gemv batch invariance');
    try {
      const { packed } = seededPacked(format, N, K, 21, (n) => seededData(n, 21));
      const w = rig.output(packed.words.length);
      this.gpu.device.queue.writeBuffer(w, 0, packed.words);
      const scales = format === 'f16' ? undefined : rig.output(packed.scales.length);
      if (scales) this.gpu.device.queue.writeBuffer(scales, 0, packed.scales);
      const x = seededData(M * K, 20);
      const batched = await PackedGemvKernel.create(this.ctx, format, variant, M);
      const alone = await PackedGemvKernel.create(this.ctx, format, variant, 1);
      const yBatch = rig.output(M * N);
      await rig.run(rig.own(batched.call({ x: rig.input(x), w, scales, y: yBatch, M, N, K })));
      const gotValues = await rig.read(yBatch, M * N);
      const got = new Uint32Array(gotValues.buffer, gotValues.byteOffset, M * N);
      const result: BatchInvariance = { rows: M, differing: 0 };
      for (let r = 0; r < M; r++) {
        const y = rig.output(N);
        const xRow = rig.input(x.slice(r * K, (r + 1) * K));
        await rig.run(rig.own(alone.call({ x: xRow, w, scales, y, M: 1, N, K })));
        const want = await rig.read(y, N);
        const bits = new Uint32Array(want.buffer, want.byteOffset, N);
        for (let c = 0; c < N; c++) {
          if (got[r * N + c] === bits[c]) continue;
          result.differing++;
          result.first ??= { row: r, column: c, batched: gotValues[r * N + c], alone: want[c] };
        }
      }
      return result;
    } finally {
      rig.destroy();
    }
  }

  async check<N extends CaseName>(name: N, spec: CaseSpec<N>): Promise<CheckResult> {
    const kase = kernelCase(this.ctx, name, spec);
    const rig = new KernelRig(this.gpu, `kernel check: ${kase.op}`);
    try {
      const { setup, check } = await kase.prepare(rig);
      await rig.run(...setup);
      const result = await check();
      return { kernel: kase.op, variant: kase.variant, shape: JSON.stringify(spec), ...result };
    } finally {
      rig.destroy();
    }
  }
}
