import type { Gpu } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipelines.ts';
import { type CaseName, type CaseSpec, kernelCase } from '../../src/kernels/cases/catalogue.ts';
import type { KernelContext } from '../../src/kernels/kernel.ts';
import { KernelRig } from '../../src/kernels/rig.ts';
import type { Comparison } from '../../src/model/reference.ts';

/** What a kernel check returns to the Playwright test: the comparison, without the big arrays. */
export interface CheckResult extends Comparison {
  kernel: string;
  variant: string;
  /** The spec the test asked for, as JSON, so a failure message says exactly what ran. */
  shape: string;
}

/** Runs catalogue cases at the shapes the browser tests choose. */
export class KernelChecks {
  private readonly ctx: KernelContext;

  constructor(private readonly gpu: Gpu) {
    this.ctx = { gpu, pipelines: new PipelineCache(gpu) };
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
