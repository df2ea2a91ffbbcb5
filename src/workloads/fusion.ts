import { kvCapacityTokens } from '../kv/cache.ts';
import type { Graph } from '../measure/cost.ts';
import { Model } from '../model/forward.ts';
import { validateModel } from '../model/verify.ts';
import { decodePrompt, VALIDATION_TOKENS } from '../spec/workload.ts';
import { decodeSweep } from './decode.ts';
import { type FusionRecord, fusionSummary, fusionTarget } from './fusion-section.ts';
import { prefillSweep } from './prefill.ts';
import { promptTokens } from './prompts.ts';
import type { WorkloadContext, WorkloadEngine, WorkloadRunner } from './workload.ts';

/** The graphs, in the order they are measured: the fused one first, then its reference. */
export const FUSION_GRAPHS: readonly Graph[] = ['fused', 'unfused'];

/**
 * The fused graph against the unfused one, in the same run. For each graph a model is built from
 * the run's weights, kernel families and KV settings, checked against the CPU forward, then timed by
 * the prefill and decode sweeps at one L and one depth (their points carry the graph), and the
 * dispatches the engine recorded in the last prefill and the last decode step are emitted with it.
 * A fused model whose kernel families do not take the fusions runs unfused: it is not measured
 * twice, and the run says why. One model lives at a time.
 */
export const fusionCompare: WorkloadRunner<'fusion', FusionRecord> = async (ctx, w) => {
  const units = FUSION_GRAPHS.length * 2;
  let done = 0;
  for (const graph of FUSION_GRAPHS) {
    ctx.signal.throwIfAborted();
    ctx.progress(done, units, `${graph} graph: building the model`);
    const model = await Model.create(
      ctx.gpu,
      ctx.weights,
      {
        kv: {
          mode: ctx.kv.mode,
          pageSize: ctx.kv.pageSize,
          capacityTokens: kvCapacityTokens(ctx.kv.mode, ctx.kv.pageSize, ctx.config.maxSeqLen, {
            sequences: 1,
            tokens: Math.max(w.length, decodePrompt(w.depth) + w.gen - 1, VALIDATION_TOKENS),
          }),
        },
        maxBatch: 1,
        pipelines: ctx.pipelines,
        variants: ctx.variants,
        fuse: graph === 'fused',
      },
      `${graph} model`,
    );
    try {
      if (model.fused !== (graph === 'fused')) {
        ctx.warn(
          `Fusion workload: the kernel families chosen for this device do not take the fusions, so the fused graph could not be built and was not measured (its model ran unfused).`,
        );
        done += 2;
        ctx.progress(done, units, `${graph} graph: not built`);
        continue;
      }
      const check = await validateModel(
        model,
        ctx.weights,
        promptTokens(VALIDATION_TOKENS, ctx.config.vocabSize, 99),
      );
      for (const c of check.checks) ctx.check({ ...c, name: `${graph} graph: ${c.name}` });
      const sub: WorkloadContext<FusionRecord> = {
        ...ctx,
        model,
        graph,
        progress: (d, t, label) => ctx.progress(done + d / t, units, `${graph} graph: ${label}`),
      };
      const repetitions = { reps: w.reps, warmup: w.warmup, profile: false };
      await prefillSweep(sub, { kind: 'prefill', lengths: [w.length], ...repetitions });
      const prefill = { tokens: w.length, dispatches: { ...model.lastDispatches } };
      ctx.progress(++done, units, `${graph} graph: prefill L=${w.length}`);
      await decodeSweep(sub, { kind: 'decode', depths: [w.depth], gen: w.gen, batch: 1, ...repetitions });
      const decode = { depth: w.depth, dispatches: { ...model.lastDispatches } };
      ctx.progress(++done, units, `${graph} graph: decode at depth ${w.depth}`);
      ctx.emit({
        type: 'fusion',
        graph,
        fused: model.fused,
        layers: ctx.config.numLayers,
        prefill,
        decode,
      });
    } finally {
      model.destroy();
    }
  }
};

/** The fusion workload's engine: its table from each graph's points and the dispatches it recorded. */
export const fusionEngine: WorkloadEngine<'fusion', FusionRecord> = {
  run: fusionCompare,
  describe: (r) => `${r.graph} graph: dispatches recorded`,
  collect: (records, run) => ({ fusion: fusionSummary(run.points, records) }),
  targets: (r) => {
    const t = fusionTarget(r);
    return t ? [t] : [];
  },
};
