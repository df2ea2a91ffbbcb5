import type { Gpu } from '../../src/gpu/device.ts';
import type { PipelineCache } from '../../src/gpu/pipelines.ts';
import { DEFAULT_VARIANTS, type KernelVariants } from '../../src/kernels/variants.ts';
import { autotune } from '../../src/measure/autotune.ts';
import { presetConfig } from '../../src/model/config.ts';
import { Model } from '../../src/model/forward.ts';
import { randomWeights } from '../../src/model/weights.ts';
import { type ArmOptions, runArm } from '../../src/serve/driver.ts';
import { promptTokenIds, type TraceRequest } from '../../src/serve/traffic.ts';

export interface ServeScenario {
  trace: TraceRequest[];
  kvTokens: number;
  pageSize: number;
  arm: Omit<ArmOptions, 'concurrency'>;
}

/**
 * The load test's correctness on the real engine: a trace runs through the scheduler and
 * Model.step, then every request runs alone (one prefill of its prompt, then its decode steps on an
 * idle model without a prefix cache); each request's tokens must equal its solo tokens exactly.
 * The result also says what happened (chunked prompts, preemptions, prefix hits, static batches),
 * so a test can assert that the path it means to check was taken.
 */
export class ServeChecks {
  private variants: KernelVariants = DEFAULT_VARIANTS;

  constructor(
    private readonly gpu: Gpu,
    private readonly pipelines: PipelineCache,
  ) {}

  /** The families the autotuner picks here (the default ones are slow on a CPU adapter). */
  async useAutotuned(): Promise<void> {
    this.variants = (await autotune(this.gpu, this.pipelines, presetConfig('ci-tiny'), [1, 8])).variants;
  }

  async servedVsAlone(s: ServeScenario) {
    const config = presetConfig('ci-tiny');
    const weights = randomWeights(config, 3);
    const build = (capacityTokens: number, prefixCache: boolean) =>
      Model.create(this.gpu, weights, {
        kv: { mode: 'paged', pageSize: s.pageSize, capacityTokens, prefixCache },
        maxBatch: s.arm.maxBatch,
        pipelines: this.pipelines,
        variants: this.variants,
      });
    const prompts = new Map(s.trace.map((r) => [r.id, promptTokenIds(r, config.vocabSize, 5)]));
    const served = await build(s.kvTokens, s.arm.prefixCache);
    const run = await runArm(
      served,
      s.trace,
      prompts,
      { ...s.arm, concurrency: null },
      new AbortController().signal,
      () => {},
    );
    served.destroy();
    if (run.stoppedBy !== undefined) throw run.stoppedBy;

    const alone = await build(4096, false);
    const identical: boolean[] = [];
    for (const r of s.trace) {
      const seq = alone.createSequence();
      const out = [(await alone.prefill([{ seq, tokens: prompts.get(r.id) ?? [] }], 'none'))[0].nextToken];
      while (out.length < r.outputTokens)
        out.push((await alone.decode([{ seq, token: out[out.length - 1] }])).nextTokens[0]);
      alone.freeSequence(seq);
      const got = run.tokens.get(r.id) ?? [];
      identical.push(got.length === out.length && got.every((t, i) => t === out[i]));
    }
    alone.destroy();

    // Static batching: a stay may start only when no earlier-started stay is still running.
    const stays = [...run.slots].sort((a, b) => a.startMs - b.startMs);
    const joinedRunningBatch = stays.some((x) =>
      stays.some((y) => y.startMs < x.startMs && y.endMs > x.startMs),
    );
    return {
      identical,
      states: run.records.map((r) => r.status),
      preemptions: run.records.reduce((n, r) => n + r.preemptions, 0),
      prefixHitTokens: run.records.reduce((n, r) => n + r.prefixHitTokens, 0),
      replayMismatches: run.replayMismatches,
      /** Steps that ran decode rows and prompt chunks together. */
      mixedSteps: run.timeline.filter((t) => t.decodeRows > 0 && t.prefillTokens > 0).length,
      /** Requests whose prompt took more than one step. */
      chunkedPrompts: s.trace.filter((r) => r.promptTokens - 0 > s.arm.tokenBudget).length,
      maxRunning: Math.max(...run.timeline.map((t) => t.running)),
      joinedRunningBatch,
    };
  }
}
